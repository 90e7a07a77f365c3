"""Never an axis title on a tick label, never Chinese turned sideways: on every page and view, at the three
screens a class uses (1440x900; lecture mode at 1920x1080 and 1280x720), in Chinese and in English.

Measured in the drawn page: every Plotly axis title's box (and every annotation's: they title rows and
axes too) against every tick label's box of its chart and against the other titles; the screen angle of every SVG text and the writing
mode of every HTML (and SVG chart) figure's text that holds a CJK character (vertical writing keeps CJK upright unless
text-orientation turns it sideways)."""
import pytest

from devtools.app_server import IDLE, wait_for_app, wait_until_settled
from devtools.screens import NO_CHART, shots

pytestmark = pytest.mark.browser

# Each page's default view, and the views a page opens through its link (its segmented control).
VIEWS = list(shots([], with_views=True))

MEASURE = r"""() => {
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


def _wait(page, chart: bool) -> None:
    """The page drawn: its figure, or (a view that draws one only when asked) its heading; then settled."""
    if chart:
        wait_for_app(page)
        return
    page.wait_for_selector('[data-testid="stMain"] [data-testid="stHeading"]', timeout=60_000)
    page.wait_for_function(IDLE, timeout=60_000)
    wait_until_settled(page)


def _look(page, where: str, misses: list) -> None:
    misses += [f"{where}: {p}" for p in page.evaluate(MEASURE)]


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("lecture", [False, True], ids=["1440x900", "lecture"])
def test_no_title_on_a_tick_and_no_sideways_chinese(browser, app_url, lang, lecture):
    """Lecture mode is measured at 1920x1080, then the same page at 1280x720 (the charts follow the window)."""
    size = {"width": 1920, "height": 1080} if lecture else {"width": 1440, "height": 900}
    context = browser.new_context(viewport=size)
    page = context.new_page()
    misses = []
    for name, address, query in VIEWS:
        page.goto(f"{app_url}/{address}?lang={lang}{'&mode=lecture' if lecture else ''}{query}")
        _wait(page, chart=name not in NO_CHART)
        _look(page, f"{name} {size['width']}x{size['height']}", misses)
        if lecture:
            page.set_viewport_size({"width": 1280, "height": 720})
            wait_until_settled(page)
            _look(page, f"{name} 1280x720", misses)
            page.set_viewport_size(size)
    context.close()
    assert not misses, "\n".join(misses)
