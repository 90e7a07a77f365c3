"""Lecture mode on projector-sized screens, keyboard play, and an app that never leaves 127.0.0.1."""
from urllib.parse import urlparse

import pytest

from devtools.app_server import stays, wait_for_app

pytestmark = pytest.mark.browser

# Smallest text we accept in lecture mode, in CSS px at the projected resolution. A 1280-px-wide
# image projected 3 m wide makes 1 px = 2.3 mm, so 20 px body text has letters ~3 cm tall:
# readable from ~15 m (about 1 m of distance per 2 mm of letter height). Chart numbers >= 18 px.
MIN_BODY_PX, MIN_CHART_PX = 20, 18

FONT_SIZES = """() => {
  const px = el => parseFloat(getComputedStyle(el).fontSize);
  const body = [...document.querySelectorAll('[data-testid="stMarkdownContainer"] p')].filter(e => e.offsetParent);
  // chart numbers: a Plotly chart's cell texts and annotations, the cells of the HTML tables (the memory figure)
  const cells = [...document.querySelectorAll('.js-plotly-plot .textpoint text, .js-plotly-plot .annotation-text, .gdn-figure td.cell')];
  return {body: Math.min(...body.map(px)), chart: Math.min(...cells.map(px)), cells: cells.length};
}"""


@pytest.mark.parametrize("width,height", [(1920, 1080), (1280, 720)])
def test_lecture_mode_text_is_large_on_a_projector(tabs, app_url, width, height, tmp_path):
    page = tabs.open({"width": width, "height": height})                  # a kept tab, as a new visitor's
    page.goto(f"{app_url}/memory?lang=zh&mode=lecture&memory_preset=k1_update&memory_t=3&memory_stage=write")
    wait_for_app(page)
    sizes = page.evaluate(FONT_SIZES)
    page.screenshot(path=str(tmp_path / f"lecture_{width}x{height}.png"))
    assert sizes["cells"] > 0
    assert sizes["body"] >= MIN_BODY_PX and sizes["chart"] >= MIN_CHART_PX, sizes
    assert page.locator('[data-testid="stSidebar"][aria-expanded="true"]').count() == 0   # sidebar folded


def test_space_plays_and_pauses(page, app_url):
    page.goto(f"{app_url}/memory?lang=en&memory_preset=k1_update&memory_t=1")
    wait_for_app(page)
    page.locator("h1").click()
    page.keyboard.press("Space")
    page.wait_for_function("document.body.innerText.includes('Step 3 of 20')", timeout=20_000)
    page.locator("h1").click()
    page.keyboard.press("Space")                                  # pause
    wait_for_app(page)
    # two play ticks (1.2 s each) would step twice; stays() fails the moment the step moves
    assert stays(page, "document.body.innerText.match(/Step (\\d+) of 20/)[1]", 2500)
    assert not page.problems, page.problems


def test_every_request_stays_on_this_machine(browser, app_url):
    """A tab of its own (not a kept one): nothing served from an earlier test's cache, every request seen."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    for path in ["?lang=zh", "classroom?lang=en", "?lang=en&mode=lecture"]:
        page.goto(f"{app_url}/{path}")
        wait_for_app(page, chart="classroom" not in path)
    hosts = {urlparse(u).hostname for u in requests if urlparse(u).scheme in ("http", "https", "ws", "wss")}
    context.close()
    assert requests and hosts == {"127.0.0.1"}, hosts


def test_a_demo_opened_again_after_stepping_away_opens_at_its_step(page, app_url):
    """The β = 0 demo opens the memory table at token 3's query (step 15, its last). Stepping back with the
    keys tells Python nothing, nor does leaving by a page link; opening the same demo again must still show
    step 15, not the step the tab had walked to (view.set_on_purpose)."""
    counter = "document.body.innerText.match(/Step (\\d+) of \\d+/)?.[1]"
    page.goto(f"{app_url}/classroom?lang=en")
    for attempt in range(2):
        wait_for_app(page, chart=False)
        page.locator(".st-key-classroom_pick_beta_zero [role=radiogroup] label").first.click()   # answer, check
        wait_for_app(page, chart=False)
        page.locator(".st-key-classroom_check_beta_zero button").click()
        page.locator(".st-key-classroom_demo_beta_zero button").click()                          # the demo
        page.wait_for_function(f"{counter} === '15'", timeout=30_000)
        wait_for_app(page)
        if attempt == 0:
            page.locator("h1").click()
            for _ in range(3):
                page.keyboard.press("ArrowLeft")
            page.wait_for_function(f"{counter} === '12'", timeout=10_000)
            page.locator('[data-testid="stTopNavLink"][href$="/classroom"]').click()
    assert not page.problems, page.problems
