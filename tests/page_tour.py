"""One tour of every page and linked view per (language, screen), shared by the browser tests that only look.

Several tests check different things of the same page at the same screen: the axes test (no title on a tick,
no sideways Chinese), the first-screen tests (the main figure, lecture sizes, the navigation, whole figures),
the playground toys' fit and the real model's gates. Each page load on a 2-core machine costs seconds, so the
tour opens each (page, view, language, screen) once, waits for everything any of those tests waits for (the
union of their conditions, in a fixed order, whichever test asks first), takes every test's measurements, and
keeps them; each test then asserts only its own part, so a failure still names the test whose check failed.
Measurements that move the page (a resize, a scroll) come last, after every reading of the page as loaded.

Results: tour.get(lang, screen)[view name] = {"axes": [...], "layout": [...], ...} (see visit()).
"""
from __future__ import annotations

from playwright.sync_api import TimeoutError as PlaywrightTimeout

from devtools.app_server import IDLE, track_runs, wait_for_app, wait_until_settled
from devtools.screens import NO_CHART, shots

# screen -> (width, height, lecture mode)
SCREENS = {"1440x900": (1440, 900, False), "1920x1080": (1920, 1080, True), "1280x720": (1280, 720, True)}
VIEWS = list(shots([], with_views=True))             # (name, address, extra query): every default and linked view
DEFAULT_VIEWS = list(shots([], with_views=False))
# The playground panels whose toys are checked at every screen (the default view is the overwrite panel).
TOY_VIEWS = {"playground", "playground-halflife", "playground-repeat", "playground-knorm"}
NO_MAIN_CHART = {"classroom", "practice"}   # exercise cards come first there, charts only inside the demos; practice: an editor

# -- the axes test's measurement (tests/test_browser_axes.py) ----------------------------------------------------
AXES = r"""() => {
  const CJK = /[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]/;
  const shown = r => r.width > 0.5 && r.height > 0.5;
  const meets = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  const name = e => (e.textContent || '').trim().slice(0, 40);
  // a text's box without its line box's leading (a fifth of its height above and below): where the ink is
  const ink = e => { const r = e.getBoundingClientRect(), d = r.height / 5;
                     return {left: r.left, right: r.right, top: r.top + d, bottom: r.bottom - d, width: r.width, height: r.height}; };
  const problems = [];
  document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot').forEach((plot, i) => {
    const ticks = [...plot.querySelectorAll('g[class$="tick"] text')]
      .map(e => [e, ink(e)]).filter(([e, r]) => shown(r) && name(e));
    // a title of several lines: each line's own box (the text's box also spans the gaps between them)
    const lines = e => { const l = [...e.querySelectorAll('tspan.line')]; return l.length ? l : [e]; };
    const titles = [...plot.querySelectorAll('g[class^="g-"][class$="title"] text, g.annotation text, .cbtitle text')]
      .flatMap(lines).map(e => [e, ink(e)]).filter(([e, r]) => shown(r) && name(e));
    // the y titles drawn horizontally (gdn.figures.common.title_note): just above a plot area's top edge,
    // starting at its left edge or ending a few px left of it
    const areas = [...plot.querySelectorAll('rect.nsewdrag')].map(e => e.getBoundingClientRect());
    const yTitle = r => areas.some(a => r.bottom <= a.top + 2 && r.bottom > a.top - 40 &&
                                        (Math.abs(r.left - a.left) < 3 || Math.abs(r.right - a.left + 6) < 3));
    titles.forEach(([t, tr], j) => {
      for (const [k, kr] of ticks)
        if (meets(tr, kr)) problems.push(`chart ${i}: title "${name(t)}" on tick "${name(k)}"`);
      for (const [u, ur] of titles.slice(j + 1))           // nor a y title on another title (a subplot's)
        if ((yTitle(tr) || yTitle(ur)) && !t.contains(u) && !u.contains(t) && meets(tr, ur))
          problems.push(`chart ${i}: title "${name(t)}" on title "${name(u)}"`);
    });
    for (const e of plot.querySelectorAll('text')) {
      if (!CJK.test(e.textContent || '') || !shown(e.getBoundingClientRect())) continue;
      const m = e.getScreenCTM();
      if (m && Math.abs(m.b) > 1e-3) problems.push(`chart ${i}: "${name(e)}" rotated`);
    }
  });
  const html = ['.gdn-figure', '.gdn-player', '.gdn-svgchart', '.gdn-toy'].map(c => `[data-testid="stMain"] ${c}`).join(', ');
  for (const fig of document.querySelectorAll(html)) {
    const walker = document.createTreeWalker(fig, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (!CJK.test(n.textContent)) continue;
      const el = n.parentElement;
      if (!el.offsetParent && getComputedStyle(el).position !== 'fixed') continue;
      const s = getComputedStyle(el);
      const vertical = s.writingMode.startsWith('vertical') || s.writingMode.startsWith('sideways');
      const sideways = s.writingMode.startsWith('sideways') || (vertical && s.textOrientation.startsWith('sideways'));
      const m = el instanceof SVGGraphicsElement ? el.getScreenCTM() : null;     // an SVG chart's own text
      let turned = !!m && Math.abs(m.b) > 1e-3;
      for (let a = el; a && a !== fig.parentElement; a = a.parentElement) {
        const t = getComputedStyle(a).transform;
        if (t && t !== 'none' && Math.abs(new DOMMatrix(t).b) > 1e-3) turned = true;
      }
      if (sideways || turned) problems.push(`html: "${name(el)}" turned sideways`);
    }
  }
  return problems;
}"""

