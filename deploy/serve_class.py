"""The class server's supervisor (deploy/serve-class.sh runs it): N Streamlit replicas on free local ports
and nginx in front of them on HOST:PORT (deploy/nginx.conf; HOST 127.0.0.1 unless --host says otherwise,
e.g. 0.0.0.0 for the phones of a room's network), in the foreground, standard library only.

What an operator can count on:
- nothing starts unless it can work: --replicas below 1, a port something listens on or a missing nginx
  end it at once, with a message and a non-zero exit. The port is checked by connecting to it, so a
  restart right after a class (its connections in TIME_WAIT on the port) starts at once;
- every replica must answer its health check; one that does not is reported with the tail of its log,
  and if none does the server stops (exit 1) instead of printing "serving on" in front of 502s;
- a replica that dies (a crash, the OOM killer, kill -9) is restarted on its port, after a backoff
  (1 s, doubling to 30 s; back to 1 s once it has run for a minute), each restart logged;
- when nginx dies the supervisor says so, stops every replica and nginx's whole process group (no
  orphaned worker holding the port) and exits 1; Ctrl-C or SIGTERM stop everything and exit 0;
- logs stay in the folder named at start: replica-<i>.log (appended across restarts), nginx's
  error.log and access.log, supervisor.log (every start, failure and restart, time-stamped).

- the replicas and nginx die with the supervisor, even when it is killed with SIGKILL: each is started
  with PR_SET_PDEATHSIG (Linux), and nginx runs as one process (master_process off), so no worker of it
  is left behind holding the port.

Each child runs in its own session (process group), so stopping it stops everything it started.
"""
from __future__ import annotations

import argparse
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BACKOFF_START, BACKOFF_MAX, STABLE_AFTER = 1.0, 30.0, 60.0   # seconds
TAIL_LINES = 15


def log_tail(path: Path, lines: int = TAIL_LINES) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:]
    except OSError:
        return "    (no log)"
    return "\n".join("    " + line for line in text) or "    (the log is empty)"


def port_taken(host: str, port: int) -> bool:
    """Whether something listens on host:port: a connection is accepted. Not a test bind: connections
    that ended a moment ago (TIME_WAIT, after a class) refuse a bind for a minute, but not nginx, which
    binds with SO_REUSEADDR."""
    with socket.socket() as s:
        s.settimeout(2)
        return s.connect_ex(("127.0.0.1" if host in ("0.0.0.0", "") else host, port)) == 0


PR_SET_PDEATHSIG = 1            # <linux/prctl.h>


