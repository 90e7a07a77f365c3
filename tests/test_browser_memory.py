"""The memory-table page in headless Chromium: keyboard stepping changes the numbers people see."""
import pytest

from tests.app_server import wait_for_app

pytestmark = pytest.mark.browser

# The panels as drawn (gdn/figures/tables.py): each panel's cell texts, row by row, in the figure's order.
READ_FIGURE = """() => {
  const panels = {};
  for (const td of document.querySelectorAll('.gdn-memory td[data-panel]')) {
    const rows = panels[td.dataset.panel] = panels[td.dataset.panel] || [];
    (rows[+td.dataset.r] = rows[+td.dataset.r] || []).push(td.textContent);
  }
  return ["S_prev", "S_decayed", "write", "S_new", "keys", "read", "output"].map(name => panels[name]);
}"""


def test_arrow_keys_step_through_the_update(page, app_url):
    page.goto(f"{app_url}/memory?lang=en&memory_preset=k1_update&memory_t=3")
    wait_for_app(page)
    assert "Step 11 of 20" in page.inner_text("body")
    page.locator("h1").click()                                   # focus the page, not a widget
    for _ in range(3):
        page.keyboard.press("ArrowRight")
        page.wait_for_timeout(700)
    page.wait_for_function("document.body.innerText.includes('Step 14 of 20')", timeout=20_000)
    panels = page.evaluate(READ_FIGURE)
    assert panels[1] == [["1.5", "0.5"], ["-0.5", "1"]]          # decayed table alpha * S
    assert panels[2] == [["3.5", "-0.5"], ["0", "0"]]            # the write: only the error, on k₁'s row (dim 1)
    assert panels[3] == [["5", "0"], ["-0.5", "1"]]              # new table: k1 -> (5, 0)
    assert panels[6] == [["?", "?"]]                              # query not reached yet
    page.keyboard.press("ArrowLeft")
    page.wait_for_function("document.body.innerText.includes('Step 13 of 20')", timeout=20_000)
    assert page.locator('[data-testid="stException"]').count() == 0
    assert "Traceback" not in page.inner_text("body")
    assert not page.problems, page.problems


def test_chinese_page_renders_without_errors(page, app_url):
    page.goto(f"{app_url}/memory?lang=zh")
    wait_for_app(page)
    assert "记忆表" in page.inner_text("h1")
    assert not page.problems, page.problems


def test_fast_key_presses_are_all_counted(page, app_url):
    """Eight → presses 0.2 s apart advance eight steps (Streamlit's own shortcuts merged presses that
    arrived during a run: 8 gave 4), and ← / Home after them land where they should."""
    page.goto(f"{app_url}/memory?lang=en&memory_preset=k1_update")
    wait_for_app(page)
    assert "Step 1 of 20" in page.inner_text("body")
    page.locator("h1").click()
    for _ in range(8):
        page.keyboard.press("ArrowRight")
        page.wait_for_timeout(200)
    page.wait_for_function("document.body.innerText.includes('Step 9 of 20')", timeout=30_000)
    page.wait_for_timeout(1500)                                  # nothing arrives late and moves it further
    assert "Step 9 of 20" in page.inner_text("body")
    page.keyboard.press("PageUp")                                # a presenter's clicker goes back too
    page.wait_for_function("document.body.innerText.includes('Step 8 of 20')", timeout=20_000)
    page.keyboard.press("Home")
    page.wait_for_function("document.body.innerText.includes('Step 1 of 20')", timeout=20_000)
    assert "memory_t=" not in page.url                           # back at the default: the link is short again
    assert not page.problems, page.problems

