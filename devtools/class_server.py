"""deploy/serve-class.sh from a test or a benchmark: start it in its own process group and read what it
says on stderr (its replicas' pids and ports, the log folder, "serving on ...") up to a line."""
from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def serve(*args: str, env: dict | None = None) -> subprocess.Popen:
    """bash deploy/serve-class.sh *args, stderr piped as text, in a new session (stop it with os.killpg)."""
    return subprocess.Popen(["bash", "deploy/serve-class.sh", *args], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env={**os.environ, **(env or {})})


def read_until(proc: subprocess.Popen, pattern: str, lines: list[str], timeout: float = 120) -> re.Match:
    """Read stderr lines into `lines` until one matches `pattern`; AssertionError with all it said if the
    script ends first or `timeout` seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            raise AssertionError("serve-class.sh ended before printing " + pattern + ":\n" + "".join(lines))
        lines.append(line)
        found = re.search(pattern, line)
        if found:
            return found
    raise AssertionError(f"no {pattern!r} within {timeout} s:\n" + "".join(lines))


def serving(replicas: int, port: int, env: dict | None = None, timeout: float = 180) -> tuple[subprocess.Popen, list[str]]:
    """serve-class.sh --replicas N --port P, read until it says "serving on": (the process, its lines)."""
    proc = serve("--replicas", str(replicas), "--port", str(port), env=env)
    lines: list[str] = []
    read_until(proc, r"^serving on", lines, timeout=timeout)
    return proc, lines
