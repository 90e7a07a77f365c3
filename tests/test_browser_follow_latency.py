"""Follow-me keeps up (issue 40): over 10 page switches and 10 steps of the teacher, a 390 px phone opens
the teacher's page within 3 s and shows the teacher's step within 2 s (p95); the followed memory table's
cells stay at least 20 px wide on that phone, its numbers at least 14 px, in Chinese and English."""
import math
import time

import pytest

from devtools.app_server import start_server, wait_for_app
from tests.test_browser_follow import STEP, at_address, open_room, step_of

# A second try, once (as tests/test_browser_live.py says why): a phone once stayed a step behind for 30 s in a
# whole CI run, and the step timing of a run on a busy 2-core machine is not the phone's.
pytestmark = [pytest.mark.browser, pytest.mark.flaky(reruns=1)]
PAGE_S, STEP_S = 3.0, 2.0           # the bounds, p95 over 10 switches
SWITCHES = 10
PAGES = ("memory_table", "compare")
# Every shown cell of the followed memory table (a hidden frame's have no box): its width and its text's size, in CSS px.
CELLS = """() => [...document.querySelectorAll('.gdn-player-figure td[data-panel]')]
  .filter(td => td.getClientRects().length > 0).map(td => {
  const box = td.getBoundingClientRect();
  return {w: box.width, font: parseFloat(getComputedStyle(td).fontSize), text: td.textContent.trim()};
})"""
# Header cells whose boxes overlap another header's: pairs of column titles drawn on one another.
OVERLAPS = """() => {
  const heads = [...document.querySelectorAll('.gdn-player-figure th')].map(th => th.getBoundingClientRect())
    .filter(b => b.width > 0 && b.height > 0);
  let n = 0;
  for (let i = 0; i < heads.length; i++) for (let j = i + 1; j < heads.length; j++) {
    const a = heads[i], b = heads[j];
    if (a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1) n++;
  }
  return n;
}"""


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[math.ceil(0.95 * len(ordered)) - 1]


@pytest.fixture(scope="module")
def live_server(tmp_path_factory):
    """A server of this test's own (not the shared one other tests have warmed), for both languages: each
    language's room is its own, and each page's first load in a language is untimed (below)."""
    with start_server(env={"GDN_CLASS_DB": str(tmp_path_factory.mktemp("follow") / "class.db")}) as (url, _):
        yield url


def _switch_page(teacher, name: str) -> None:
    teacher.locator(f'[data-testid="stTopNavLink"][href$="/{name}"]').click()
    at_address(teacher, f"/{name}")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_phone_keeps_up_with_the_teacher(live_server, browser, lang):
    teacher, student, code = open_room(browser, live_server, lang)
    pages, drawn, steps = [], [], []
    loads = []
    for name in PAGES:                    # each page's first load on a fresh server (imports, caches) is untimed:
        _switch_page(teacher, name)       # the bound is for a class in progress, not the server's cold start
        at_address(student, rf"/{name}\?.*follow={code}")
        student.wait_for_selector(".gdn-player-figure td[data-panel]", timeout=90_000)
        wait_for_app(teacher)
    student.on("load", lambda: loads.append(student.url))
    for i in range(SWITCHES):
        name = PAGES[i % 2]
        _switch_page(teacher, name)
        t0 = time.monotonic()             # from the projector showing the page (its address), not the click
        at_address(student, rf"/{name}\?.*follow={code}")
        pages.append(time.monotonic() - t0)
        student.wait_for_selector(".gdn-player-figure td[data-panel]", timeout=60_000)
        drawn.append(time.monotonic() - t0)
        wait_for_app(teacher)
    _switch_page(teacher, "memory_table")
    at_address(student, rf"/memory_table\?.*follow={code}")
    teacher.wait_for_selector(".gdn-player-figure td[data-panel]")
    student.wait_for_selector(".gdn-player-figure td[data-panel]", timeout=60_000)
    wait_for_app(teacher)
    wait_for_app(student)
    student.wait_for_function(f"(n) => ({STEP})() === n", arg=step_of(teacher), timeout=30_000)
    for i in range(SWITCHES):             # a teacher steps with the player's Next and with the clicker's key
        if i % 2:
            teacher.keyboard.press("ArrowRight")
        else:
            teacher.locator(".gdn-player .gdn-next").first.click()
        want = step_of(teacher)
        t0 = time.monotonic()
        student.wait_for_function(f"(n) => ({STEP})() === n", arg=want, timeout=30_000)
        steps.append(time.monotonic() - t0)
    median = lambda values: sorted(values)[len(values) // 2]
    print(f"follow-me {lang}: page p50 {median(pages):.2f} p95 {p95(pages):.2f} {pages}; drawn {drawn};",
          f"loads {len(loads)}; step p50 {median(steps):.2f} p95 {p95(steps):.2f} {steps}")
    assert p95(pages) <= PAGE_S, pages
    assert p95(steps) <= STEP_S, steps

    # The followed memory table on a 390 px phone: every cell readable, no header drawn on another.
    cells = student.evaluate(CELLS)
    assert cells and min(c["w"] for c in cells) >= 20, sorted(c["w"] for c in cells)[:5]
    numbers = [c for c in cells if any(ch.isdigit() for ch in c["text"])]
    assert numbers and min(c["font"] for c in numbers) >= 14, min(c["font"] for c in numbers)
    assert student.evaluate(OVERLAPS) == 0
    teacher.context.close()
    student.context.close()