# -- the main figure on the first screen, lecture sizes (tests/test_browser_layout.py) -------------------------------
MAIN_FIGURE = """() => {
  const plot = document.querySelector('[data-testid="stMain"] .js-plotly-plot, [data-testid="stMain"] .gdn-figure');
  if (!plot) return null;
  const r = plot.getBoundingClientRect();
  return {top: r.top, visible: Math.min(r.bottom, innerHeight) - Math.max(r.top, 0), height: r.height};
}"""
# A chart whose code is still loading is a stSkeleton, not yet a stPlotlyChart: wait for both kinds to be drawn
ALL_CHARTS_DRAWN = """() => !document.querySelector('[data-testid="stMain"] [data-testid="stSkeleton"]')
  && [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stPlotlyChart"]')]
     .every(chart => chart.querySelector('.js-plotly-plot'))"""
LECTURE_SIZES = """() => {
  const px = el => parseFloat(getComputedStyle(el).fontSize);
  const shown = sel => [...document.querySelectorAll('[data-testid="stMain"] ' + sel)].filter(e => e.offsetParent);
  const body = shown('[data-testid="stMarkdownContainer"] p');
  const pairs = shown('[data-testid="stMetric"]').map(m => [
      px(m.querySelector('[data-testid="stMetricValue"]')),
      px(m.querySelector('[data-testid="stMetricLabel"] p') || m.querySelector('[data-testid="stMetricLabel"]'))]);
  const ticks = shown('.js-plotly-plot .xtick text, .js-plotly-plot .ytick text, .gdn-figure th, .gdn-figure td.cell');
  return {body: body.length ? Math.min(...body.map(px)) : null, metrics: pairs,
          ticks: ticks.length ? Math.min(...ticks.map(px)) : null};
}"""

# -- chunking, cost and classroom's first screen; the 1280x720 navigation and whole figures
#    (tests/test_browser_first_screen.py) ---------------------------------------------------------------------------
CONTENT_MAIN = {"chunking": ".gdn-figure", "cost": ".js-plotly-plot",
                "classroom": '[data-testid="stMain"] [data-testid="stRadio"]'}
