"""Chunking, memory cost and classroom in a real browser, at the three screens a class uses: the main
figure (or the first exercise) starts inside the first screen with room to see it, and lecture-mode
text is large enough to read from the back of a room."""
import pytest

from devtools.app_server import wait_for_app, wait_until_settled

pytestmark = pytest.mark.browser

SCREENS = [(1440, 900, ""), (1920, 1080, "&mode=lecture"), (1280, 720, "&mode=lecture")]
MIN_VISIBLE_PX, MIN_BODY_PX = 300, 20

LAYOUT = """(selector) => {
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


@pytest.mark.parametrize("width,height,mode", SCREENS, ids=["1440x900", "lecture-1920x1080", "lecture-1280x720"])
@pytest.mark.parametrize("page_path,main", [("chunking", ".gdn-figure"), ("cost", ".js-plotly-plot"),
                                            ("classroom", '[data-testid="stMain"] [data-testid="stRadio"]')])
def test_main_content_is_on_the_first_screen(browser, app_url, page_path, main, width, height, mode):
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    lang = "zh" if width == 1280 else "en"                 # both languages: Chinese on the smallest screen
    page.goto(f"{app_url}/{page_path}?lang={lang}{mode}")
    wait_for_app(page, chart=page_path != "classroom")
    page.wait_for_selector(main)
    wait_until_settled(page)
    got = page.evaluate(LAYOUT, main)
    # A chart: at least 300 px of it (all of a smaller one: the chunking tables); the first exercise: all options.
    want = got["height"] - 1 if page_path == "classroom" else min(MIN_VISIBLE_PX, got["height"] - 1)
    assert 0 <= got["top"] < height and got["visible"] >= want, got
    if mode:
        assert got["body"] >= MIN_BODY_PX, got
        assert got["metrics"] or page_path == "classroom"
        assert all(value > label for value, label in got["metrics"]), got
    context.close()


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
         "classroom": ['[data-testid="stMain"] [data-testid="stRadio"]']}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_lecture_1280x720_shows_every_page_in_the_navigation_and_whole_figures(browser, app_url, lang):
    """A 1280x720 projector: the top navigation names all nine pages (no "2 more"), and on the pages this
    checks the main figure and its controls lie wholly inside the first screen."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    misses = []
    for address, parts in WHOLE.items():
        page.goto(f"{app_url}/{address}?lang={lang}&mode=lecture")
        wait_for_app(page, chart=address != "classroom")
        page.wait_for_selector(parts[0])
        wait_until_settled(page)
        nav = page.evaluate(NAV)
        if len(nav) < 9 or not all(item["shown"] for item in nav if item["text"]) or any(
                not item["text"] or "more" in item["text"] or "更多" in item["text"] for item in nav if item["shown"]):
            misses.append((address, "navigation", nav))
        for selector, box in zip(parts, page.evaluate(BOTTOMS, parts)):
            if box is None or box[0] < 0 or box[1] > 720:
                misses.append((address, selector, box))
    context.close()
    assert not misses, "\n".join(map(str, misses))