def dying_with(parent: int):
    """For Popen's preexec_fn: the child gets SIGKILL when `parent` (this supervisor) dies, however it
    dies; if it died already, before the call, the child leaves at once."""
    def arrange() -> None:
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):         # not Linux: Ctrl-C and SIGTERM still stop everything
            return
        if os.getppid() != parent:
            os._exit(1)
    return arrange


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def stop_group(proc: subprocess.Popen | None, grace: float = 5.0) -> None:
    """SIGTERM to the child's whole process group, SIGKILL what is left after `grace` seconds."""
    if proc is None:
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and group_alive(proc.pid):
            proc.poll()
            time.sleep(0.05)
        if not group_alive(proc.pid):
            break
    proc.poll()


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Supervisor:
    def __init__(self, args, logs: Path):
        self.args, self.logs = args, logs
        self.ports = [free_port() for _ in range(args.replicas)]
        self.replicas: list[subprocess.Popen | None] = [None] * args.replicas
        self.started_at = [0.0] * args.replicas
        self.backoff = [BACKOFF_START] * args.replicas
        self.restart_at: list[float | None] = [None] * args.replicas
        self.nginx: subprocess.Popen | None = None
        self.awaiting: set[int] = set()                          # restarted replicas not yet answering
        self.stopping = False

    def say(self, message: str) -> None:
        print(message, file=sys.stderr, flush=True)
        with open(self.logs / "supervisor.log", "a", encoding="utf-8") as f:
            f.write(time.strftime("%Y-%m-%dT%H:%M:%S ") + message + "\n")

    # -- replicas --------------------------------------------------------------------------------
    def start_replica(self, i: int) -> None:
        k = self.args.cpus_per_replica
        pin = ["taskset", "-c", f"{i * k}-{i * k + k - 1}"] if k > 0 and shutil.which("taskset") else []
        cmd = [*pin, self.args.python, "-m", "streamlit", "run", "app.py", "--server.address", "127.0.0.1",
               "--server.port", str(self.ports[i]), "--server.headless", "true",
               "--browser.gatherUsageStats", "false"]
        with open(self.logs / f"replica-{i}.log", "ab") as out:    # appended: a restart keeps the crash's log
            # GDN_SHARED_SERVER: a replica listens on 127.0.0.1, but nginx shares it with a room, so the
            # practice page judges learners' code in the sandbox or not at all (app_pages/_practice.py)
            self.replicas[i] = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                                stdin=subprocess.DEVNULL, start_new_session=True,
                                                env={**os.environ, "GDN_SHARED_SERVER": "1"},
                                                preexec_fn=dying_with(os.getpid()))
        self.started_at[i] = time.monotonic()
        self.say(f"replica {i}: pid {self.replicas[i].pid} on 127.0.0.1:{self.ports[i]}")

    def wait_healthy(self, which: list[int]) -> list[int]:
        """Poll the replicas in `which` until each answers its health check, exits, or the time is up;
        returns the healthy ones and reports each failure with its log's tail."""
        deadline = time.monotonic() + self.args.health_timeout
        waiting, ok = set(which), []
        while waiting and time.monotonic() < deadline and not self.stopping:
            for i in sorted(waiting):
                code = self.replicas[i].poll()
                if code is not None:
                    waiting.discard(i)
                    self.say(f"replica {i} failed its health check: it exited with code {code} before answering; "
                             f"the end of {self.logs / f'replica-{i}.log'}:\n{log_tail(self.logs / f'replica-{i}.log')}")
                elif healthy(self.ports[i]):
                    waiting.discard(i)
                    ok.append(i)
            time.sleep(0.3)
        for i in sorted(waiting) if not self.stopping else ():
            self.say(f"replica {i} failed its health check: no answer within {self.args.health_timeout:.0f} s; "
                     f"the end of {self.logs / f'replica-{i}.log'}:\n{log_tail(self.logs / f'replica-{i}.log')}")
        return sorted(ok)

    def schedule_restart(self, i: int, code: int) -> None:
        if time.monotonic() - self.started_at[i] >= STABLE_AFTER:
            self.backoff[i] = BACKOFF_START                     # it had been running well: a fresh failure
        why = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
        self.say(f"replica {i} (pid {self.replicas[i].pid}) {why}; restarting it in {self.backoff[i]:.0f} s "
                 f"(its log: {self.logs / f'replica-{i}.log'})")
        self.restart_at[i] = time.monotonic() + self.backoff[i]
        self.backoff[i] = min(BACKOFF_MAX, 2 * self.backoff[i])

    # -- nginx -----------------------------------------------------------------------------------
    def start_nginx(self, nginx: str) -> bool:
        for sub in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
            (self.logs / sub).mkdir(exist_ok=True)
        os.chmod(self.logs, 0o777)                               # started as root, nginx's workers run as nobody
        for sub in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
            os.chmod(self.logs / sub, 0o777)
        upstreams = "\n".join(f"        server 127.0.0.1:{p} max_fails=1 fail_timeout=5s;" for p in self.ports)
        conf = (ROOT / "deploy" / "nginx.conf").read_text(encoding="utf-8")
        conf = conf.replace("@PREFIX@", str(self.logs)).replace("@LISTEN@", f"{self.args.host}:{self.args.port}")
        (self.logs / "nginx.conf").write_text(conf.replace("@UPSTREAMS@", upstreams), encoding="utf-8")
        # One process (master_process off): a master's workers are its children, not ours, and would
        # outlive a supervisor killed with SIGKILL, still serving on the port.
        self.nginx = subprocess.Popen([nginx, "-p", str(self.logs), "-e", str(self.logs / "error.log"),
                                       "-c", str(self.logs / "nginx.conf"), "-g", "daemon off; master_process off;"],
                                      stdin=subprocess.DEVNULL, start_new_session=True,
                                      preexec_fn=dying_with(os.getpid()))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.nginx.poll() is not None:
                break
            if port_taken(self.args.host, self.args.port):
                return True
            time.sleep(0.1)
        self.say(f"nginx did not start (exit code {self.nginx.poll()}); the end of its error.log:\n"
                 f"{log_tail(self.logs / 'error.log')}")
        return False

    # -- the whole server ------------------------------------------------------------------------
    def stop_all(self) -> None:
        self.stopping = True
        stop_group(self.nginx)
        for proc in self.replicas:
            stop_group(proc)
        for sub in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):   # nginx's scratch space; logs stay
            shutil.rmtree(self.logs / sub, ignore_errors=True)

    def run(self, nginx: str) -> int:
        for i in range(self.args.replicas):
            self.start_replica(i)
        ok = self.wait_healthy(list(range(self.args.replicas)))
        if self.stopping:
            return 0
        if not ok:
            self.say(f"no replica is healthy; stopping. Logs: {self.logs}")
            return 1
        for i in range(self.args.replicas):
            if i not in ok:                                      # tried again in the background
                stop_group(self.replicas[i])
                self.restart_at[i] = time.monotonic() + self.backoff[i]
                self.backoff[i] = min(BACKOFF_MAX, 2 * self.backoff[i])
                self.say(f"replica {i}: starting it again in {self.restart_at[i] - time.monotonic():.0f} s")
        if self.stopping or not self.start_nginx(nginx):
            return 0 if self.stopping else 1
        self.say(f"serving on http://{self.args.host}:{self.args.port} ({len(ok)} of {self.args.replicas} replicas "
                 f"healthy; logs in {self.logs})")
        while not self.stopping:
            code = self.nginx.poll()
            if code is not None:
                why = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
                self.say(f"nginx {why}: the class server is down; stopping every replica. The end of nginx's "
                         f"error.log:\n{log_tail(self.logs / 'error.log')}\nLogs kept in {self.logs}")
                return 1
            now = time.monotonic()
            for i, proc in enumerate(self.replicas):
                if self.restart_at[i] is not None:
                    if now >= self.restart_at[i]:
                        self.restart_at[i] = None
                        self.start_replica(i)
                        self.awaiting.add(i)
                elif proc.poll() is not None:
                    self.awaiting.discard(i)
                    self.schedule_restart(i, proc.returncode)
                elif i in self.awaiting and healthy(self.ports[i]):
                    self.awaiting.discard(i)
                    self.say(f"replica {i} answers its health check again "
                             f"({now - self.started_at[i]:.0f} s after its restart)")
            time.sleep(0.25)
        return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="serve-class.sh", description="Serve the app to a class: N replicas "
                                     "behind nginx on HOST:PORT.")
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument("--port", type=int, default=8600)
    parser.add_argument("--host", default="127.0.0.1", help="the address nginx listens on: 0.0.0.0 for the "
                        "room's network (then set GDN_PUBLIC_URL to the address phones reach)")
    parser.add_argument("--cpus-per-replica", type=int, default=0, help="pin replica i to CPUs i*K..i*K+K-1 (taskset)")
    parser.add_argument("--health-timeout", type=float, default=60.0, help="seconds a replica has to answer (60)")
    parser.add_argument("--logs", type=Path, help="the folder for the logs (default: a new gdn-class.* temp folder)")
    parser.add_argument("--python", default=sys.executable, help="the interpreter that has the app's requirements")
    args = parser.parse_args(argv)
    if args.replicas < 1:
        print(f"--replicas {args.replicas}: a class server needs at least one replica", file=sys.stderr)
        return 2
    if not 0 < args.port < 65536:
        print(f"--port {args.port}: not a TCP port (1-65535)", file=sys.stderr)
        return 2
    if port_taken(args.host, args.port):
        print(f"port {args.port} on {args.host} is in use: something listens there (another class server?); "
              f"stop that process or pick another --port", file=sys.stderr)
        return 1
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.access(nginx, os.X_OK):
        print("nginx is not installed (Debian: apt-get install nginx)", file=sys.stderr)
        return 1
    logs = args.logs or Path(tempfile.mkdtemp(prefix="gdn-class."))
    logs.mkdir(parents=True, exist_ok=True)
    sup = Supervisor(args, logs.resolve())
    sup.say(f"logs in {sup.logs}")

    def on_signal(signum, frame):
        sup.stopping = True
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        code = sup.run(nginx)
    finally:
        sup.stop_all()
    if code == 0:
        sup.say(f"stopped; logs kept in {sup.logs}")
    return code


if __name__ == "__main__":
    sys.exit(main())
