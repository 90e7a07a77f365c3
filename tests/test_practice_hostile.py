"""Hostile submissions to the practice judge: each ends in a clear verdict and touches nothing outside.

Every submission is a learner's file for exercise "read", with its hostile act at module level or inside
read(), judged in both modes: limits (a plain child: rlimits, seccomp, audit hook) and sandbox (the same
child inside bubblewrap). For each, the test checks the verdict's line (its key, its words, no traceback)
and that nothing outside was touched: no process of the run survives (autouse fixture), no secret leaks into
the verdict or what was printed, the project's files are unchanged, a listener standing in for the app's port
receives nothing. A correct solution still passes (the control).

Three tests run without the harness, so without its seccomp filter or audit hook, to show what holds on its
own: bubblewrap's network namespace and file system (a socket to a listener, the secret file, /etc/passwd and
the project's files), and harness.install_seccomp() alone (a socket, a fork, an exec, a signal to the parent).
The sandbox is also tried with C code the audit hook never sees (torch.from_file, torch.save).

Sandbox tests skip where bubblewrap cannot start, except under CI, where they fail: CI must never skip them.
"""
from __future__ import annotations

import hashlib
import os
import secrets
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from gdn.practice.judge import judge
from gdn.practice.runner import HARNESS, Limits, bwrap_command, sandbox_problem
from gdn.practice.verdict import Line, words

REPO = Path(__file__).resolve().parent.parent
LIMITS = Limits(cpu_s=2, wall_s=10)
CORRECT = 'import torch\n\n\ndef read(S, q):\n    return torch.einsum("bhkv,bhk->bhv", S, q)\n'



def modes() -> list:
    """sandbox=False and sandbox=True."""
    return [pytest.param(False, id="limits"), pytest.param(True, id="sandbox")]


def need(sandbox: bool) -> None:
    if sandbox and (why := sandbox_problem()) is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the sandbox tests, but bubblewrap cannot start: {why}")
        pytest.skip(why)


def run(source: str, sandbox: bool):
    need(sandbox)
    return judge("read", source, sandbox=sandbox, seed=1, limits=LIMITS)


def said(verdict, *lines: Line) -> str:
    """The verdict's words: no traceback, and each of `lines` said in them."""
    text = "\n".join(words(verdict, "en"))
    assert "Traceback" not in text and 'File "' not in text, text
    for line in lines:
        assert line.say("en") in text, text
    return text


def raised(verdict, *keys: str) -> Line:
    """What the first failing test failed with (its first detail: one of `keys`), named in the words."""
    failed = verdict.first_failure()
    assert not verdict.problem and failed is not None, words(verdict, "en")
    assert failed.details and failed.details[0].key in (keys or ("exception",)), words(verdict, "en")
    said(verdict, failed.details[0])
    return failed.details[0]


def refused(verdict) -> None:
    """Refused in the judge's words: by the audit hook (what and where) or by the seccomp filter (EPERM)."""
    raised(verdict, "refused", "not_permitted")


