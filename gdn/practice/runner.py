"""Running a learner's code in a child process, with limits, and in a sandbox where the server is shared.

    got = run_child(source, calls, inputs, sandbox=True)     # a Child: reports, tensors, printed, ended
    sandbox_problem()                                         # None when bubblewrap works on this machine

Two ways, one harness (harness.py, which locks itself in before the learner's first line):
- limits: a plain child of this process: an empty temporary work folder, a scrubbed environment (no
  secrets, no database URL: PATH, HOME and a few thread settings only), a process group of its own, a wall
  clock; the harness adds its rlimits, seccomp filter and audit hook. For the learner's own machine.
- sandbox: the same child inside bubblewrap (Debian's `bubblewrap`): its own user, PID, network, IPC and
  UTS namespaces (no network at all, no other process visible), every capability dropped, uid 65534, and a
  file system of read-only system and Python paths, the harness file and a private 16 MB tmpfs: the
  project, the class database, /etc/passwd and every home folder do not exist in there. For a server.
Why bubblewrap: it is small, in Debian's archive, runs without a daemon or root, and each of the
isolations above is one flag; docs/practice.md gives the threat model.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import sysconfig
import tempfile
import threading
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from safetensors.torch import load as load_tensors
from safetensors.torch import save as save_tensors

HARNESS = Path(__file__).resolve().with_name("harness.py")
SANDBOX_HARNESS = "/judge/harness.py"
NOBODY = "65534"


@dataclass(frozen=True)
class Limits:
    cpu_s: int = 5                 # CPU seconds for the learner's code (beyond what importing torch took)
    wall_s: float = 15.0           # the whole child, torch's import included, by the clock
    memory_mb: int = 1024          # address space the learner's code may add
    file_mb: int = 1               # the largest file it may write, its printed output included
    printed_kb: int = 8            # of what it printed, this much is shown back
    result_kb: int = 2048          # the most the child may send back (the largest exercise sends ~100 kB)


LIMITS = Limits()


@dataclass
class Child:
    ended: str                     # ok | timeout | cpu | output | crashed | exited | no_start
    reports: dict = field(default_factory=dict)      # call id (or "source") -> the harness's report
    tensors: dict = field(default_factory=dict)      # "<call id>.<j>" -> float64 tensor
    printed: str = ""              # the end of what the learner's code printed
    signal: str = ""               # crashed: the signal's name
    code: int = 0                  # exited: the exit status
    sandboxed: bool = False


def scrubbed_env(home: str) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": home, "TMPDIR": home, "LANG": "C.UTF-8", "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0"}


def python_roots() -> list[str]:
    """The folders the interpreter and its packages live in (read-only in the sandbox)."""
    paths = sysconfig.get_paths()
    roots = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, paths["purelib"], paths["platlib"])}
    roots.add(os.path.dirname(os.path.realpath(sys.executable)))
    # a root inside another is bound with it: only the outermost ones
    return sorted(r for r in roots if not any(r != o and r.startswith(o + os.sep) for o in roots))


def bwrap_command(workdir_inside: str = "/tmp") -> list[str]:
    cmd = [shutil.which("bwrap") or "bwrap", "--unshare-all", "--unshare-user", "--uid", NOBODY, "--gid", NOBODY,
           "--disable-userns", "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--clearenv"]
    for key, value in scrubbed_env(workdir_inside).items():
        cmd += ["--setenv", key, value]
    cmd += ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/lib", "/lib64", "/lib32", "/libx32", "/sbin"):
        if os.path.islink(top):
            cmd += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            cmd += ["--ro-bind", top, top]
    cmd += ["--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    for root in python_roots():
        if not root.startswith("/usr/"):
            cmd += ["--ro-bind", root, root]
    cmd += ["--ro-bind", str(HARNESS), SANDBOX_HARNESS, "--proc", "/proc", "--dev", "/dev",
            "--size", str(16 << 20), "--tmpfs", "/tmp",
            # the root and /dev are tmpfs folders bubblewrap made: read-only, so /tmp's 16 MB is all it can write
            "--remount-ro", "/dev", "--remount-ro", "/", "--chdir", workdir_inside]
    return cmd


def sandbox_installed() -> bool:
    return shutil.which("bwrap") is not None


@cache
def sandbox_problem() -> str | None:
    """None when a bubblewrap sandbox starts Python on this machine, else why not (said on the page)."""
    if not sandbox_installed():
        return "bubblewrap is not installed (Debian: apt-get install bubblewrap)"
    try:
        done = subprocess.run(bwrap_command() + ["--", sys.executable, "-I", "-c", "import torch"],
                              capture_output=True, timeout=60, env={}, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"bubblewrap could not start: {e}"
    if done.returncode != 0:
        return f"bubblewrap could not start Python: {done.stderr.decode(errors='replace').strip()[-300:]}"
    return None


def job_bytes(source: str, calls: list[dict], inputs: dict, limits: Limits) -> bytes:
    header = json.dumps({"source": source, "calls": calls, "cpu_s": limits.cpu_s, "memory_mb": limits.memory_mb,
                         "file_mb": limits.file_mb}).encode()
    blob = save_tensors({k: v.clone().contiguous() for k, v in inputs.items()})   # views: copies if inputs else b""
    return struct.pack("<Q", len(header)) + header + blob


def _read_capped(fd: int, cap: int, into: list) -> None:
    """Everything from fd up to cap bytes (then the rest is drained and dropped, so the child never blocks)."""
    got, size = [], 0
    with os.fdopen(fd, "rb") as pipe:
        while chunk := pipe.read(1 << 16):
            if size < cap:
                got.append(chunk)
            size += len(chunk)
    into.append((b"".join(got), size))


def _printed(fd: int, keep: int) -> str:
    end = os.lseek(fd, 0, os.SEEK_END)
    os.lseek(fd, max(0, end - keep), os.SEEK_SET)
    text = os.read(fd, keep).decode("utf-8", errors="replace")
    return ("…" + text) if end > keep else text


def run_child(source: str, calls: list[dict], inputs: dict, *, sandbox: bool, limits: Limits = LIMITS) -> Child:
    """Run `source` and the calls on inputs in a fresh child; never raises for anything the code does."""
    job = job_bytes(source, calls, inputs, limits)
    printed_fd = os.memfd_create("gdn-judge-printed")          # in memory: nothing of it reaches the disk
    read_end, write_end = os.pipe()
    workdir = tempfile.mkdtemp(prefix="gdn-judge-")
    harness = SANDBOX_HARNESS if sandbox else str(HARNESS)
    cmd = [sys.executable, "-I", harness, str(write_end)]        # the harness writes its result to write_end
    if sandbox:
        cmd = bwrap_command() + ["--", *cmd]
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=printed_fd, stderr=printed_fd, cwd=workdir,
                                env={} if sandbox else scrubbed_env(workdir), start_new_session=True,
                                pass_fds=(write_end,))
    finally:
        os.close(write_end)
    got: list = []
    reader = threading.Thread(target=_read_capped, args=(read_end, limits.result_kb << 10, got), daemon=True)
    reader.start()
    threading.Thread(target=_feed, args=(proc, job), daemon=True).start()   # the wall clock starts now
    timed_out = False
    try:
        proc.wait(timeout=limits.wall_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc)
    reader.join(5)
    _kill_group(proc)                                             # anything it left behind in its group
    printed = _printed(printed_fd, limits.printed_kb << 10)
    os.close(printed_fd)
    shutil.rmtree(workdir, ignore_errors=True)
    data, size = got[0] if got else (b"", 0)
    return _outcome(proc.returncode, timed_out, data, size, printed, sandbox, limits)


def _feed(proc: subprocess.Popen, job: bytes) -> None:
    try:
        proc.stdin.write(job)
        proc.stdin.close()
    except (OSError, ValueError):
        pass                                                      # it died before reading: said by the outcome


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()                                               # its group gone, the process itself is next
        proc.wait(timeout=5)


def _outcome(code: int, timed_out: bool, data: bytes, size: int, printed: str, sandbox: bool,
             limits: Limits) -> Child:
    if sandbox and code > 128 and code - 128 in signal.valid_signals():
        code = -(code - 128)              # bubblewrap exits 128 + N when the Python inside died of signal N
    child = Child("ok", printed=printed, sandboxed=sandbox, code=code)
    started = data[:1] == b"R"
    if timed_out:
        child.ended = "timeout"
    elif not started:
        child.ended = "no_start"
    elif code == -signal.SIGXCPU:
        child.ended = "cpu"
    elif code == -signal.SIGXFSZ:
        child.ended = "output"
    elif code < 0:
        child.ended, child.signal = "crashed", signal_name(-code)
    elif size > limits.result_kb << 10:
        child.ended = "output"
    elif code != 0 or len(data) < 9:
        child.ended = "exited"
    if child.ended != "ok":
        return child
    try:
        (length,) = struct.unpack("<Q", data[1:9])
        blob = data[9:9 + length]
        child.tensors = load_tensors(blob)
        header_len = struct.unpack("<Q", blob[:8])[0]
        meta = json.loads(blob[8:8 + min(header_len, MAX_REPORTS)]).get("__metadata__", {})
        child.reports = clean_reports(json.loads(meta.get("reports", "{}")[:MAX_REPORTS]))
    except Exception:  # noqa: BLE001 -- whatever the child sent that is not what the harness writes
        child.ended, child.tensors, child.reports = "exited", {}, {}
    return child


MAX_REPORTS = 256 << 10        # characters of the reports' JSON; the harness writes a few kB
MAX_TEXT = 600                 # characters of a message, a line of code, a kind


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"                                 # a real-time signal has no name


def clean_reports(raw) -> dict:
    """The child's reports as the harness writes them, or a ValueError: the child is the learner's and can
    write anything into its pipe, so every field is checked for its type and cut to size here."""
    if not isinstance(raw, dict):
        raise ValueError("reports are not a mapping")
    text = lambda x: str(x)[:MAX_TEXT] if isinstance(x, (str, int, float)) and not isinstance(x, bool) else ""
    out = {}
    for call, report in list(raw.items())[:256]:
        if not isinstance(report, dict):
            raise ValueError(f"report {call!r} is not a mapping")
        kinds, lines = report.get("kinds") or [], report.get("lines") or []
        out[str(call)[:64]] = {
            "ok": report.get("ok") is True, "many": report.get("many") is True,
            "kinds": [text(k) for k in kinds[:16]] if isinstance(kinds, list) else [],
            "lines": [text(x) for x in lines[:8]] if isinstance(lines, list) else [],
            "error": text(report.get("error")), "message": text(report.get("message")),
            "text": text(report.get("text")),
            **{k: report[k] for k in ("line", "offset", "errno") if isinstance(report.get(k), int)}}
    return out