CONTENT = """(selector) => {
  const px = el => parseFloat(getComputedStyle(el).fontSize);
  const r = document.querySelector(selector).getBoundingClientRect();
  const body = [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stMarkdownContainer"] p')]
    .filter(e => e.offsetParent && e.innerText.trim());
  // the text itself: both value and label are paragraphs inside their containers
  const text = el => [el, ...el.querySelectorAll('*')].filter(e => !e.childElementCount && e.innerText.trim());
  const metrics = [...document.querySelectorAll('[data-testid="stMetric"]')].map(m => [
    Math.min(...text(m.querySelector('[data-testid="stMetricValue"]')).map(px)),
    Math.max(...text(m.querySelector('[data-testid="stMetricLabel"]')).map(px))]);
  return {top: r.top, height: r.height, visible: Math.min(r.bottom, innerHeight) - Math.max(r.top, 0),
          body: Math.min(...body.map(px)), metrics};
}"""
NAV = """() => [...document.querySelectorAll('[data-testid="stTopNav"] .rc-overflow-item')].map(item => {
  const r = item.getBoundingClientRect(), s = getComputedStyle(item);
  return {text: item.innerText.trim(), shown: s.opacity !== '0' && s.display !== 'none' && s.visibility !== 'hidden'
          && item.getAttribute('aria-hidden') !== 'true' && r.width > 0 && r.left >= 0 && r.right <= innerWidth};
})"""
BOTTOMS = """(selectors) => selectors.map(s => [...document.querySelectorAll(s)].filter(e => e.offsetParent)
  .map(e => { const r = e.getBoundingClientRect(); return [Math.round(r.top), Math.round(r.bottom)]; })[0] || null)"""
# Each page's main figure (lecture mode) and the controls that drive it: all of both on a 1280x720 screen.
WHOLE = {"memory_table": ['.st-key-memory_player .gdn-player-bar', '.st-key-memory_player .gdn-player-figure',
                          '.st-key-memory_player .gdn-timeline'],
         "cost": ['.st-key-gdn_fit_cost_fig', '[data-testid="stMain"] [data-testid="stSlider"]'],
         "recall": ['.st-key-gdn_fit_recall_results'],
         "chunking": ['[data-testid="stMain"] .gdn-figure', '[data-testid="stMain"] [data-testid="stSlider"]'],
         "classroom": ['[data-testid="stMain"] [data-testid="stRadio"]'],
         "practice": ['.gdn-editor-code', '.gdn-editor-run']}

# -- a resize in lecture mode: Python draws the charts again at the new scale; Plotly renders them a few frames
# after the run that sent them has ended, so a reading waits for each chart's rendered font size itself
CHART_FONTS = "() => [...document.querySelectorAll('.js-plotly-plot')].map(p => p._fullLayout?.font?.size ?? 0)"


def charts_at(page, sizes: list[float]) -> None:
    """Wait until the page's Plotly charts are rendered at these base font sizes (within half a pixel)."""
    page.wait_for_function(f"""(want) => {{ const got = ({CHART_FONTS})();
        return got.length === want.length && got.every((s, i) => Math.abs(s - want[i]) <= 0.5); }}""",
                           arg=sizes, timeout=60_000)


