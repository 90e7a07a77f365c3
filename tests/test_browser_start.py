"""The start page in a real browser: the first figure (attention -> one table) answers its sliders and
the linked hovers of each token k_j in the browser with the lesson's numbers, it and its sliders fit the
first screen, the layer diagram's text is lecture-sized and never clipped, and a click on each box opens
the page that explains it, keeping ?lang=zh over an English browser."""
from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest

from gdn.figures.start import LAYOUT
from gdn.lessons import start as lesson
from devtools.app_server import IDLE, SentMessages, wait_for_app

pytestmark = pytest.mark.browser

# box -> (address of the page it opens, its title in Chinese, a query parameter it sets)
EXPECTED = {"delta": ("memory_table", "记忆表", None), "chunk": ("chunking", "分块", None),
            "l2": ("playground", "游乐场", ("playground_panel", "knorm")),
            "alpha": ("playground", "游乐场", ("playground_panel", "halflife")),
            "beta": ("playground", "游乐场", None)}         # its panel, "overwrite", is the default: not in the link
REAL_MODEL = ("real_model", "演示模型", None)      # its title names the loaded model: the shipped demo

# What is lit: for each kind of linked element, the numbers it shows (a real minus sign: "−1.40").
LIT = """() => {
  const nums = (els) => els.map(e => parseFloat(e.textContent.replace('−', '-')));
  const q = (s) => [...document.querySelectorAll(s)];
  const bar = q('.att-bar.gdn-lit'), row = q('tr.term.gdn-lit'), term = q('.att-term.gdn-lit');
  return {bars: bar.map(b => b.dataset.link), weight: nums(bar.map(b => b.querySelector('.att-w'))),
          rows: row.map(r => r.dataset.link), row: nums(row.flatMap(r => [...r.querySelectorAll('td')])),
          terms: term.map(t => t.dataset.link), shares: nums(q('.share.gdn-lit')),
          shown: q('.share.gdn-lit').filter(s => s.getBoundingClientRect().height > 0).length};
}"""
BARS = "document.querySelectorAll('.gdn-att .att-bar').length"


def open_start(page, app_url, query: str) -> None:
    page.goto(f"{app_url}/start?{query}")
    wait_for_app(page)
    page.wait_for_selector(".gdn-att .att-bar")


def expected(T: int, seed: int, j: int) -> dict:
    """Token j's numbers from the lesson code (and a softmax written out here), at 2 decimals."""
    ex = lesson.example(T=T, seed=seed)
    scores = ex.k @ ex.q
    w = np.exp(scores / np.sqrt(3))
    return {"weight": w[j] / w.sum(), "row": [scores[j], *(scores[j] * ex.v[j])],
            "shares": np.outer(ex.k[j], ex.v[j]).ravel()}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_hovering_a_token_lights_its_weight_term_and_share_with_the_lessons_numbers(page, app_url, lang):
    """Each kind of linked element (a weight's bar, a row of the sum, a term of the table) hovered in turn on
    one load of the page, the pointer moved away after each (one load instead of three: 1.1-1.5 s each)."""
    open_start(page, app_url, f"lang={lang}&start_T=5&start_seed=3")
    want = expected(5, 3, 2)
    for where, target in {"weights": ".att-bar", "sum": "tr.term", "table": ".att-term"}.items():
        page.locator(f"{target}[data-link='2']").hover()
        page.wait_for_selector(".share.gdn-lit")
        lit = page.evaluate(LIT)
        assert lit["bars"] == lit["rows"] == lit["terms"] == ["2"], (where, lit)
        assert lit["weight"][0] == pytest.approx(want["weight"], abs=0.005), where
        np.testing.assert_allclose(lit["row"], want["row"], atol=0.005, err_msg=where)
        np.testing.assert_allclose(lit["shares"], want["shares"], atol=0.005, err_msg=where)
        assert lit["shown"] == 9, where                              # each entry of the 3 x 3 table shows it
        caption = page.locator(".share-caption.gdn-lit").inner_text()
        assert ("token 3" if lang == "en" else "第 3 个") in caption, where     # tokens count from 1
        page.mouse.move(5, 5)                                        # away: nothing stays lit
        page.wait_for_function("!document.querySelector('.gdn-lit')")
    assert not page.problems, page.problems


@pytest.mark.parametrize("lang,kept", [("en", ("After 9 tokens", "54 numbers")), ("zh", ("经过 9 个", "54 个数"))])
def test_the_sliders_answer_in_the_browser_and_keep_the_link(page, app_url, lang, kept):
    """T and the example move in the browser: the drawn numbers follow the lesson code, the address bar
    follows, and the burst sends no more websocket messages than an idle window as long."""
    sent = SentMessages(page)
    open_start(page, app_url, f"lang={lang}")
    assert page.evaluate(BARS) == 6
    sent.idle()
    page.locator(".gdn-x-start_T").focus()
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    page.locator(".gdn-x-start_seed").focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function(f"{BARS} === 9")
    sent.assert_quiet()
    query = parse_qs(urlparse(page.url).query)
    assert query["start_T"] == ["9"] and query["start_seed"] == ["1"]
    page.locator(".att-bar[data-link='8']").hover()
    lit, want = page.evaluate(LIT), expected(9, 1, 8)
    np.testing.assert_allclose(lit["row"], want["row"], atol=0.005)
    text = page.locator(".att-kept").inner_text()
    assert all(k in text for k in kept), text                        # T (d_k + d_v) = 9 x 6
    assert not page.problems, page.problems


