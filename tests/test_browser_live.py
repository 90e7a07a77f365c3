"""A live class through deploy/serve-class.sh --replicas 2: a teacher's projector and 12 phone-sized
students in their own browser contexts (own cookies, own localStorage), spread over both replicas by
nginx, all writing one SQLite store. Every vote is counted once on the projector, a changed answer
replaces the old one, the phones follow the teacher, and a student has no way to the teacher's controls."""
import re
import signal
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from gdn.live.store import Store
from devtools import class_server
from devtools.app_server import free_port
from tests.test_deploy import wait_ok

ROOT = Path(__file__).resolve().parent.parent
STUDENTS = 12
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
# The bound: a vote on the projector within 2 s. The projector's bars poll every 0.5 s
# (app_pages/_live.py), each poll a few ms of replica CPU, so this test asserts it. A teacher's move on the
# twelve phones (a poll every 1 s each, thirteen browsers on a small CI machine) is allowed 10 s here: 5 s
# timed out twice in whole runs on the 2-core box (round 2's follow, with the rest of the suite's processes
# around); bench/live_class.py and tests/test_browser_follow.py time the phones' side.
PROJECTOR_MS = 2_000
FOLLOW_MS = 10_000
# A phone's buttons of round 2, open for votes. (Three whole runs once showed a phone past round 2 after one
# click on "next": the same click reached the store twice. A new round now names the round it follows, so a
# repeat changes nothing: gdn/live/store.py, _teacher_update.)
ROUND_2_OPEN = ".st-key-live_opt_2_0 button:enabled"


@pytest.fixture
def two_replicas(tmp_path):
    port = free_port()
    proc, lines = class_server.serving(2, port, env={"GDN_CLASS_DB": str(tmp_path / "class.db")})  # one store
    logs = Path(re.search(r"logs in (\S+)\)", lines[-1]).group(1))
    url = f"http://127.0.0.1:{port}"
    assert wait_ok(f"{url}/_stcore/health", 60)
    try:
        yield url, logs, Store(str(tmp_path / "class.db"))
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)


def button(page, key: str):
    """The button of widget `key` (the visible one: while a page reruns, an old copy may linger hidden)."""
    return page.locator(f".st-key-{key} button:visible").first


def projector_counts(page) -> list[int]:
    return [int(c) for c in page.locator(".gdn-tally .opt").evaluate_all("els => els.map(e => e.dataset.count)")]


def wait_counts(page, expected: list[int], timeout: int = PROJECTOR_MS) -> None:
    """The projector shows exactly `expected` (per option) and their sum as the number of answers."""
    page.wait_for_function(
        """([want, n]) => {
             const got = [...document.querySelectorAll('.gdn-tally .opt')].map(e => +e.dataset.count);
             const total = document.querySelector('.gdn-live-count');
             return JSON.stringify(got) === JSON.stringify(want) && total && +total.dataset.n === n; }""",
        arg=[expected, sum(expected)], timeout=timeout)


def tap(student, option: int, round_: int) -> None:
    """Tap an option and wait for the acknowledgement (shown only after the vote is committed)."""
    student.locator(f".st-key-live_opt_{round_}_{option} button").click()
    student.wait_for_selector(f".st-key-live_opt_{round_}_{option} button[kind=primary]", timeout=20_000)
    student.wait_for_selector('[data-testid="stAlertContentSuccess"]', timeout=20_000)


@pytest.mark.browser
def test_a_teacher_and_twelve_phones_through_two_replicas(two_replicas, browser):
    url, logs, store = two_replicas
    teacher_context = browser.new_context(viewport={"width": 1280, "height": 720})
    teacher = teacher_context.new_page()
    teacher.goto(f"{url}/classroom?lang=en&mode=lecture")
    button(teacher, "live_start").click(timeout=90_000)
    code = teacher.locator(".gdn-live-code").get_attribute("data-code", timeout=30_000)
    button(teacher, "live_next").click()              # no question yet: "next" asks the first
    teacher.wait_for_selector(".gdn-tally", timeout=20_000)
    n_options = teacher.locator(".gdn-tally .opt").count()
    assert projector_counts(teacher) == [0] * n_options

    students, contexts = [], [teacher_context]
    for i in range(STUDENTS):
        context = browser.new_context(**PHONE)
        page = context.new_page()
        page.goto(f"{url}/classroom?lang={'zh' if i % 2 else 'en'}&join={code.lower()}")
        page.wait_for_selector(".st-key-live_opt_1_0 button", timeout=90_000)
        students.append(page)
        contexts.append(context)

    expected = [0] * n_options
    for i, student in enumerate(students):
        tap(student, i % n_options, 1)
        expected[i % n_options] += 1
        wait_counts(teacher, expected)                 # each vote on the projector, counted once
    for i, student in enumerate(students[:4]):         # four change their minds: still one vote each
        new = (i + 1) % n_options
        tap(student, new, 1)
        expected[i % n_options] -= 1
        expected[new] += 1
        wait_counts(teacher, expected)
    assert sum(expected) == STUDENTS

    # A student (no secret) opening the classroom page gets no control of this room.
    outsider = students[0].context.new_page()
    outsider.goto(f"{url}/classroom?lang=en")
    button(outsider, "live_start").wait_for(timeout=60_000)
    assert outsider.locator(".st-key-live_reveal, .st-key-live_reset, .st-key-live_close").count() == 0
    outsider.close()

    button(teacher, "live_reveal").click()
    teacher.wait_for_selector(".gdn-tally .opt.right", timeout=PROJECTOR_MS)
    right = int(teacher.locator(".gdn-tally .opt.right").get_attribute("data-option"))
    for student in students:                           # every phone shows the answer, and can no longer vote
        student.wait_for_selector(f".st-key-live_opt_1_{right} button:disabled >> text=✓", timeout=FOLLOW_MS)
    assert projector_counts(teacher) == expected       # the reveal changed no count

    button(teacher, "live_next").click()
    teacher.wait_for_selector(".st-key-live_pick_2", timeout=FOLLOW_MS)      # round 2 is live
    for i, student in enumerate(students):             # the phones follow the teacher to the next question
        try:
            student.wait_for_selector(ROUND_2_OPEN, timeout=FOLLOW_MS)
        except PlaywrightTimeout:                      # which phone, and what it shows instead
            pytest.fail(f"phone {i} did not follow to round 2 (the store is at round {store.room(code).round}); "
                        f"it shows: {student.inner_text('body')[:600]!r}")
    assert store.room(code).round == 2                 # one click on "next", one new round
    wait_counts(teacher, [0] * teacher.locator(".gdn-tally .opt").count())

    button(teacher, "live_close").click()
    teacher.wait_for_selector(".st-key-live_start button", timeout=20_000)
    for student in students[:3]:
        student.wait_for_selector('[data-testid="stAlertContentInfo"]', timeout=FOLLOW_MS)
    for context in contexts:
        context.close()
    # nginx logs a websocket when it closes: the sessions were spread over both replicas.
    streams = [line for line in (logs / "access.log").read_text().splitlines() if "/_stcore/stream" in line]
    assert len({re.search(r"-> (\S+)", line).group(1) for line in streams}) == 2