# -- lecture mode's scale: the smallest text and the main figure whole (tests/test_browser_lecture_scale.py) ----------
# Every text node of the main content a room sees (drawn, not hidden, not transparent): its computed font size
# times what scales it on screen (an SVG's user units to px, a CSS transform or zoom). Left out: icons (ligature
# words), sub- and superscripts (typography sets them smaller), and Plotly's toolbar and hover layer (not shown).
SMALLEST_TEXT = r"""() => {
  const scaleOf = (el) => {
    if (el instanceof SVGElement) { const m = el.getScreenCTM(); return m ? Math.hypot(m.a, m.b) : 1; }
    let s = el.currentCSSZoom ?? 1;
    for (let a = el; a; a = a.parentElement) {
      const t = getComputedStyle(a).transform;
      if (t && t !== 'none') { const m = new DOMMatrix(t); s *= Math.hypot(m.a, m.b); }
    }
    return s;
  };
  const seen = [], walk = document.createTreeWalker(document.querySelector('[data-testid="stMain"]'), NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) {
    const node = walk.currentNode, e = node.parentElement;
    if (!e || !node.textContent.replace(/[\u200b\s]/g, '')) continue;
    if (e.closest('sub, sup, .msupsub, [data-testid="stIconMaterial"], .modebar, .hoverlayer')) continue;
    if (!e.checkVisibility({opacityProperty: true, visibilityProperty: true})) continue;
    const r = e.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) continue;
    const px = parseFloat(getComputedStyle(e).fontSize) * scaleOf(e);
    seen.push([Math.round(px * 10) / 10, `${e.tagName}.${String(e.className.baseVal ?? e.className).slice(0, 40)}`,
               node.textContent.trim().slice(0, 40)]);
  }
  seen.sort((a, b) => a[0] - b[0]);
  return seen.slice(0, 5);
}"""
# Each page's main figure and the controls that drive it, in lecture mode: all of them on the first screen.
LECTURE_WHOLE = {"start": ['[data-testid="stMain"] .gdn-att'], **WHOLE,
                 "playground": ['.gdn-toy .ow-pair', '.gdn-explorer .gdn-explorer-control'],
                 "update": ['[data-testid="stMain"] .js-plotly-plot'],
                 "compare": ['.st-key-compare_player .gdn-grid', '.st-key-compare_player .gdn-player-body'],
                 "real_model": ['[data-testid="stMain"] .rm-gates']}

# -- the playground toys (tests/test_browser_playground_toys.py) ----------------------------------------------------
TOY_BOX = """() => { const toy = document.querySelector('.gdn-toy'), ex = toy.closest('.gdn-explorer');
  const controls = [...ex.querySelectorAll('.gdn-explorer-control')].map(c => c.getBoundingClientRect());
  return {top: Math.min(toy.getBoundingClientRect().top, ...controls.map(c => c.top)),   // the panel's toy, not the 2-D write below
          bottom: Math.max((toy.querySelector('svg') || toy.querySelector('.ow-pair')).getBoundingClientRect().bottom,
                           ...controls.map(c => c.bottom)),
          overflow: [...ex.querySelectorAll('.gdn-explorer-row')].filter(e => e.scrollWidth > e.clientWidth + 1).length};
}"""
OVERWRITE_BOXES = """() => {
  const bottom = (s) => document.querySelector(s).getBoundingClientRect().bottom;
  return {sliders: ['alpha', 'beta', 'knorm'].map(k => bottom(`.gdn-x-playground_overwrite_${k}`)),
          title: bottom('.ow-axis-title'), table: bottom('.ow-table'),
          ticks: Math.max(...[...document.querySelectorAll('.ow-axis span')].map(t => t.getBoundingClientRect().bottom)),
          titleTop: document.querySelector('.ow-axis-title').getBoundingClientRect().top};
}"""
# Scrolls the page (to the 2-D write's heading): taken last.
WRITE_2D_BOX = """() => { const ex = document.querySelector('.gdn-write2d').closest('.gdn-explorer');
  const heading = [...document.querySelectorAll('h3')].find(h => ex.compareDocumentPosition(h) & Node.DOCUMENT_POSITION_PRECEDING
                                                              && h.getBoundingClientRect().top < ex.getBoundingClientRect().top);
  (heading || ex).scrollIntoView({block: 'start'});
  const controls = [...ex.querySelectorAll('.gdn-explorer-control')].map(c => c.getBoundingClientRect());
  return {top: Math.min(...controls.map(c => c.top)), bottom: Math.max(ex.querySelector('svg').getBoundingClientRect().bottom,
          ...controls.map(c => c.bottom)), overflow: [...ex.querySelectorAll('.gdn-explorer-row')]
          .filter(e => e.scrollWidth > e.clientWidth + 1).length};
}"""


def views_of(screen: str) -> list:
    """The axes test reads every view at 1440x900 and 1920x1080 (then 1280x720 by resizing); at a fresh
    1280x720 the first-screen tests read the default views, the toys' tests the playground's panels."""
    if screen != "1280x720":
        return VIEWS
    return [v for v in VIEWS if (v[0], v[1], v[2]) in DEFAULT_VIEWS or v[0] in TOY_VIEWS]


