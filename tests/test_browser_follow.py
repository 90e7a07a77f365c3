"""Follow me, in two browsers on one server and one store: the teacher switches follow-me on and steps
through the memory table; a phone-sized student who joined with the code opens the same page, example
and step, each step within 2 s; when the teacher goes back to the classroom the phone shows the live
question again."""
import re
import time
from pathlib import Path

import pytest

from gdn.i18n import t
from devtools.app_server import start_server, wait_for_app

# A second try, once (tests/test_browser_live.py says why): in a whole CI run a burst of steps once reached the
# phone after more than SLOW_S while the other test worker drove its own browsers; alone it passes.
pytestmark = [pytest.mark.browser, pytest.mark.flaky(reruns=1)]
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
FOLLOW_S = 2.0          # the bound: the student's screen shows the teacher's step within 2 s
SLOW_S = 6.0            # the most any one burst may take on a loaded test machine
# The player's position as the page shows it: the step number of "Step n of N" / "第 n / N 步".
STEP = "() => +((document.querySelector('.gdn-counter')?.textContent || '').match(/\\d+/) || [0])[0]"


@pytest.fixture
def live_server(tmp_path):
    with start_server(env={"GDN_CLASS_DB": str(tmp_path / "class.db")}) as (url, _):
        yield url


def at_address(page, pattern: str, timeout: float = 30) -> None:
    """Wait until the page's address matches `pattern` (a page switch in the app is a history push)."""
    page.wait_for_function("(p) => new RegExp(p).test(window.location.href)", arg=pattern, timeout=timeout * 1000)


def step_of(page) -> int:
    return page.evaluate(STEP)


def follows_within(student, step: int, bound: float) -> float:
    """Seconds until the student's player shows `step` (fails past `bound`)."""
    t0 = time.monotonic()
    student.wait_for_function(f"(n) => ({STEP})() === n", arg=step, timeout=bound * 1000)
    return time.monotonic() - t0


def open_room(browser, url: str, lang: str, ready: str = ".st-key-live_student"):
    """A teacher (1280x720, English) opens a room with follow-me on; a phone in `lang` joins it and shows
    `ready`. -> (teacher, student, code)."""
    teacher = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
    teacher.goto(f"{url}/classroom?lang=en")
    teacher.locator(".st-key-live_start button:visible").first.click(timeout=90_000)
    code = teacher.locator(".gdn-live-code").get_attribute("data-code", timeout=30_000)
    teacher.locator(".st-key-live_follow label:visible").first.click()
    teacher.wait_for_selector(".st-key-live_follow input:checked", timeout=20_000)
    student = browser.new_context(**PHONE).new_page()
    student.goto(f"{url}/classroom?lang={lang}&join={code}")
    student.wait_for_selector(ready, timeout=90_000)
    return teacher, student, code


def test_a_phone_follows_the_teacher_through_the_memory_table(live_server, browser):
    url = live_server
    teacher, student, code = open_room(browser, url, "zh", ready=".st-key-live_student [data-testid=stAlertContentInfo]")
    assert "/classroom" in student.url                  # the teacher projects the classroom: the phone stays

    teacher.locator('[data-testid="stTopNavLink"][href$="/memory_table"]').click()
    wait_for_app(teacher)
    teacher.wait_for_selector(".gdn-player-figure td[data-panel]")
    at_address(student, r"/memory_table\?.*follow=" + code)        # the page the teacher projects, opened
    student.wait_for_selector(".gdn-player-figure td[data-panel]", timeout=60_000)
    assert "lang=zh" in student.url                     # the student keeps their own language
    start = step_of(teacher)                           # where the page opens (the first change of the table)
    follows_within(student, start, 30)                 # the player unpacked, at the teacher's step
    wait_for_app(student)                              # the phone's page has settled: now the class steps together

    teacher.locator("h1").click()
    took = []
    for presses in (3, 1, 4):                           # bursts of key presses, as a teacher talks through them
        for _ in range(presses):
            teacher.keyboard.press("ArrowRight")
        took.append(follows_within(student, step_of(teacher), SLOW_S))
    # the 2 s for the typical burst; a 2-core machine running the two browsers and the server can
    # stretch a single one (seen at load 8-14), which still has to arrive
    assert sorted(took)[1] <= FOLLOW_S, took
    assert step_of(student) == start + 8
    assert student.get_by_text(t("live.following", "zh", code=code)).count() == 1    # the phone says whom it follows

    # Another example: the phone opens it (a page run), then follows its steps again.
    teacher.locator('[data-testid="stMain"] [data-testid="stSelectbox"]').first.click()
    teacher.get_by_role("option", name=t("memory.preset_k1_update", "en")).click()
    at_address(teacher, "memory_preset=k1_update")
    at_address(student, "memory_preset=k1_update")
    student.wait_for_selector(".gdn-player-figure td[data-panel]", timeout=60_000)
    wait_for_app(student)
    wait_for_app(teacher)
    teacher.locator("h1").click()
    teacher.keyboard.press("End")
    assert follows_within(student, step_of(teacher), SLOW_S) <= SLOW_S
    assert step_of(student) == step_of(teacher) > start + 8
    # The student's own table is the teacher's: the same numbers in every cell.
    cells = "() => [...document.querySelectorAll('.gdn-player-figure td[data-panel]')].map(td => td.textContent)"
    assert student.evaluate(cells) == teacher.evaluate(cells)

    # Back to the classroom: the phone returns to the live question.
    teacher.locator('[data-testid="stTopNavLink"][href$="/classroom"]').click()
    at_address(teacher, "/classroom")                  # a page link right after the steps still switches
    at_address(student, r"/classroom\?.*join=" + code)
    student.wait_for_selector(".st-key-live_student", timeout=60_000)
    teacher.context.close()
    student.context.close()


