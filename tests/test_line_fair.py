"""The heavy-work line is fair per client, not per session (issue 49): one client's many tabs hold at most
per_client jobs, and the trainings leave a worker to the short jobs, so another visitor's Run starts at
once and is shown its true place. The rules on slots finished by hand (no processes, nothing timed), then
the probe's case on the real line with two spawned workers: 36 sessions of one client pressing Train."""
import time
from concurrent.futures import Future

import pytest

from app_pages._support.jobs import ClientBusy, JobLine, QueueFull
from app_pages._support.workers import Slot, pid
from tests.job_fixtures import hold

WAIT = 60.0
LONG_LEASE = 600.0            # nobody leaves the line in these tests unless it says so
CLASS = "203.0.113.7"         # the client with 36 tabs
OTHER = "192.168.1.23"


class HandSlot:
    """A worker that runs nothing: the test ends its job (finish) when it likes."""
    on_progress = None

    def __init__(self):
        self.future: Future | None = None

    def submit(self, job_id, fn, args) -> Future:
        self.future = Future()
        return self.future

    def finish(self, value="done") -> None:
        future, self.future = self.future, None
        future.set_result(value)                 # the line's callback runs here, before finish returns

    def cancel(self, job_id) -> None:
        pass

    def replace(self) -> None:
        pass

    def shutdown(self) -> None:
        pass


def by_hand(workers: int, per_client: int = 2, cap: int = 32):
    slots = [HandSlot() for _ in range(workers)]
    return JobLine(slots, cap=cap, results={}, lease_s=LONG_LEASE, per_client=per_client), slots


def train(line, session, client):
    return line.submit(session, "recall.train", None, hold, ("never",), client=client)


def run(line, session, client, key=None):
    return line.submit(session, "real_model.run", key, hold, ("never",), client=client)


def slot_of(line, job):
    return line.slots[next(i for i, j in line._running.items() if j is job)]


def test_one_client_holds_at_most_per_client_jobs_however_many_sessions_it_opens():
    line, _ = by_hand(2)
    try:
        taken, refused = [], []
        for tab in range(36):
            try:
                taken.append(train(line, f"tab{tab}", CLASS))
            except ClientBusy as e:
                refused.append(e)
        assert len(taken) == 2 and len(refused) == 34 and line.held(CLASS) == 2
        assert isinstance(refused[0], QueueFull) and refused[0].held == 2      # callers knowing QueueFull refuse it too
        assert run(line, "visitor", OTHER).state == "running"                  # another client is not refused
        again = run(line, "tab1", CLASS)           # a tab pressing another button: its earlier job goes first
        assert taken[1].state == "cancelled" and again.state == "queued" and line.held(CLASS) == 2
        theirs = run(line, "visitor2", OTHER, key=("prompt", 3))
        assert run(line, "tab4", CLASS, key=("prompt", 3)) is theirs            # joining a job costs no worker
        assert line.held(CLASS) == 3 and line.held(OTHER) == 2
        with pytest.raises(ClientBusy):                                        # a job of its own does
            run(line, "tab3", CLASS, key=("prompt", 2))
        for tab in ("tab0", "tab1", "tab4"):       # its tabs leave (or their jobs end): its places come back
            line._leave(tab)
        assert line.held(CLASS) == 0 and theirs.state != "cancelled"          # the other client still watches
        assert train(line, "tab5", CLASS).state in ("queued", "running")
    finally:
        line.close()


def test_sessions_without_a_client_are_each_their_own_client():
    line, _ = by_hand(1, per_client=1)
    try:
        jobs = [line.submit(f"s{i}", "hold", None, hold, ("never",)) for i in range(3)]
        assert [j.state for j in jobs] == ["running", "queued", "queued"]
    finally:
        line.close()


def test_trainings_leave_a_worker_to_short_jobs_which_pass_waiting_trainings():
    line, slots = by_hand(3, per_client=1)
    try:
        trainings = [train(line, f"t{i}", f"10.0.0.{i}") for i in range(4)]
        assert [t.state for t in trainings] == ["running", "running", "queued", "queued"]   # 2 of 3 workers
        first = run(line, "r1", OTHER)
        assert first.state == "running"                                        # the kept worker: at once
        second = run(line, "r2", "192.168.1.24")
        # who starts before whom: the Run as soon as the first Run ends, the trainings as trainings end
        assert [line.ahead(j) for j in (second, *trainings[2:])] == [0, 1, 2]
        assert line.estimate(second) < line.expected("recall.train")           # not behind a training
        slot_of(line, first).finish()
        assert second.state == "running" and trainings[2].state == "queued"
        slot_of(line, second).finish()                                         # its worker idles: the lane is full
        assert [t.state for t in trainings[2:]] == ["queued", "queued"] and len(line._running) == 2
        slot_of(line, trainings[0]).finish()
        assert trainings[2].state == "running" and line.ahead(trainings[3]) == 0
    finally:
        line.close()


