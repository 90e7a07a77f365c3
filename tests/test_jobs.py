"""app_pages._support.jobs and workers: the fair line of heavy jobs run in worker processes. Real spawned
workers (two), jobs from tests/job_fixtures.py; nothing is timed: the tests wait on the jobs' own events."""
import os
import signal
import time
from pathlib import Path

import pytest

from gdn.lru import LRU
from app_pages._support.jobs import JobLine, QueueFull, WorkerLost
from app_pages._support.workers import Slot, cores, pid
from tests.job_fixtures import fail, finish_after, hold, made_once, told_to_stop

WAIT = 60.0


@pytest.fixture(scope="module")
def line():
    slots = [Slot(i) for i in range(2)]
    for s in slots:
        s.warm(pid).result(WAIT)
    line = JobLine(slots, cap=3, results={"square": LRU(8)}, lease_s=1.0)
    yield line
    line.close()


def wait_until(condition, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the line never reached the expected state"
        time.sleep(0.01)


def held(line, session: str, release: Path):
    """A job that runs until `release` exists, watched by `session` (kept alive by touches)."""
    job = line.submit(session, "hold", None, hold, (str(release),))
    return job


def test_cores_reads_the_override_the_affinity_and_the_cgroup_quota(tmp_path):
    quota = tmp_path / "cpu.max"
    quota.write_text("150000 100000\n")
    assert cores({"GDN_WORKERS": "3"}, quota) == 3
    assert cores({}, quota) == 1                                         # 1.5 CPUs of quota: one worker
    quota.write_text("max 100000\n")
    assert cores({}, quota) == len(os.sched_getaffinity(0))
    assert cores({}, tmp_path / "absent") == len(os.sched_getaffinity(0))
    with pytest.raises(ValueError, match="GDN_WORKERS"):
        cores({"GDN_WORKERS": "0"}, quota)


def test_a_result_equals_a_lone_call_and_is_kept_for_every_session(line):
    job = line.submit("a", "square", 7, made_once, (7,))
    assert job.wait(WAIT) and job.state == "done"
    value, worker, tag = job.result
    assert value == made_once(7)[0] == 49 and worker != os.getpid()      # computed in a worker, not here
    again = line.submit("b", "square", 7, made_once, (7,))                # another session, same inputs
    assert again.state == "done" and again.result == job.result           # the same call's tag: not run again
    other = line.submit("b", "square", 8, made_once, (8,))
    assert other.wait(WAIT) and other.result[0] == 64 and other.result[2] != tag


def test_sessions_asking_the_same_while_it_runs_share_one_job(line, tmp_path):
    release = tmp_path / "go"
    blockers = [held(line, f"block{i}", release) for i in range(2)]      # both workers busy
    wait_until(lambda: all(j.state == "running" for j in blockers))
    first = line.submit("a", "square", 9, made_once, (9,))
    second = line.submit("b", "square", 9, made_once, (9,))
    assert first is second and line.waiting == 1
    release.touch()
    assert first.wait(WAIT) and first.result[0] == 81
    assert all(j.wait(WAIT) and j.result == "released" for j in blockers)


def test_places_in_line_a_full_line_and_one_job_per_session(line, tmp_path):
    release = tmp_path / "go"
    blockers = [held(line, f"block{i}", release) for i in range(2)]
    wait_until(lambda: all(j.state == "running" for j in blockers))
    waiting = [held(line, s, release) for s in ("c", "d", "e")]
    assert [line.ahead(j) for j in waiting] == [0, 1, 2]
    assert line.estimate(waiting[2]) > line.estimate(waiting[0])
    with pytest.raises(QueueFull):                                       # cap 3: told at once
        held(line, "f", release)
    replaced = line.submit("c", "square", 3, made_once, (3,))            # c asks for something else
    assert waiting[0].state == "cancelled" and [line.ahead(j) for j in waiting[1:]] == [0, 1]
    assert line.ahead(replaced) == 2
    release.touch()
    assert replaced.wait(WAIT) and replaced.result[0] == 9
    assert all(j.wait(WAIT) and j.result == "released" for j in [*blockers, *waiting[1:]])


def test_a_job_nobody_watches_leaves_the_line_and_a_running_one_is_told_to_stop(line, tmp_path):
    release = tmp_path / "never"
    running = [held(line, f"gone{i}", release) for i in range(2)]
    wait_until(lambda: all(j.state == "running" for j in running))
    queued = held(line, "gone-queued", release)
    keep = time.monotonic() + 0.5
    while time.monotonic() < keep:            # watched for a while: nothing happens
        for j in [*running, queued]:
            line.touch(j, next(iter(j.watchers)))
        time.sleep(0.05)
    assert queued.state == "queued" and all(j.state == "running" for j in running)
    assert queued.wait(WAIT) and queued.state == "cancelled"             # then nobody touches them
    assert all(j.wait(WAIT) and j.state == "cancelled" for j in running)  # hold() saw should_stop()


def test_nothing_cancelled_is_never_told_to_stop_not_even_a_warm_up(line):
    """The cancel flag's resting value names no job: a warm-up (which shared its id once) and a job run
    after a cancelled one both hear no stop."""
    assert Slot.warm(line.slots[0], told_to_stop).result(WAIT) is False
    job = line.submit("asks", "quiet", None, told_to_stop)
    assert job.wait(WAIT) and job.state == "done" and job.result is False


def test_a_job_told_to_stop_too_late_keeps_its_whole_result(line, tmp_path):
    """Its visitor left while it was finishing and it never looked at should_stop(): what it returns is a
    whole result, kept for the next visitor who asks (once it was thrown away as a stopped job's)."""
    release = tmp_path / "release"
    job = line.submit("leaves", "square", ("late", 7), finish_after, (str(release), 49))
    wait_until(lambda: job.state == "running")
    wait_until(lambda: job.stopping)                          # nobody touches it: the line tells it to stop
    release.touch()
    assert job.wait(WAIT) and job.state == "done" and job.result == 49
    assert line.results["square"].get(("late", 7)) == 49
    again = line.submit("comes", "square", ("late", 7), finish_after, (str(tmp_path / "never"), 0))
    assert again.state == "done" and again.result == 49       # the kept result, no second run


def test_a_killed_worker_fails_only_its_own_job_and_is_replaced(line, tmp_path):
    release = tmp_path / "go"
    victim, bystander = held(line, "victim", release), held(line, "bystander", release)
    wait_until(lambda: victim.progress and bystander.progress)           # each reported its worker's pid
    os.kill(victim.progress[0], signal.SIGKILL)
    assert victim.wait(WAIT) and victim.state == "failed" and isinstance(victim.error, WorkerLost)
    assert bystander.state == "running"
    release.touch()
    assert bystander.wait(WAIT) and bystander.result == "released"
    retry = line.submit("victim", "square", 12, made_once, (12,))        # pressing the button again works
    assert retry.wait(WAIT) and retry.result[0] == 144


def test_a_jobs_own_error_reaches_its_visitor(line):
    job = line.submit("a", "boom", None, fail, ("no GDN layer in this model",))
    assert job.wait(WAIT) and job.state == "failed"
    assert isinstance(job.error, ValueError) and "no GDN layer" in str(job.error)


def test_a_training_in_a_worker_equals_a_lone_run_for_its_seed(line):
    """The recall page's job (work.train_quick) in a worker gives what run_quick gives here for the seed,
    every planned step, and the steps it reported draw the curves it returns."""
    import torch

    from gdn.recall.quick import QUICK, QUICK_RULES, run_quick
    from app_pages._support import work
    config = {**QUICK, "steps": 6, "eval_every": 3, "test_sequences": 8}
    threads = torch.get_num_threads()
    torch.set_num_threads(1)                           # as in a worker
    try:
        lone = run_quick(QUICK_RULES, seed=5, **config)
    finally:
        torch.set_num_threads(threads)
    job = line.submit("trainer", "train", None, work.train_quick, (QUICK_RULES, 5, config))
    while not job.wait(0.1):                           # watched meanwhile, as a page does
        line.touch(job, "trainer")
    assert job.state == "done", job.error
    rows, curves = job.result["rows"], job.result["curves"]
    for rule in QUICK_RULES:
        same = ("accuracy", "final_loss", "curve", "loss_curve", "steps_done", "seed")
        assert {k: rows[rule][k] for k in same} == {k: lone[rule][k] for k in same}
        assert rows[rule]["steps_done"] == 6
    wait_until(lambda: len(job.progress) == 6)       # the last reports may land after the result
    redrawn = work.new_curves(QUICK_RULES)
    for step_report in job.progress:
        work.add_step(redrawn, QUICK_RULES, step_report)
    assert [r[0] for r in job.progress] == [1, 2, 3, 4, 5, 6] and redrawn == curves
    assert curves["deltanet"]["acc"] == [a for _, a in rows["deltanet"]["curve"]]


def test_a_visitor_whose_worker_is_killed_mid_training_is_told_and_can_train_again(monkeypatch):
    """The recall page as a visitor sees it: the worker training for them dies, the page says so in their
    language (no traceback), and pressing Train again trains in a fresh worker."""
    import threading

    from gdn.i18n import t
    from gdn.recall import quick
    from app_pages._support import compute
    from tests.apptest import open_app
    monkeypatch.setitem(quick.QUICK, "steps", 100_000)         # runs until killed
    monkeypatch.setitem(quick.QUICK, "test_sequences", 8)
    at = open_app("en", page="app_pages/recall.py")
    line = compute.job_line()                                 # the server's line (cache_resource: shared)

    def kill_when_training():
        wait_until(lambda: any(j.kind == "recall.train" and j.progress for j in line._running.values()))
        i = next(i for i, j in line._running.items() if j.kind == "recall.train")
        os.kill(line.slots[i].pids()[0], signal.SIGKILL)
    killer = threading.Thread(target=kill_when_training)
    killer.start()
    at.button(key="recall_train").click().run(timeout=WAIT)
    killer.join()
    assert not at.exception and at.error[0].value == t("jobs.lost", "en")
    assert not at.success and "recall_quick_run" not in at.session_state
    assert "recall_train_pending" not in at.session_state         # the next rerun does not retrain unasked
    monkeypatch.setitem(quick.QUICK, "steps", 4)
    at.button(key="recall_train").click().run(timeout=WAIT)
    assert not at.exception and not at.error
    assert all(r["steps_done"] == 4 for r in at.session_state["recall_quick_run"]["rows"].values())


def test_a_worker_ends_once_its_server_is_gone():
    """A server killed without shutting its workers down (SIGKILL, a crash) leaves no worker behind."""
    import subprocess
    import sys

    code = ("import os; from app_pages._support.workers import Slot, pid; "
            "print(Slot(0).warm(pid).result(120), flush=True); os._exit(0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180,
                         cwd=Path(__file__).resolve().parents[1])
    worker = int(out.stdout.split()[-1])

    def gone():
        try:
            return Path(f"/proc/{worker}/stat").read_text().rpartition(")")[2].split()[0] == "Z"
        except OSError:
            return True
    wait_until(gone)


def test_workers_share_what_the_fork_server_imported(line):
    """The workers are forked from one fork server that imported torch and the jobs' modules: those pages stay
    shared, written by nobody since (a fresh worker: 142 of its 155 MB shared this way, its PSS 53 MB). A
    spawned worker imported torch itself and held it alone (none shared so; PSS 217 of 218 MB)."""
    pids = {slot.warm(pid).result(WAIT) for slot in line.slots}
    assert len(pids) == 2 and os.getpid() not in pids
    for worker in pids:
        sizes = {key: int(value.split()[0]) for key, value in            # kB
                 (row.split(":", 1) for row in Path(f"/proc/{worker}/smaps_rollup").read_text().splitlines()[1:])}
        assert sizes["Shared_Dirty"] > 64 * 1024


def test_a_worker_never_runs_the_page_script_streamlit_made_main(tmp_path):
    """In a Streamlit server, __main__ is the page script (Streamlit's script runner installs app.py as it).
    multiprocessing tells a new process to run its parent's main script first, so every worker ran the whole
    app again (Streamlit, Plotly and every page imported, the sidebar drawn with no session) before its first
    job; it must not."""
    import subprocess
    import sys

    ran = tmp_path / "ran"
    script = tmp_path / "page.py"
    script.write_text(f"import streamlit\nopen({str(ran)!r}, 'w').close()\n")
    code = ("import os, sys, types, streamlit.runtime.scriptrunner\n"
            "page = types.ModuleType('__main__'); page.__file__ = sys.argv[1]; sys.modules['__main__'] = page\n"
            "from app_pages._support.workers import Slot\n"
            "from tests.job_fixtures import imported\n"
            "print(Slot(0).warm(imported, ('streamlit',)).result(120), flush=True); os._exit(0)\n")
    out = subprocess.run([sys.executable, "-c", code, str(script)], capture_output=True, text=True, timeout=180,
                         cwd=Path(__file__).resolve().parents[1])
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[-1] == "False" and not ran.exists()


def test_a_second_session_running_the_same_prompt_costs_no_forward_pass(monkeypatch):
    """Thirty students pressing Run on one preset: the first session's Run is a job in a worker, every later
    session's the kept result (the same object), shown the same."""
    from app_pages._support import compute
    from app_pages._support.jobs import JobLine
    from tests.apptest import open_app
    from tests.test_real_model_page import DEMO_PATH, PAGE
    made = []
    submit = JobLine.submit

    def counted(self, session, kind, key, fn, args=(), pin=False, client=None):
        job = submit(self, session, kind, key, fn, args, pin, client)
        made.append((kind, key, session, job))
        return job
    monkeypatch.setattr(JobLine, "submit", counted)
    compute.shared_caches()["real_model.run"].clear()
    runs = lambda: [(key, job) for kind, key, _, job in made if kind == "real_model.run"]
    prompt = "the fox is blue . ask fox ?"                   # a custom prompt: not pinned, nobody ran it before
    first = open_app("en", page=PAGE, state={"real_model_source": str(DEMO_PATH), "real_model_prompt_edit": prompt},
                     real_model_preset="custom")
    assert not first.exception and len(runs()) == 1 and runs()[0][1].id > 0     # computed in a worker
    second = open_app("en", page=PAGE, state={"real_model_source": str(DEMO_PATH), "real_model_prompt_edit": prompt},
                      real_model_preset="custom")
    assert not second.exception and len(runs()) == 2               # (AppTest names every session alike)
    (key1, job1), (key2, job2) = runs()[0], runs()[-1]
    assert key1 == key2 and job2.id == 0 and job2.result is job1.result          # kept, not computed again


class NoWorkerStarts:
    """A slot whose worker cannot start (out of memory, of processes): every submit raises."""
    on_progress = None

    def submit(self, job_id, fn, args):
        raise OSError(12, "Cannot allocate memory")

    def replace(self) -> None:
        pass

    def cancel(self, job_id) -> None:
        pass

    def shutdown(self) -> None:
        pass


def test_a_worker_that_cannot_start_fails_its_job_with_a_message_and_the_line_goes_on():
    line = JobLine([NoWorkerStarts()], cap=3, results={"square": LRU(8)}, lease_s=1.0)
    try:
        first = line.submit("a", "square", 7, made_once, (7,))
        assert first.wait(WAIT) and first.state == "failed" and isinstance(first.error, WorkerLost)
        second = line.submit("b", "square", 7, made_once, (7,))      # not stuck "running" on the first one
        assert second is not first and second.wait(WAIT) and second.state == "failed"
        assert line.waiting == 0
    finally:
        line.close()


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_wait_is_said_in_whole_5_s_and_an_overdue_run_is_never_about_0_s_left(monkeypatch, lang):
    from gdn.i18n import t
    from app_pages._support import chrome
    from app_pages._support.compute import wait_words
    monkeypatch.setattr(chrome, "lang", lambda: lang)
    assert wait_words(2, False, 31.0) == t("jobs.ahead", lang, n=2, seconds=35)
    assert wait_words(0, False, 4.2) == t("jobs.next", lang, seconds=5)
    assert wait_words(0, True, 0.4) == t("jobs.running", lang, seconds=5)
    assert wait_words(0, True, 0.0) == t("jobs.running_over", lang)     # its expected time has passed
    assert not any(ch.isdigit() for ch in wait_words(0, True, 0.0))