def test_a_phone_follows_the_teacher_to_an_exercise_and_has_its_own_code_judged(live_server, browser):
    """Practice in a live class: the teacher projects exercise 3 (the gates); the phone opens it, its learner
    writes a wrong file and runs it on the phone, reads the verdict there, and the teacher's page never shows
    the student's code (the link carries the exercise only)."""
    solution = Path(__file__).resolve().parent / "practice_solutions" / "gates.py"
    wrong = solution.read_text(encoding="utf-8").replace("return g, torch.sigmoid(b)", "return g, b")
    url = live_server
    teacher, student, code = open_room(browser, url, "en", ready=".st-key-live_student [data-testid=stAlertContentInfo]")
    teacher.locator('[data-testid="stTopNavLink"][href$="/practice"]').click()      # in the app: the session stays
    teacher.wait_for_selector(".gdn-editor-code", timeout=60_000)
    teacher.locator('[data-testid="stSelectbox"]').first.click()
    teacher.get_by_role("option", name=re.compile(r"^3\. ")).click()                  # exercise 3, the gates
    at_address(teacher, r"practice_exercise=gates")
    at_address(student, r"/practice\?.*practice_exercise=gates.*follow=" + code, timeout=60)
    student.wait_for_selector(".gdn-editor-code", timeout=60_000)
    student.locator(".gdn-editor-code").fill(wrong)
    student.locator(".gdn-editor-run").click()
    student.wait_for_function("""() => [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stCode"]')]
                                 .some(e => e.innerText.includes('β = sigmoid(b)'))""", timeout=90_000)
    box = student.locator(".gdn-editor-code").bounding_box()
    assert box["width"] >= 300
    assert "return g, b" not in teacher.locator(".gdn-editor-code").input_value()     # the phone's code stays there


# Every active panel's cell (framed, td.cell.active) on the phone's screen: inside the viewport's width and,
# once the student has scrolled the figure to the top of the screen, its height.
ACTIVE_ON_SCREEN = """() => {
  const cells = [...document.querySelectorAll('.gdn-player-figure td.cell.active')];
  const out = cells.filter((c) => { const r = c.getBoundingClientRect();
                                    return r.left < -1 || r.right > innerWidth + 1 || r.top < 0 || r.bottom > innerHeight; });
  return {active: cells.length, off: out.map((c) => c.dataset.panel), pageWider: document.documentElement.scrollWidth > innerWidth};
}"""


def test_a_phone_following_the_memory_table_shows_each_stage_on_screen(live_server, browser):
    """A 390x844 phone following the memory page through all five stages of a token: the panels each stage is
    about are on the phone's screen with no sideways scrolling, its stage buttons keep their words whole, and
    it is told to tap rather than to press keys."""
    teacher, student, code = open_room(browser, live_server, "zh", ready=".st-key-live_student [data-testid=stAlertContentInfo]")
    teacher.locator('[data-testid="stTopNavLink"][href$="/memory_table"]').click()
    wait_for_app(teacher)
    teacher.wait_for_selector(".gdn-player-figure td[data-panel]")
    at_address(student, r"/memory_table\?.*follow=" + code)
    student.wait_for_selector(".gdn-player-figure td[data-panel]", timeout=60_000)
    wait_for_app(student)
    teacher.locator("h1").click()
    teacher.keyboard.press("Home")                      # token 1, decay: the five stages follow
    student.locator(".gdn-player-figure").evaluate("(e) => e.scrollIntoView({block: 'start'})")
    stages = []
    for stage in range(5):
        if stage:
            teacher.keyboard.press("ArrowRight")
        follows_within(student, step_of(teacher), 30)
        student.locator(".gdn-player-figure").evaluate("(e) => e.scrollIntoView({block: 'start'})")
        seen = student.evaluate(ACTIVE_ON_SCREEN)
        stages.append(student.locator(".gdn-stage[aria-pressed=true]").inner_text())
        assert seen["active"] > 0 and not seen["off"] and not seen["pageWider"], (stages[-1], seen)
    assert len(set(stages)) == 5
    heights = student.eval_on_selector_all(".gdn-stage", "(bs) => bs.map((b) => b.getBoundingClientRect().height)")
    assert max(heights) < 1.6 * min(heights) and max(heights) < 60, heights      # one line each: no word split
    assert "点" in student.locator(".gdn-counter").inner_text()                   # a phone taps, it has no keys
    teacher.context.close()
    student.context.close()