def test_a_training_first_in_line_starts_before_the_runs_behind_it_while_its_lane_has_room():
    """Runs pass only a training that may not start yet: otherwise first come, first served, so the
    trainings are not starved by a stream of Runs."""
    line, slots = by_hand(3, per_client=1)
    try:
        running = [train(line, "t0", "10.0.0.0"), run(line, "r0", "10.0.1.0"), run(line, "r1", "10.0.1.1")]
        assert all(j.state == "running" for j in running)
        waiting_training, waiting_run = train(line, "t1", "10.0.0.1"), run(line, "r2", "10.0.1.2")
        assert (line.ahead(waiting_training), line.ahead(waiting_run)) == (0, 1)
        slot_of(line, running[1]).finish()
        assert waiting_training.state == "running" and waiting_run.state == "queued"
    finally:
        line.close()


def test_with_one_worker_a_training_still_runs():
    line, slots = by_hand(1)
    try:
        assert line.long_slots == 1 and train(line, "t", CLASS).state == "running"
    finally:
        line.close()


# -- the probe's case, real workers -------------------------------------------------------------------

def wait_until(condition, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the line never reached the expected state"
        time.sleep(0.01)


@pytest.fixture(scope="module")
def real_line():
    slots = [Slot(i) for i in range(2)]
    for s in slots:
        s.warm(pid).result(WAIT)
    line = JobLine(slots, cap=32, results={}, lease_s=LONG_LEASE, per_client=2)
    yield line
    line.close()


def test_36_tabs_of_one_client_training_leave_another_clients_run_a_worker_and_its_true_place(real_line, tmp_path):
    line = real_line
    trained, ran = tmp_path / "trained", tmp_path / "ran"
    taken = []
    for tab in range(36):
        try:
            taken.append(line.submit(f"tab{tab}", "recall.train", None, hold, (str(trained),), client=CLASS))
        except ClientBusy:
            pass
    assert len(taken) == 2 and line.waiting == 1
    wait_until(lambda: taken[0].progress)                                 # the first training is in a worker

    pressed = time.monotonic()
    visitor = line.submit("visitor", "real_model.run", ("prompt", 0), hold, (str(ran),), client=OTHER)
    assert line.ahead(visitor) == 0
    wait_until(lambda: visitor.progress, timeout=10.0)                   # it runs in a worker, within 10 s
    started_after = time.monotonic() - pressed
    print(f"another client's Run started in a worker {started_after:.3f} s after it was pressed")

    # three more visitors' Runs while it runs: each is shown how many start before it, and so is the training
    later = [line.submit(f"visitor{i}", "real_model.run", ("prompt", i), hold, (str(ran),), client=f"192.168.1.{30 + i}")
             for i in (1, 2, 3)]
    waiting = [*later, taken[1]]
    shown = {job.id: line.ahead(job) for job in waiting}
    assert [shown[j.id] for j in waiting] == [0, 1, 2, 3]
    assert line.estimate(later[0]) < line.estimate(taken[1])
    ran.touch()
    assert all(j.wait(WAIT) and j.result == "released" for j in [visitor, *later])
    assert taken[1].state == "queued"                                     # the long lane was full all along
    trained.touch()
    assert all(j.wait(WAIT) and j.result == "released" for j in taken)
    started = sorted(waiting, key=lambda j: j.started_at)
    assert {j.id: started.index(j) for j in waiting} == shown            # the places shown were the places kept
    assert line.held(CLASS) == 0


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_tab_past_its_clients_share_is_told_why_and_what_to_do(lang, tmp_path, monkeypatch):
    """The recall page pressed in a further tab of a client that holds its share already: the page says
    so in the visitor's language, and trains nothing."""
    import threading

    from gdn.i18n import t
    from app_pages._support import compute
    from tests.apptest import open_app
    monkeypatch.setattr(compute, "client_address", lambda: None)    # loopback (AppTest's is a stand-in object)
    line, release, watching = compute.job_line(), tmp_path / "go", threading.Event()
    other_tabs = {f"other-tab{i}": line.submit(f"other-tab{i}", "hold", None, hold, (str(release),),
                                               client=compute.LOCAL_CLIENT)
                  for i in range(line.per_client)}

    def keep_watching():                           # the other tabs stay open meanwhile (the line's lease)
        while not watching.wait(0.5):
            for session, job in other_tabs.items():
                line.touch(job, session)
    threading.Thread(target=keep_watching, daemon=True).start()
    try:
        at = open_app(lang, page="app_pages/recall.py")
        at.button(key="recall_train").click().run(timeout=WAIT)
        assert not at.exception and at.error[0].value == t("jobs.yours", lang, n=line.per_client)
        assert "recall_train_pending" not in at.session_state and "recall_quick_run" not in at.session_state
        assert not any(j.kind == "recall.train" for j in line._running.values())
    finally:
        watching.set()
        release.touch()
        assert all(j.wait(WAIT) for j in other_tabs.values())
