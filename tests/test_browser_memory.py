"""The memory-table page in headless Chromium: the player steps in the browser, whatever was clicked last,
and shows the numbers the server-side figure code made."""
import pytest

from gdn.lessons.memory import PRESETS
from devtools.app_server import SentMessages, wait_for_app

pytestmark = pytest.mark.browser

# The panels as drawn (gdn/figures/tables.py): each panel's cell texts, row by row, in the figure's order.
READ_FIGURE = """() => {
  const panels = {};
  for (const td of document.querySelectorAll('.gdn-player-figure td[data-panel]')) {
    const rows = panels[td.dataset.panel] = panels[td.dataset.panel] || [];
    (rows[+td.dataset.r] = rows[+td.dataset.r] || []).push(td.textContent);
  }
  return ["S_prev", "S_decayed", "write", "S_new", "keys", "read", "output"].map(name => panels[name]);
}"""
COUNTER = "document.querySelector('.gdn-counter')?.textContent || ''"
# Streamlit draws the main area's focus frame as an inset shadow on its ::before (once the key press made the
# click's focus "visible"); assets/app.css takes it away.
PAGE_FRAME = "getComputedStyle(document.querySelector('[data-testid=stMain]'), '::before').boxShadow"


def open_memory(page, app_url, query: str) -> None:
    page.goto(f"{app_url}/memory?{query}")
    wait_for_app(page)
    page.wait_for_selector(".gdn-player-figure td[data-panel]")


def at_step(page, text: str) -> None:
    page.wait_for_function(f"({COUNTER}).includes({text!r})", timeout=20_000)


def test_arrow_keys_step_through_the_update(page, app_url):
    open_memory(page, app_url, "lang=en&memory_preset=k1_update&memory_t=3")
    at_step(page, "Step 11 of 20")
    page.locator("h1").click()                                   # focus the page, not a widget
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    at_step(page, "Step 14 of 20")
    panels = page.evaluate(READ_FIGURE)
    assert panels[1] == [["1.5", "0.5"], ["-0.5", "1"]]          # decayed table alpha * S
    assert panels[2] == [["3.5", "-0.5"], ["0", "0"]]            # the write: only the error, on k₁'s row (dim 1)
    assert panels[3] == [["5", "0"], ["-0.5", "1"]]              # new table: k1 -> (5, 0)
    assert panels[6] == [["?", "?"]]                              # query not reached yet
    assert "dim 1" in page.inner_text(".gdn-narration")          # the narration names the changed row
    assert "memory_t=3" in page.url and "memory_stage=write" in page.url   # the browser keeps the link current
    page.keyboard.press("ArrowLeft")
    at_step(page, "Step 13 of 20")
    assert page.locator('[data-testid="stException"]').count() == 0
    assert not page.problems, page.problems


def test_chinese_page_opens_where_something_happens(page, app_url):
    """A fresh visit opens on the first write (token 1 of the default example writes k₁ = (1, 0) -> (3, 1)),
    not on the blank first decay of an empty table; the link stays short there."""
    open_memory(page, app_url, "lang=zh")
    assert "记忆表" in page.inner_text("h1")
    assert "第 4 / 15 步" in page.evaluate(COUNTER)
    panels = page.evaluate(READ_FIGURE)
    assert panels[2] == [["3", "1"], ["0", "0"]] and panels[3] == [["3", "1"], ["0", "0"]]
    assert "memory_t=" not in page.url and "memory_stage=" not in page.url
    assert not page.problems, page.problems


def test_fast_key_presses_are_all_counted_and_send_nothing(page, app_url):
    """Ten presses as fast as the keyboard repeats advance ten steps, and the browser sends the server
    nothing for them: no more messages over the burst than over an idle window of the same length."""
    sent = SentMessages(page)
    open_memory(page, app_url, "lang=en&memory_preset=k1_update&memory_t=1")
    at_step(page, "Step 1 of 20")
    page.locator("h1").click()
    sent.idle()
    for _ in range(10):
        page.keyboard.press("ArrowRight")
    at_step(page, "Step 11 of 20")
    sent.assert_quiet()
    page.keyboard.press("PageUp")                                # a presenter's clicker goes back too
    at_step(page, "Step 10 of 20")
    page.keyboard.press("End")
    at_step(page, "Step 20 of 20")
    page.keyboard.press("Home")
    at_step(page, "Step 1 of 20")
    assert "memory_t=1" in page.url and "memory_stage=" not in page.url   # not the opening: the link names it
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    at_step(page, "Step 4 of 20")                                # the opening, token 1's write
    page.wait_for_function("!location.search.includes('memory_t=')")      # there the link is short again
    assert not page.problems, page.problems


@pytest.mark.parametrize("control", ["stage button", "player button", "scrubber", "example picker",
                                     "sidebar language", "figure"])