def test_play_walks_t_to_the_end(page, app_url):
    open_start(page, app_url, "lang=en&start_T=10")
    page.locator(".gdn-explorer-play").click()
    page.wait_for_function(f"{BARS} === 12", timeout=20_000)
    page.wait_for_function("document.querySelector('.gdn-explorer-play').textContent.includes('Play')")
    assert "start_T=12" in page.url


def test_a_moved_slider_reaches_the_share_link(page, app_url):
    """Python hears the browser's values just before a click elsewhere (the relay): Share names them."""
    open_start(page, app_url, "lang=en")
    page.locator(".gdn-x-start_T").focus()
    page.keyboard.press("ArrowLeft")
    page.wait_for_function(f"{BARS} === 5")
    page.locator('[data-testid="stSidebar"] button', has_text="Share").click()
    link = page.locator('[data-testid="stDialog"] code, [data-testid="stDialog"] input').first
    link.wait_for(timeout=30_000)
    text = link.input_value() if link.evaluate("e => e.tagName") == "INPUT" else link.inner_text()
    assert "start_T=5" in text, text


@pytest.mark.parametrize("width,height,mode", [(1440, 900, ""), (1920, 1080, "&mode=lecture"),
                                               (1280, 720, "&mode=lecture")])
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_first_figure_and_its_sliders_are_in_the_first_screen(tabs, app_url, width, height, mode, lang):
    page = tabs.open({"width": width, "height": height})
    open_start(page, app_url, f"lang={lang}{mode}&start_T=12")      # the tallest frame
    box = page.evaluate("""() => { const r = (s) => document.querySelector(s).getBoundingClientRect();
      return {bar: r('.gdn-explorer-bar').top, bottom: Math.max(...[...document.querySelectorAll(
        '.gdn-att > section *')].map(e => e.getBoundingClientRect().bottom))}; }""")
    assert box["bar"] >= 0 and box["bottom"] <= height, (width, height, box)


@pytest.mark.parametrize("width,height,mode", [(1440, 900, ""), (1920, 1080, "&mode=lecture"),
                                               (1280, 720, "&mode=lecture")])
def test_the_layer_diagram_is_full_width_and_clips_nothing(tabs, app_url, width, height, mode):
    page = tabs.open({"width": width, "height": height})
    open_start(page, app_url, f"lang=zh{mode}")
    page.locator(".gdn-block").scroll_into_view_if_needed()
    got = page.evaluate("""() => {
      const block = document.querySelector('.gdn-block'), main = document.querySelector('.gdn-att');
      const boxes = [...block.querySelectorAll('.blk-box')];
      const clipped = boxes.filter(b => b.scrollHeight > b.clientHeight + 1 || b.scrollWidth > b.clientWidth + 1)
                           .map(b => b.dataset.open);
      return {width: block.getBoundingClientRect().width, main: main.getBoundingClientRect().width, clipped,
              font: Math.min(...boxes.map(b => parseFloat(getComputedStyle(b).fontSize))),
              stack: [...document.querySelectorAll('.stk-note')].filter(n => n.scrollWidth > n.clientWidth + 1).length,
              deltaLines: (() => { const box = block.querySelector('.blk-box[data-open="delta"]');
                                   return box.firstElementChild.getBoundingClientRect().height
                                          / parseFloat(getComputedStyle(box).lineHeight); })()};
    }""")
    assert got["clipped"] == [] and got["stack"] == 0, got
    # the delta rule's box: its name, the update in two lines, two shapes and the live norm (the update once
    # wrapped over five lines in a box too narrow for it)
    assert got["deltaLines"] <= 7.5, got                             # six lines (sub- and superscripts add a little)
    assert got["width"] >= got["main"] - 1                           # as wide as the page's content
    if width == 1920:
        assert got["font"] >= 20, got                                # lecture text at 1920 x 1080


@pytest.fixture
def english_tab(tabs):
    """A tab of a browser that says English (a kept tab, wiped after the test: tests/conftest.py's Tabs)."""
    tab = tabs.open({"width": 1440, "height": 900}, locale="en-US")
    yield tab
    tabs.wipe(tab)


@pytest.mark.parametrize("box", list(LAYOUT))
def test_a_click_on_each_box_opens_its_page_in_chinese(english_tab, app_url, box):
    page = english_tab
    page.goto(f"{app_url}/?lang=zh")
    wait_for_app(page)
    page.locator(f".blk-box[data-open='{box}']").click()
    target, title, param = EXPECTED.get(box, REAL_MODEL)
    page.wait_for_url(f"**/{target}?**", timeout=30_000)
    page.wait_for_selector("h1")
    page.wait_for_function(IDLE, timeout=60_000)
    query = parse_qs(urlparse(page.url).query)
    assert query["lang"] == ["zh"], page.url
    assert title in page.inner_text("h1")
    if param:
        assert query[param[0]] == [param[1]]


def test_start_has_its_own_address(page, app_url):
    open_start(page, app_url, "lang=en&start_T=4")
    assert "not found" not in page.inner_text("body").lower()
    assert page.inner_text("h1").startswith("Start here")
    assert page.evaluate(BARS) == 4
