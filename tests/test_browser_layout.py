"""Every page teaches on one screen: its main figure starts in the first screen with at least 300 px (or all
of a smaller figure) showing, at 1440x900 and in lecture mode at 1920x1080 and 1280x720; lecture text is projector-sized;
in-app page switches keep the language even when the browser's own language is another."""
import numpy as np
import pytest

from gdn.figures.playground import fig_capacity
from gdn.figures.recall import fig_results
from gdn.i18n import t
from gdn.lessons import playground as ex
from app_pages._support.path import PATH
from devtools.app_server import wait_for_app, wait_until_settled
from tests.page_tour import NO_MAIN_CHART
from tests.page_tour import SCREENS as tour_screens
from tests.test_browser_classroom import MIN_BODY_PX, MIN_CHART_PX

pytestmark = pytest.mark.browser

MIN_VISIBLE_PX = 300
SCREENS = ["1440x900", "1920x1080", "1280x720"]


@pytest.mark.parametrize("screen", SCREENS)
def test_main_figure_is_on_the_first_screen(tour, screen):
    """Each page's default view opened by its link in both languages (tests/page_tour.py: the load is shared
    with the other tests that look at it; there the main figure and, in lecture mode, the text sizes are read
    once every chart is drawn)."""
    width, height, lecture = tour_screens[screen]
    misses = []
    for stop in PATH:
        if stop.url_path in NO_MAIN_CHART:
            continue
        for lang in ("zh", "en"):
            seen = tour.get(lang, screen)[stop.url_path]
            box = seen["main_figure"]
            # at least MIN_VISIBLE_PX of it, or all of a smaller figure (the chunking page's 3 x 3 tables)
            if box is None or box["top"] >= height or box["visible"] < min(MIN_VISIBLE_PX, box["height"] - 1):
                misses.append((stop.url_path, lang, box))
            if lecture:
                sizes = seen["lecture_sizes"]
                if sizes["body"] is not None and sizes["body"] < MIN_BODY_PX:
                    misses.append((stop.url_path, lang, "body text", sizes["body"]))
                if sizes["ticks"] is not None and sizes["ticks"] < MIN_CHART_PX:
                    misses.append((stop.url_path, lang, "tick labels", sizes["ticks"]))
                small = [p for p in sizes["metrics"] if p[0] < p[1]]
                if small:
                    misses.append((stop.url_path, lang, "metric value smaller than its label", small))
    assert not misses, "\n".join(map(str, misses))


def test_page_switches_keep_the_language_of_the_link(tabs, app_url):
    """The browser says English, the link says Chinese: navigation, next links, "show me live" and the
    real model's replay must all keep Chinese (a bare st.switch_page used to lose it)."""
    page = tabs.open({"width": 1440, "height": 900}, locale="en-US")      # a kept tab, as a new visitor's
    nav = lambda: [x.split("\n")[-1] for x in page.locator('[data-testid="stTopNavLink"]').all_inner_texts()]
    page.goto(f"{app_url}/{PATH[0].address}?lang=zh")
    wait_for_app(page)
    assert "记忆表" in nav()
    for stop in PATH[1:]:                                     # the "next" link at the end of every page
        page.locator('[data-testid="stPageLink"] a').last.click()
        page.wait_for_url(f"**/{stop.url_path}?*", timeout=30_000)
        wait_for_app(page, chart=stop.url_path not in NO_MAIN_CHART)
        assert "lang=zh" in page.url and "记忆表" in nav(), (stop.url_path, page.url, nav())
    # the top navigation itself
    page.locator('[data-testid="stTopNavLink"]').filter(has_text="对比").click()
    page.wait_for_url("**/compare*", timeout=30_000)
    wait_for_app(page)
    assert "lang=zh" in page.url and "记忆表" in nav(), (page.url, nav())
    page.locator('[data-testid="stTopNavLink"]').filter(has_text="课堂").click()
    page.wait_for_url("**/classroom*", timeout=30_000)
    wait_for_app(page, chart=False)
    # classroom -> "show me live" (a st.switch_page inside the app)
    page.locator('[data-testid="stMain"] [data-testid="stRadio"]').first.locator("[role=radiogroup] label").first.click()
    page.get_by_role("button", name="揭晓答案").first.click()
    page.get_by_role("button").filter(has_text="play_circle").first.click()
    page.wait_for_function("!location.pathname.endsWith('/classroom')", timeout=30_000)
    wait_for_app(page)
    assert "lang=zh" in page.url and "记忆表" in nav(), (page.url, nav())


