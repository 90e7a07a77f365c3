"""The start page in a real browser: its first figure is in the first screen, and a click on each box of
the Gated DeltaNet diagram opens the page that explains it, keeping ?lang=zh over an English browser."""
from urllib.parse import parse_qs, urlparse

import pytest

from gdn.figures.start import LAYOUT
from devtools.app_server import wait_for_app, wait_until_settled

pytestmark = pytest.mark.browser

# box -> (address of the page it opens, its title in Chinese, a query parameter it sets)
EXPECTED = {"delta": ("memory_table", "记忆表", None), "chunk": ("chunking", "分块", None),
            "l2": ("playground", "游乐场", ("playground_panel", "knorm")),
            "alpha": ("playground", "游乐场", ("playground_panel", "halflife")),
            "beta": ("playground", "游乐场", None)}         # its panel, "overwrite", is the default: not in the link
REAL_MODEL = ("real_model", "演示模型", None)      # its title names the loaded model: the shipped demo

# the pixel centre of a box: plotly's own axis mapping of the diagram (the second chart)
BOX_CENTRE = """([x, y]) => { const gd = document.querySelectorAll('.js-plotly-plot')[1]; const L = gd._fullLayout;
  const r = gd.getBoundingClientRect();
  return [r.left + L._size.l + L.xaxis.l2p(x), r.top + L._size.t + L.yaxis.l2p(y)]; }"""


@pytest.fixture(scope="module")
def english_browser(browser):
    context = browser.new_context(viewport={"width": 1440, "height": 900}, locale="en-US")
    yield context
    context.close()


@pytest.mark.parametrize("box", list(LAYOUT))
def test_a_click_on_each_box_opens_its_page_in_chinese(english_browser, app_url, box):
    page = english_browser.new_page()
    page.goto(f"{app_url}/?lang=zh")
    wait_for_app(page)
    page.locator(".js-plotly-plot").nth(1).scroll_into_view_if_needed()
    wait_until_settled(page)                                      # the box centres are read after the scroll
    x, y = page.evaluate(BOX_CENTRE, [LAYOUT[box][0], LAYOUT[box][1]])
    page.mouse.move(x, y)
    page.mouse.click(x, y)
    target, title, param = EXPECTED.get(box, REAL_MODEL)
    page.wait_for_url(f"**/{target}?**", timeout=30_000)
    page.wait_for_selector("h1")
    page.wait_for_function("!document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=60_000)
    query = parse_qs(urlparse(page.url).query)
    assert query["lang"] == ["zh"], page.url
    assert title in page.inner_text("h1")
    if param:
        assert query[param[0]] == [param[1]]
    page.close()


@pytest.mark.parametrize("width,height,mode", [(1440, 900, ""), (1920, 1080, "&mode=lecture"),
                                               (1280, 720, "&mode=lecture")])
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_first_figure_is_in_the_first_screen(browser, app_url, width, height, mode, lang):
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.goto(f"{app_url}/?lang={lang}{mode}")
    wait_for_app(page)
    top = page.evaluate("document.querySelector('.js-plotly-plot').getBoundingClientRect().top")
    assert height - top >= 300, (width, height, top)
    context.close()


def test_start_has_its_own_address(page, app_url):
    page.goto(f"{app_url}/start?lang=en&start_T=4")
    wait_for_app(page)
    assert "not found" not in page.inner_text("body").lower()
    assert page.inner_text("h1").startswith("Start here")
    assert page.locator(".js-plotly-plot").first.locator(".bars .point").count() == 4 + 2 * 3
