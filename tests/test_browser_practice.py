"""The practice page in headless Chromium, tried as a new user would: write a wrong rule, run it, read where it
goes wrong, fix it, pass; the code and the pass survive a reload; the editor fits a projector at 1280x720 in
lecture mode and a phone's 390 px; a link opens an exercise and never carries code."""
from pathlib import Path

import pytest

from devtools.app_server import IDLE

pytestmark = pytest.mark.browser

RIGHT = (Path(__file__).resolve().parent / "practice_solutions" / "four_stages.py").read_text(encoding="utf-8")
WRONG = RIGHT.replace("prediction = decayed.T @ k", "prediction = S.T @ k")        # read before the decay
VERDICT = '.st-key-practice_verdict [data-testid="stAlert"]'
WORDS = {"en": ("first wrong in the read (prediction)", "you read the prediction before the decay", "tests passed"),
         "zh": ("从读出（预测）开始出错", "你在衰减之前就读出了预测", "个测试")}


def open_practice(page, app_url, query: str, fresh: bool = False):
    page.goto(f"{app_url}/practice?{query}")
    page.wait_for_selector(".gdn-editor-code", timeout=60_000)
    if fresh:                                                   # a new visitor: nothing kept in this browser
        page.evaluate("localStorage.clear()")
        page.reload()
        page.wait_for_selector(".gdn-editor-code", timeout=60_000)
    page.wait_for_function(IDLE, timeout=60_000)


def run_and_read(page, how: str) -> str:
    """Run the editor's code (the button, or Ctrl+Enter in the editor) and return the verdict once shown."""
    before = page.locator(VERDICT).all_inner_texts()
    if how == "button":
        page.locator(".gdn-editor-run").click()
    else:
        page.locator(".gdn-editor-code").press("Control+Enter")
    page.wait_for_function(f"""(before) => {{ const now = [...document.querySelectorAll('{VERDICT}')].map(e => e.innerText);
        return now.length && JSON.stringify(now) !== JSON.stringify(before)
               && document.querySelector('.st-key-practice_verdict [data-testid="stCode"]')
               && !document.querySelector('[data-stale="true"]'); }}""", arg=before, timeout=90_000)
    page.wait_for_function(IDLE, timeout=60_000)
    return page.locator('.st-key-practice_verdict [data-testid="stCode"]').inner_text()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_write_run_read_the_verdict_fix_and_pass(page, app_url, lang):
    page.set_viewport_size({"width": 1440, "height": 900})
    open_practice(page, app_url, f"lang={lang}&practice_exercise=four_stages", fresh=True)
    assert "def step(S, k, v, alpha, beta)" in page.locator(".gdn-editor-code").input_value()   # the starter file
    page.locator(".gdn-editor-code").fill(WRONG)
    verdict = run_and_read(page, "button")
    where, mistake, summary = WORDS[lang]
    assert where in verdict and mistake in verdict
    assert summary in page.locator(VERDICT).first.inner_text()
    page.locator(".gdn-editor-code").fill(RIGHT)
    verdict = run_and_read(page, "keys")
    assert "✗" not in verdict and verdict.count("✓") == 4
    page.wait_for_function("""() => [...document.querySelectorAll('[data-testid="stSelectbox"] input')]
                              .some(e => e.value.includes('✓'))""", timeout=30_000)      # marked done at once
    # a reload keeps the code and the pass: the picker marks the exercise done
    page.reload()
    page.wait_for_selector(".gdn-editor-code", timeout=60_000)
    page.wait_for_function(IDLE, timeout=60_000)
    assert page.locator(".gdn-editor-code").input_value() == RIGHT
    page.wait_for_function("""() => [...document.querySelectorAll('[data-testid="stSelectbox"] input')]
                              .some(e => e.value.includes('✓'))""", timeout=30_000)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_lecture_mode_at_1280x720_shows_the_editor_and_run_on_the_first_screen(page, app_url, lang):
    page.set_viewport_size({"width": 1280, "height": 720})
    open_practice(page, app_url, f"lang={lang}&mode=lecture&practice_exercise=recurrence")
    run_box = page.locator(".gdn-editor-run").bounding_box()
    code = page.locator(".gdn-editor-code")
    assert run_box["y"] + run_box["height"] <= 720
    assert float(code.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")) >= 20       # read from the back


def test_a_phone_gets_a_usable_editor_and_a_link_that_opens_the_exercise_without_code(page, app_url):
    page.set_viewport_size({"width": 390, "height": 844})
    open_practice(page, app_url, "lang=zh&practice_exercise=gates")
    page.locator(".gdn-editor-code").fill("secret_code = 1\n")
    box = page.locator(".gdn-editor-code").bounding_box()
    assert box["width"] >= 300                                      # the gutter steps aside on a phone
    assert float(page.locator(".gdn-editor-code").evaluate("e => parseFloat(getComputedStyle(e).fontSize)")) >= 14
    assert "practice_exercise=gates" in page.url and "secret" not in page.url