def _wait(page, name: str) -> None:
    """The page drawn: its figure, or (a view that draws one only when asked) its heading; then settled."""
    if name not in NO_CHART:
        wait_for_app(page)
        return
    page.wait_for_selector('[data-testid="stMain"] [data-testid="stHeading"]', timeout=60_000)
    page.wait_for_function(IDLE, timeout=60_000)
    wait_until_settled(page)
    if name == "classroom":                          # the first-screen tests waited for its h1
        wait_for_app(page, chart=False)
    if name == "practice":                           # its editor: a component drawn after the run
        page.wait_for_selector(".gdn-editor-code", timeout=60_000)


def visit(page, screen: str, name: str, address: str) -> dict:
    """Every test's measurement of the page just opened (see the module's docstring)."""
    width, height, lecture = SCREENS[screen]
    default = (name, address, "") in DEFAULT_VIEWS
    got: dict = {}
    _wait(page, name)
    if default and name not in NO_MAIN_CHART:            # test_browser_layout: the main figure, lecture sizes
        try:      # a figure the browser unpacks (player, explorer) lands after the run, and each Plotly chart
            # mounts on its own: measured before the first is drawn, a lower one was found
            page.wait_for_function(f"({MAIN_FIGURE})() !== null && ({ALL_CHARTS_DRAWN})()", timeout=30_000)
        except PlaywrightTimeout:
            pass                                         # no figure: recorded as a miss
        got["main_figure"] = page.evaluate(MAIN_FIGURE)
        got["lecture_sizes"] = page.evaluate(LECTURE_SIZES) if lecture else None
    if default and name in CONTENT_MAIN:                 # test_browser_first_screen: chunking, cost, classroom
        page.wait_for_selector(CONTENT_MAIN[name])
        wait_until_settled(page)
        got["content"] = page.evaluate(CONTENT, CONTENT_MAIN[name])
    if default and lecture:                              # test_browser_lecture_scale
        page.wait_for_selector(LECTURE_WHOLE[name][0])
        wait_until_settled(page)
        got["smallest_text"] = page.evaluate(SMALLEST_TEXT)
        got["lecture_whole"] = page.evaluate(BOTTOMS, LECTURE_WHOLE[name])
    if default and screen == "1280x720" and name in WHOLE:      # and the whole figures at 1280x720
        page.wait_for_selector(WHOLE[name][0])
        wait_until_settled(page)
        got["nav"] = page.evaluate(NAV)
        got["whole"] = page.evaluate(BOTTOMS, WHOLE[name])
    if name in TOY_VIEWS:                                # test_browser_playground_toys
        page.wait_for_selector(".gdn-toy .metric")
        got["toy"] = page.evaluate(TOY_BOX)
        if name == "playground" and screen == "1280x720":
            got["overwrite"] = page.evaluate(OVERWRITE_BOXES)
    if name == "real_model":                             # test_browser_real_model: the gates
        got["gates"] = page.locator(".rm-gates").first.bounding_box()
    if screen != "1280x720":                             # test_browser_axes, then at 1280x720 by resizing
        got["axes"] = page.evaluate(AXES)
        if lecture:
            drawn = page.evaluate(CHART_FONTS)
            page.set_viewport_size({"width": 1280, "height": 720})
            wait_until_settled(page)
            charts_at(page, [size * 720 / height for size in drawn])     # Plotly drew the rerun's figures
            got["axes_1280x720"] = page.evaluate(AXES)
            page.set_viewport_size({"width": width, "height": height})
            wait_until_settled(page)                     # the charts drawn again at this screen's scale
            charts_at(page, drawn)
    if name == "playground-halflife" and screen in ("1440x900", "1280x720"):   # scrolls: last
        page.wait_for_selector(".gdn-write2d svg")
        got["write2d"] = page.evaluate(WRITE_2D_BOX)
    return got