def test_keys_step_after_clicking_any_control(page, app_url, control):
    """After a click on any kind of control, → and PageDown step and the page does not scroll."""
    open_memory(page, app_url, "lang=en&memory_preset=k1_update&memory_t=1")
    clicks = {
        "stage button": lambda: page.locator(".gdn-stage", has_text="3 Error").click(),
        "player button": lambda: page.locator(".gdn-next").click(),
        "scrubber": lambda: page.locator(".gdn-slider").click(),
        "example picker": lambda: (page.locator('[data-testid="stSelectbox"]').first.click(),
                                   page.keyboard.press("Escape")),
        "sidebar language": lambda: page.locator('[data-testid="stSidebar"] label', has_text="English").click(),
        "figure": lambda: page.locator(".gdn-player-figure").click(),
    }
    clicks[control]()
    if control == "example picker":                              # a closed select box: focus left on the page
        page.locator("h1").click()
    before = page.evaluate(COUNTER)
    n = int(before.split()[1])
    scroll = page.evaluate("document.querySelector('[data-testid=stMain]')?.scrollTop ?? window.scrollY")
    page.keyboard.press("ArrowRight")
    at_step(page, f"Step {n + 1} of")
    page.keyboard.press("PageDown")
    at_step(page, f"Step {n + 2} of")
    assert page.evaluate("document.querySelector('[data-testid=stMain]')?.scrollTop ?? window.scrollY") == scroll
    assert page.evaluate(PAGE_FRAME) == "none"                   # no focus frame drawn around the whole page
    assert not page.problems, page.problems


def test_play_and_the_write_animation(page, app_url):
    """Space plays (the button says Pause), Space again stops; a forward step into the write stage flies
    k and β⊙e into the write panel and marks the changed row."""
    open_memory(page, app_url, "lang=en&memory_preset=k1_update&memory_t=3&memory_stage=error")
    page.locator("h1").click()
    page.keyboard.press("ArrowRight")
    at_step(page, "Step 14 of 20")
    assert page.locator(".gdn-fly").count() == 4                 # k and β⊙e, two cells each, in flight
    assert page.evaluate("[...document.querySelectorAll('.gdn-player-figure td.changed')]"
                         ".map(td => td.dataset.panel + td.dataset.r)") == ["write0", "write0", "S_new0", "S_new0"]
    page.keyboard.press("Space")
    page.wait_for_function("document.querySelector('.gdn-play').textContent === 'Pause'")
    at_step(page, "Step 15 of 20")
    page.keyboard.press("Space")
    page.wait_for_function("document.querySelector('.gdn-play').textContent === 'Play'")
    assert not page.problems, page.problems


@pytest.mark.parametrize("lang, counter", [("zh", "第 14 / 20 步"), ("en", "Step 14 of 20")])
def test_lecture_mode_at_1280x720_keeps_the_story_and_the_whole_figure(page, app_url, lang, counter):
    """A projector: the stage's narration at >= 28 px, the step count, the example's name, and every panel
    of the figure inside the first screen."""
    page.set_viewport_size({"width": 1280, "height": 720})
    open_memory(page, app_url, f"lang={lang}&mode=lecture&memory_preset=k1_update&memory_t=3&memory_stage=write")
    at_step(page, counter)
    size = page.evaluate("parseFloat(getComputedStyle(document.querySelector('.gdn-narration')).fontSize)")
    assert size >= 28
    assert "(5,0)" in page.inner_text(".gdn-player-head")           # the example: "Update k₁: (3,1) → (5,0)"
    bottom = page.evaluate("Math.max(...[...document.querySelectorAll('.gdn-player-figure td[data-panel]')]"
                           ".map(td => td.getBoundingClientRect().bottom))")
    assert bottom <= 720, bottom
    assert not page.problems, page.problems


@pytest.mark.parametrize("preset", list(PRESETS))
def test_lecture_mode_at_1280x720_keeps_every_examples_token_strip_on_screen(page, app_url, preset):
    """The token strip (the scrubber at 1280x720) under every example's figure, inside the first screen, the
    numbers still at least 20 px and their labels 16 px: the 4-dim example's ended 73 px below it."""
    page.set_viewport_size({"width": 1280, "height": 720})
    open_memory(page, app_url, f"lang=en&mode=lecture&memory_preset={preset}&memory_t=1&memory_stage=write")
    page.wait_for_selector(".gdn-timeline .tok")
    got = page.evaluate("""() => {
      const size = (sel) => Math.min(...[...document.querySelectorAll('.gdn-player-figure ' + sel)]
                                     .filter(e => e.textContent.trim()).map(e => parseFloat(getComputedStyle(e).fontSize)));
      return {strip: document.querySelector('.gdn-timeline').getBoundingClientRect().bottom,
              cell: size('td.cell'), label: size(':is(th.col, th.row, td.axis)')}; }""")
    assert got["strip"] <= 720 and got["cell"] >= 20 and got["label"] >= 16, got
