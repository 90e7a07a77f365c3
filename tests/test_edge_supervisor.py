"""deploy/serve_class.py as an operator meets it when something goes wrong (issue 49): a replica that
stops answering (SIGSTOP: alive, silent) is killed and restarted within 30 s; a replica's port stays
held while the replica is down; nothing it creates is world-writable, even started with umask 0; a
--logs folder anyone may write to is refused."""
from __future__ import annotations

import os
import re
import signal
import socket
import stat
import time
import urllib.request
from pathlib import Path

import pytest

from devtools import class_server
from devtools.app_server import free_port

RESTART_WITHIN = 30.0                 # seconds from SIGSTOP to a fresh replica (issue 49)


def answers(url: str) -> bool:
    try:
        return urllib.request.urlopen(url, timeout=3).status == 200
    except OSError:
        return False


def port_can_be_bound(port: int) -> bool:
    """Whether another program could bind the port now (it would, were the supervisor not holding it)."""
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


@pytest.fixture
def one_replica():
    """serve-class.sh --replicas 1, started with umask 0 (the supervisor must not rely on the caller's);
    yields (process, the lines it printed, replica pid, replica port, log folder, nginx's port)."""
    port = free_port()
    mask = os.umask(0)
    try:
        proc, lines = class_server.serving(1, port)
    finally:
        os.umask(mask)
    pid, replica_port = map(int, re.search(r"replica 0: pid (\d+) on 127\.0\.0\.1:(\d+)", "".join(lines)).groups())
    logs = Path(re.search(r"logs in (\S+)\)", lines[-1]).group(1))
    try:
        yield proc, lines, pid, replica_port, logs, port
    finally:
        with_signal(proc, signal.SIGINT)


def with_signal(proc, sig) -> None:
    if proc.poll() is None:
        proc.send_signal(sig)
        proc.wait(timeout=30)


def world_writable(root: Path) -> list[str]:
    found = []
    for path in [root, *root.rglob("*")]:
        mode = path.lstat().st_mode
        if not stat.S_ISLNK(mode) and mode & stat.S_IWOTH:
            found.append(f"{path} {stat.filemode(mode)}")
    return found


@pytest.mark.browser                  # starts the class server itself
def test_a_silent_replica_is_restarted_and_nothing_is_world_writable(one_replica):
    proc, lines, pid, replica_port, logs, port = one_replica
    assert answers(f"http://127.0.0.1:{port}/")                 # nginx has run: its files and folders exist
    assert not world_writable(logs), world_writable(logs)
    assert not port_can_be_bound(replica_port)                  # the replica listens there
    stopped = time.monotonic()
    os.kill(pid, signal.SIGSTOP)                                # alive, never answering again
    try:
        found = class_server.read_until(proc, r"replica 0: pid (\d+) on", lines, timeout=RESTART_WITHIN + 5)
    finally:
        with_signal_to_pid(pid, signal.SIGCONT)                 # were it not killed, let it go on
    restarted = time.monotonic() - stopped
    said = "".join(lines)
    assert restarted <= RESTART_WITHIN, said
    assert int(found.group(1)) != pid and re.search(rf"replica 0 \(pid {pid}\) missed 3 health checks", said)
    assert f"replica 0 (pid {pid}) was killed by signal 9" in said
    assert not Path(f"/proc/{pid}").exists()                   # killed, and reaped by the supervisor
    deadline = time.monotonic() + 90
    while not answers(f"http://127.0.0.1:{port}/_stcore/health"):  # the new replica serves through nginx
        assert time.monotonic() < deadline, "the restarted replica never answered:\n" + said
        time.sleep(0.3)
    print(f"SIGSTOP -> replica restarted in {restarted:.1f} s; serving again after {time.monotonic() - stopped:.1f} s")
    assert not world_writable(logs), world_writable(logs)


def with_signal_to_pid(pid: int, sig) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


@pytest.mark.browser
def test_a_replica_s_port_stays_held_while_the_replica_is_down(one_replica):
    """Between a replica's death and its restart (1 s of backoff here, up to 30 s) nginx still lists its
    port: no other program may take it meanwhile."""
    proc, lines, pid, replica_port, logs, port = one_replica
    os.kill(pid, signal.SIGKILL)
    class_server.read_until(proc, rf"replica 0 \(pid {pid}\) was killed", lines, timeout=20)
    assert not port_can_be_bound(replica_port)                  # down, and still the supervisor's
    class_server.read_until(proc, r"replica 0: pid \d+ on 127\.0\.0\.1:" + str(replica_port), lines, timeout=20)


def test_a_logs_folder_anyone_may_write_to_is_refused(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    refused = class_server.serve("--replicas", "1", "--port", str(free_port()), "--logs", str(shared))
    assert refused.wait(timeout=30) == 2 and "anyone may write there" in refused.stderr.read()
    assert list(shared.iterdir()) == []