# The app's own history navigation (what its Back button does): the address changes without a page load, and
# Streamlit runs the page it names with its query string, in the tab's session (its scripts, fonts and
# connection kept). Scrolled back to the top first, where a loaded page starts: the page scrolls in stMain, not
# the window, and a stMain left scrolled keeps what the new page's content allows of it (a CI run measured the
# compare page 685 px down after the playground's 2-D write had been scrolled into view).
IN_APP = """(address) => { window.scrollTo(0, 0);
                          document.querySelectorAll('[data-testid="stMain"]').forEach(e => e.scrollTo(0, 0));
                          history.pushState(null, '', address); dispatchEvent(new PopStateEvent('popstate')); }"""
# The run that the navigation started is over: no script running, no element left from the page before (Streamlit
# marks the last run's elements stale while a run goes, and removes those it did not draw again when it ends).
RUN_DONE = IDLE + " && !document.querySelector('[data-stale=\"true\"]')"


def open_in_app(page, address: str, timeout_ms: int = 60_000) -> None:
    """Open `address` (a path and query) by the app's history navigation and wait for its run to end."""
    with page.app_socket.expect_event("framereceived", timeout=timeout_ms):     # the server took the run
        page.evaluate(IN_APP, address)
    page.wait_for_function(RUN_DONE, timeout=timeout_ms)


# Pages that show what another page leaves in the session, opened first in a tour: the cost page marks the real
# model's prompt on its curve (real_model_prompt_tokens) once the real model page has run in the session.
READ_WHAT_OTHERS_LEAVE = ("cost",)


def tour_order(views: list) -> list:
    """The views in an order where each sees what a fresh load of its link sees: the pages of
    READ_WHAT_OTHERS_LEAVE first, and two views of one page never one after the other, each page's in its
    own order (its default view first). A page keeps its widgets' state while it is shown, so a linked view
    opened right after another of the same page would show that one's choice, not its link's; any other
    page in between drops that state, and the view's link is read as on a fresh load. Greedy: the page
    with the most views left goes next, unless it went last."""
    order = [view for view in views if view[0] in READ_WHAT_OTHERS_LEAVE]
    left: dict[str, list] = {}
    for view in views:
        if view not in order:
            left.setdefault(view[1], []).append(view)
    last = order[-1][1] if order else None
    while any(left.values()):
        pages = [a for a, rest in left.items() if rest and a != last] or [last]
        last = max(pages, key=lambda a: len(left[a]))
        order.append(left[last].pop(0))
    if any(a[1] == b[1] for a, b in zip(order, order[1:])):
        raise AssertionError(f"two views of one page in a row: {[v[0] for v in order]}")
    return order


class Tour:
    """Lazily, once per (language, screen): a fresh context at that screen, every view of views_of(screen)
    opened by its link and measured by visit(). The first view is loaded by its link; every other one is
    opened by its link through the app's history navigation (open_in_app), in tour_order. Checked against a
    page load per view (all six tours, one server): every measurement the same, but the cost page's, which
    marked the real model's prompt until it went first; and 86 s instead of 209 s on the loaded 2-core box.
    A shared link loaded on a fresh server, and one loaded in a fresh tab, are tests/test_browser_links.py's."""

    def __init__(self, browser, app_url: str):
        self.browser, self.app_url, self.done = browser, app_url, {}

    def get(self, lang: str, screen: str) -> dict:
        if (lang, screen) not in self.done:
            width, height, lecture = SCREENS[screen]
            context = self.browser.new_context(viewport={"width": width, "height": height})
            try:
                page = context.new_page()
                track_runs(page)
                seen = {}
                for i, (name, address, query) in enumerate(tour_order(views_of(screen))):
                    link = f"/{address}?lang={lang}{'&mode=lecture' if lecture else ''}{query}"
                    if i == 0:
                        page.goto(self.app_url + link)
                    else:
                        open_in_app(page, link)
                    seen[name] = visit(page, screen, name, address)
            finally:
                context.close()
            self.done[lang, screen] = {name: seen[name] for name, _, _ in views_of(screen)}     # in VIEWS' order
        return self.done[lang, screen]