def test_a_language_switch_relabels_the_chosen_options(page, app_url):
    """Select boxes used to keep showing their chosen option in the old language after a switch."""
    memory = next(stop for stop in PATH if stop.key == "memory")
    page.goto(f"{app_url}/{memory.address}?lang=zh")
    wait_for_app(page)
    shown = lambda: page.locator('[data-testid="stMain"] [data-testid="stSelectbox"]').first.evaluate(
        "e => [...e.querySelectorAll('input')].map(i => i.value).join() + e.innerText")
    assert "写入两对键值" in shown()
    page.locator('[data-testid="stSidebar"] label').filter(has_text="English").click()
    page.wait_for_function("document.querySelector('h1').innerText.startsWith('The memory table')", timeout=20_000)
    wait_for_app(page)
    assert "Write two pairs" in shown() and "写入" not in shown()


# ---- projector text and figure labels ------------------------------------------------------------------

MIN_LECTURE_PX = 16
# Every visible text node under `root` whose element's font is smaller than the bound: [px, tag.class, text].
# Sub- and superscripts and KaTeX's inner boxes are set smaller by typography, not by our CSS: left out.
SMALL_TEXT = """([root, bound]) => { const out = [], start = document.querySelector(root);
  if (!start) return [['missing', root, '']];
  const walk = document.createTreeWalker(start, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) { const node = walk.currentNode, e = node.parentElement;
    if (!e || !node.textContent.replace(/[\\u200b\\s]/g, '') || e.closest('sub, sup, .katex')) continue;
    const r = e.getBoundingClientRect(), cs = getComputedStyle(e);
    if (!r.width || !r.height || cs.visibility === 'hidden') continue;
    const px = parseFloat(cs.fontSize);
    if (px < bound) out.push([px, `${e.tagName}.${e.className.baseVal ?? e.className}`, node.textContent.trim().slice(0, 40)]); }
  return out; }"""


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_lecture_text_is_16px_or_more_at_1280x720(tabs, app_url, lang):
    """A 1280x720 projector in lecture mode: no text on any page is under 16 px, whether above the fold or
    not: the start page's layer diagram (its text was 12.7 px), the compare page at the query stage (its
    readouts and tables), and the real model's hover card once a token is pointed at (13.5 px)."""
    page = tabs.open({"width": 1280, "height": 720})
    misses = []
    for stop in PATH:
        page.goto(f"{app_url}/{stop.address}?lang={lang}&mode=lecture")
        wait_for_app(page, chart=stop.url_path not in NO_MAIN_CHART)
        if stop.url_path == "start":
            page.wait_for_selector(".gdn-block .blk-box")
        if stop.url_path == "compare":                       # the query stage: the readouts beside the grid
            page.locator(".st-key-compare_player .gdn-stages .gdn-stage").nth(4).click()
            page.wait_for_selector(".gdn-readouts")
            # the moment the rules disagree: what each reads, and its error, are what the room reads (16 px once)
            misses += [("compare readouts", *s) for s in page.evaluate(SMALL_TEXT, [".gdn-readouts", 19])]
        wait_until_settled(page)
        misses += [(stop.url_path, *s) for s in page.evaluate(SMALL_TEXT, ['[data-testid="stMain"]', MIN_LECTURE_PX])]
        if stop.url_path == "real_model":                    # the card fills in when a token is pointed at
            before = page.inner_text(".gdn-tok-slot")
            page.locator(".gdn-swap td[data-tok]").nth(5).hover()
            page.wait_for_function("([s, b]) => document.querySelector(s).innerText !== b", arg=[".gdn-tok-slot", before])
            misses += [("real_model card", *s) for s in page.evaluate(SMALL_TEXT, [".gdn-tok-slot", MIN_LECTURE_PX])]
    assert not misses, "\n".join(map(str, misses))