def processes() -> list[tuple[int, int, int, int]]:
    """(pid, ppid, process group, session) of every process, from /proc/*/stat."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue                                    # ended while we looked
        fields = text[text.rindex(")") + 2:].split()    # after "(comm)": state ppid pgrp session ...
        out.append((int(stat.parent.name), int(fields[1]), int(fields[2]), int(fields[3])))
    return out


@pytest.fixture(autouse=True)
def no_process_survives(monkeypatch):
    """Every child this test starts (the judge's, through subprocess.Popen) is gone afterwards, and so is
    anything in its process group or session or under it; nor is any new child of this process left."""
    started: list[int] = []
    original = subprocess.Popen

    class Recorded(original):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            started.append(self.pid)

    monkeypatch.setattr(subprocess, "Popen", Recorded)
    me = os.getpid()
    before = {p[0] for p in processes() if p[1] == me}
    yield
    monkeypatch.undo()
    left = [p for p in processes() if (p[1] == me and p[0] not in before)
            or set(p[1:]) & set(started) or p[0] in started]
    assert not left, f"processes left behind by {started}: {left}"


@pytest.fixture
def listener():
    """A listening TCP socket on 127.0.0.1, standing in for the app's port; nothing may reach it."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.setblocking(False)
        yield server
        with pytest.raises(BlockingIOError):
            server.accept()                             # a connection made would wait here


@pytest.fixture
def secret_file(tmp_path):
    """A file outside the work folder holding a random secret: the class database."""
    path = tmp_path / "class.db"
    path.write_text(f"password={secrets.token_hex(16)}\n")
    return path


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- 1-3: CPU, the clock, memory -------------------------------------------------------------------------

@pytest.mark.parametrize("sandbox", modes())
def test_an_endless_loop_runs_out_of_cpu(sandbox):
    verdict = run("while True:\n    pass\n" + CORRECT, sandbox)
    assert verdict.problem, words(verdict, "en")
    assert verdict.problem[0].key in ("cpu", "timeout"), words(verdict, "en")
    said(verdict, verdict.problem[0])


@pytest.mark.parametrize("sandbox", modes())
def test_sleeping_forever_times_out(sandbox):
    verdict = run("import time\n\nprint('asleep', flush=True)\ntime.sleep(10**6)\n" + CORRECT, sandbox)
    assert [line.key for line in verdict.problem] == ["timeout"], words(verdict, "en")
    said(verdict, Line("timeout", {"s": round(LIMITS.wall_s)}))
    assert "asleep" in verdict.printed                  # it did get as far as the sleep


@pytest.mark.parametrize("sandbox", modes())
def test_allocating_16_gb_runs_out_of_memory(sandbox):
    source = ("import torch\n\n\ndef read(S, q):\n    x = torch.empty(4 * 2**30, dtype=torch.float32)\n"
              "    x.fill_(1.0)\n    return x\n")
    verdict = run(source, sandbox)
    failed = verdict.first_failure()
    keys = [line.key for line in verdict.problem] + [line.key for line in (failed.details if failed else [])]
    assert "memory" in keys, words(verdict, "en")
    said(verdict, Line("memory", {"mb": LIMITS.memory_mb}))


# -- 4: processes ----------------------------------------------------------------------------------------

FORKS = {
    "os.fork": "import os, time\n\n\ndef read(S, q):\n    for _ in range(1000):\n        if os.fork() == 0:\n"
               "            time.sleep(60)\n",
    "subprocess": "import subprocess, sys\n\n\ndef read(S, q):\n    for _ in range(100):\n"
                  "        subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n",
    # os.forkpty is not refused by the audit hook: only the seccomp filter stops it
    "os.forkpty": "import os, time\n\n\ndef read(S, q):\n    for _ in range(1000):\n        if os.forkpty()[0] == 0:\n"
                  "            time.sleep(60)\n",
}


@pytest.mark.parametrize("how", list(FORKS))
@pytest.mark.parametrize("sandbox", modes())
def test_a_fork_bomb_is_refused(sandbox, how):
    refused(run(FORKS[how], sandbox))                  # and no_process_survives checks nothing was left


# -- 5, 6: files -----------------------------------------------------------------------------------------

def targets(secret_file: Path) -> dict[str, Path]:
    return {"the class database": secret_file, "/etc/passwd": Path("/etc/passwd"),
            "the reference solutions": REPO / "gdn" / "practice" / "reference.py"}


@pytest.mark.parametrize("target", ["the class database", "/etc/passwd", "the reference solutions"])
@pytest.mark.parametrize("sandbox", modes())
def test_reading_a_secret_file_is_refused(sandbox, target, secret_file):
    path = targets(secret_file)[target]
    content = path.read_text()[:100]
    verdict = run(f"def read(S, q):\n    print(open({str(path)!r}).read())\n", sandbox)
    # refused by the audit hook, or (in the sandbox, where /tmp is the work folder) not there at all
    detail = raised(verdict, "refused", "exception")
    assert detail.key == "refused" or detail.fields["error"] == "FileNotFoundError", words(verdict, "en")
    assert content not in verdict.printed and content not in "\n".join(words(verdict, "en"))


@pytest.mark.parametrize("act", ["read the class database", "read /etc/passwd", "read the reference solutions",
                                 "write a file outside"])
def test_c_code_the_audit_hook_never_sees_meets_the_sandbox(act, secret_file, tmp_path):
    """torch.from_file and torch.save open files in C++: no audit event, so only the sandbox stands (in limits
    mode these succeed; docs/practice.md says so: limits mode is for one's own machine)."""
    outside = tmp_path / f"written-{secrets.token_hex(4)}"
    if act.startswith("read"):
        path = targets(secret_file)[act.removeprefix("read ")]
        content = path.read_text()[:100]
        source = (f"import torch\n\n\ndef read(S, q):\n    t = torch.from_file({str(path)!r}, size=64, "
                  "dtype=torch.uint8)\n    print(bytes(t.tolist()).decode())\n")
    else:
        content = "never printed"
        source = f"import torch\n\n\ndef read(S, q):\n    torch.save(S, {str(outside)!r})\n"
    verdict = run(source, sandbox=True)
    detail = raised(verdict)
    assert detail.fields["error"] == "RuntimeError" and ("No such file" in detail.fields["message"]
                                                         or "does not exist" in detail.fields["message"]), detail
    assert content[:64] not in verdict.printed and content[:64] not in "\n".join(words(verdict, "en"))
    assert not outside.exists()


@pytest.mark.parametrize("act", ["append to app.py", "create a file in the repo root"])
@pytest.mark.parametrize("sandbox", modes())
def test_writing_into_the_project_tree_is_refused(sandbox, act):
    app, new = REPO / "app.py", REPO / f"gdn-hostile-{secrets.token_hex(6)}.txt"
    before = app.read_bytes()
    target, mode = (app, "a") if act == "append to app.py" else (new, "w")
    try:
        refused(run(f"def read(S, q):\n    open({str(target)!r}, {mode!r}).write('x')\n", sandbox))
    finally:
        after, created = sha256(app), new.exists()
        now = app.read_bytes()
        if now != before and now.startswith(before) and not now[len(before):].strip(b"x"):
            app.write_bytes(before)                     # the hostile appends (one a call) got through: undo them
        new.unlink(missing_ok=True)
    assert after == hashlib.sha256(before).hexdigest() and not created


# -- 7, 8: the network, other processes ------------------------------------------------------------------

@pytest.mark.parametrize("where", ["the app's port", "127.0.0.1:5432"])
@pytest.mark.parametrize("sandbox", modes())
def test_a_socket_is_refused(sandbox, where, listener):
    port = listener.getsockname()[1] if where == "the app's port" else 5432
    source = f"import socket\n\n\ndef read(S, q):\n    socket.create_connection(('127.0.0.1', {port}), timeout=3)\n"
    refused(run(source, sandbox))                      # and listener checks it received nothing


@pytest.mark.parametrize("how", ["os.kill(os.getppid(), 9)", "os.killpg(0, 9)"])
@pytest.mark.parametrize("sandbox", modes())
def test_killing_its_parent_is_refused(sandbox, how):
    refused(run(f"import os\n\n\ndef read(S, q):\n    {how}\n", sandbox))
    os.kill(os.getpid(), 0)                             # this process, the child's parent, is still here


# -- 9-11: output, crashes, streamlit --------------------------------------------------------------------



@pytest.mark.parametrize("sandbox", modes())
def test_printing_100_mb_is_cut_off(sandbox):
    verdict = run("import sys\n\nfor _ in range(100):\n    sys.stdout.write('x' * 10**6)\n" + CORRECT, sandbox)
    assert 0 < len(verdict.printed) <= 16 << 10
    text = said(verdict)
    assert verdict.problem and verdict.problem[0].key == "output", text
    said(verdict, Line("output", {"mb": LIMITS.file_mb}))


@pytest.mark.parametrize("sandbox", modes())
def test_a_segfault_through_ctypes_is_refused(sandbox):
    refused(run("import ctypes\n\n\ndef read(S, q):\n    return ctypes.string_at(0)\n", sandbox))


@pytest.mark.parametrize("sandbox", modes())
def test_a_real_segfault_is_a_crash(sandbox):
    verdict = run("import faulthandler\n\nfaulthandler._sigsegv()\n" + CORRECT, sandbox)
    assert [(line.key, line.fields) for line in verdict.problem] == [("crashed", {"signal": "SIGSEGV"})], \
        words(verdict, "en")
    assert "SIGSEGV" in said(verdict, verdict.problem[0])


@pytest.mark.parametrize("sandbox", modes())
def test_importing_streamlit_reaches_no_session(sandbox):
    source = ("import streamlit as st\nfrom streamlit.runtime.scriptrunner import get_script_run_ctx\n\n"
              "print('context:', get_script_run_ctx())\nst.session_state['x'] = 1\n" + CORRECT)
    verdict = run(source, sandbox)
    said(verdict)
    assert verdict.problem or verdict.tests, words(verdict, "en")
    assert "context: None" in verdict.printed.splitlines()
    assert verdict.passed, words(verdict, "en")        # a separate process: no session to reach, nothing broke


# -- 12: the control, the environment --------------------------------------------------------------------

@pytest.mark.parametrize("sandbox", modes())
def test_a_correct_solution_still_passes(sandbox):
    verdict = run(CORRECT, sandbox)
    assert verdict.passed and len(verdict.tests) >= 3, words(verdict, "en")
    said(verdict, Line("summary_pass", {"passed": len(verdict.tests), "total": len(verdict.tests), "seed": 1}))


@pytest.mark.parametrize("sandbox", modes())
def test_the_childs_environment_is_scrubbed(sandbox, monkeypatch):
    monkeypatch.setenv("GDN_CLASS_DB", "postgresql://secret@x/db")
    verdict = run("import os\n\nprint(dict(os.environ))\n" + CORRECT, sandbox)
    assert verdict.passed, words(verdict, "en")
    assert "OMP_NUM_THREADS" in verdict.printed         # the environment was printed: what it holds is scrubbed
    assert "secret" not in verdict.printed and "GDN_CLASS_DB" not in verdict.printed


# -- what holds without the harness ----------------------------------------------------------------------

def bare(code: str, sandbox: bool = True) -> str:
    """Python running `code` with no seccomp filter and no audit hook: inside bubblewrap, or (sandbox=False)
    a plain child. Its stdout."""
    cmd = [sys.executable, "-I", "-c", code]
    done = subprocess.run(bwrap_command() + ["--", *cmd] if sandbox else cmd, capture_output=True, text=True,
                          env={}, stdin=subprocess.DEVNULL, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_the_sandbox_alone_has_no_network(listener):
    need(True)
    port = listener.getsockname()[1]
    out = bare(f"import socket\nfor port in ({port}, 5432):\n    try:\n"
               "        socket.create_connection(('127.0.0.1', port), timeout=3)\n        print('connected', port)\n"
               "    except OSError as e:\n        print('refused', port, type(e).__name__)\n")
    assert [line.split()[:2] for line in out.splitlines()] == [["refused", str(port)], ["refused", "5432"]], out


def test_the_sandbox_alone_hides_the_files(secret_file):
    need(True)
    secret = secret_file.read_text()
    paths = [secret_file, Path("/etc/passwd"), REPO / "app.py", REPO / "gdn" / "practice" / "reference.py"]
    out = bare(f"for path in {[str(p) for p in paths]!r}:\n    try:\n        print('read', path, open(path).read())\n"
               "    except (FileNotFoundError, PermissionError) as e:\n        print('gone', path, type(e).__name__)\n")
    lines = out.splitlines()
    assert len(lines) == len(paths), out
    for path, line in zip(paths, lines):
        assert line in (f"gone {path} FileNotFoundError", f"gone {path} PermissionError"), out
    assert secret.strip() not in out




def test_the_sandbox_alone_writes_only_its_small_tmp():
    need(True)
    out = bare("for path in ('/tmp/ok', '/gdn-hostile', '/judge/gdn-hostile', '/etc/gdn-hostile', '/dev/gdn-hostile',"
               " '/dev/shm/gdn-hostile'):\n    try:\n        open(path, 'w').write('x')\n        print('wrote', path)\n"
               "    except OSError as e:\n        print('refused', path)\n"
               "try:\n    with open('/tmp/big', 'wb') as f:\n        f.write(b'x' * (17 << 20))\n"
               "    print('wrote 17 MB')\nexcept OSError as e:\n    print('full', e.errno)\n")
    assert "wrote /tmp/ok" in out and "full 28" in out, out        # the work folder: writable, 16 MB (ENOSPC)
    assert [line for line in out.splitlines() if line.startswith("wrote")] == ["wrote /tmp/ok"], out


def test_the_seccomp_filter_alone_refuses(listener):
    """harness.install_seccomp() without the audit hook: a socket, a fork, a program, a signal to the parent."""
    code = f"""import os, socket, subprocess, sys
sys.path.insert(0, {str(HARNESS.parent)!r})
import harness
harness.install_seccomp()
acts = {{"socket": lambda: socket.create_connection(("127.0.0.1", {listener.getsockname()[1]}), timeout=3),
        "fork": lambda: os.fork() or os._exit(0), "subprocess": lambda: subprocess.run(["/bin/true"]),
        "exec": lambda: os.execv("/bin/true", ["true"]), "kill parent": lambda: os.kill(os.getppid(), 0)}}
for name, act in acts.items():
    try:
        act()
        print("allowed", name)
    except OSError as e:
        print("refused", name, e.errno)
"""
    out = bare(code, sandbox=False)
    assert out.splitlines() == [f"refused {name} 1" for name in ("socket", "fork", "subprocess", "exec",
                                                                  "kill parent")], out


@pytest.mark.parametrize("sandbox", modes())
def test_a_real_time_signal_to_itself_is_a_crash_with_its_number(sandbox):
    """Signals past the named ones (SIGRTMIN+6): the verdict names the number, judge() never raises."""
    verdict = run("import signal\n\ndef read(S, q):\n    signal.raise_signal(40)\n", sandbox)
    assert verdict.problem == [Line("crashed", {"signal": "signal 40"})], words(verdict, "en")


FORGED = """import json, os, struct, sys
from safetensors.torch import save

def read(S, q):
    blob = save({{}}, metadata={{"reports": json.dumps({reports})}})
    with os.fdopen(int(sys.argv[1]), "wb") as pipe:
        pipe.write(struct.pack("<Q", len(blob)) + blob)
    os._exit(0)
"""


@pytest.mark.parametrize("reports", ['{"source": 5}', '{"source": {"lines": 5, "error": "SyntaxError"}}',
                                     '{"0/read": {"ok": true, "kinds": "x" * 1000}}', '[[], [], []]'],
                         ids=["a number", "lines not a list", "kinds a string", "not a mapping"])
def test_a_forged_result_is_checked_before_it_is_read(reports):
    """The learner's code can write its own result into the harness's pipe: whatever it writes, judge() returns
    a verdict (its own numbers at worst fool the learner), never an exception."""
    forged = FORGED.format(reports=reports.replace('"x" * 1000', "'x' * 1000"))
    verdict = run(forged, sandbox=False)
    assert not verdict.passed
    said(verdict)


@pytest.mark.parametrize("act", ["os.remove", "sqlite3.connect"])
def test_python_file_calls_outside_the_work_folder_are_refused_in_limits_mode(act, tmp_path):
    victim = tmp_path / "victim.db"
    victim.write_text("kept")
    call = {"os.remove": f"import os\nos.remove({str(victim)!r})",
            "sqlite3.connect": f"import sqlite3\nsqlite3.connect({str(victim)!r})"}[act]
    verdict = run(f"def read(S, q):\n    {call.replace(chr(10), chr(10) + '    ')}\n", sandbox=False)
    detail = raised(verdict, "refused")
    assert detail.fields["what"] == act and victim.read_text() == "kept"