FIGURE_BOXES = """() => { const box = e => e.getBoundingClientRect();
  const titles = [...document.querySelectorAll('g.annotation text')].map(e => [e.textContent, box(e)]);
  const legends = [...document.querySelectorAll('g.legend')].map(e => ['legend', box(e)]);
  const all = [...titles, ...legends].map(([n, r]) => [n, r.left, r.top, r.right, r.bottom]);
  const hits = [];
  for (let i = 0; i < all.length; i++) for (let j = i + 1; j < all.length; j++) {
    const [a, b] = [all[i], all[j]];           // a line box's leading (~0.2 em) may reach into the next line's
    if (a[1] < b[3] - 4 && b[1] < a[3] - 4 && a[2] < b[4] - 4 && b[2] < a[4] - 4) hits.push([a[0], b[0]]); }
  return {hits, n: all.length}; }"""


def _boxes_of(browser, fig, width: int) -> dict:
    """The figure drawn alone at `width` px (plotly.js inline: no network), its annotations' and legends' boxes."""
    tab = browser.new_page(viewport={"width": width, "height": 900})
    try:
        tab.set_content(fig.to_html(include_plotlyjs=True, full_html=True, config={"responsive": True}))
        tab.wait_for_selector("g.annotation text")
        return tab.evaluate(FIGURE_BOXES)
    finally:
        tab.close()


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_panel_titles_and_legends_clear_each_other_on_a_projector(browser, lang):
    """At lecture size (22 px) in the width a 1280 px projector gives them: the recall results with three
    widths (their titles ran into each other, "per la") and the playground's capacity figure (its legend
    sat on its subplot titles): no title, axis title or legend overlaps another."""
    rules, widths, pairs = ["softmax", "linear", "deltanet", "gdn"], [16, 32, 64], [8, 16, 32, 64]
    acc = np.random.default_rng(0).uniform(0.2, 1.0, (len(rules), len(widths), len(pairs)))
    labels = {k: t(f"recall.{k}", lang) for k in ("pairs", "accuracy", "accuracy_pct")} | {"seeds_list": "{seeds}"}
    results = fig_results(acc, rules=rules, widths=widths, pairs=pairs, names={r: t(f"recall.rule_{r}", lang) for r in rules},
                          titles=[t("recall.width_panel", lang, d=d) for d in widths], labels=labels, font_size=22, height=520)
    got = _boxes_of(browser, results, 1060)
    assert got["n"] >= 4 and not got["hits"], got
    Ns = np.array(ex.CAPACITY_NS)
    curves = {r: ex.capacity_curve(r, 32, 32, alpha=0.99 if r == "gdn" else 1.0, Ns=tuple(Ns)) for r in ex.RULES}
    split = [t(f"playground.cap_{s}", lang) for s in ("all", "recent", "oldest")]
    cap_labels = {"curve_title": t("playground.cap_curve_title", lang), "split_title": t("playground.cap_split_title", lang, N=256),
                  "knee": t("playground.cap_knee", lang, K=32), "N": t("playground.cap_x", lang), "error": t("playground.cap_error", lang)}
    capacity = fig_capacity(Ns, curves, 32, 256, rule_titles={r: t(f"playground.rule_{r}", lang) for r in ex.RULES},
                            split_labels=split, labels=cap_labels, font_size=22, height=520)
    got = _boxes_of(browser, capacity, 770)
    assert got["n"] >= 4 and not got["hits"], got
