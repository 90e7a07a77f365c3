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
  (1 s, doubling to 30 s; back to 1 s once it has run for a minute), each restart logged; one that stops
  answering (hung, SIGSTOPped) fails its health check 3 times in a row (one every 5 s, 5 s each) and is
  killed (SIGKILL, logged), then restarted the same way: within about 20 s of its last answer;
- a replica's port is held by the supervisor from the moment it is chosen (a bound socket, SO_REUSEADDR,
  never listening, so the replica binds beside it) until it exits: no other program is handed the port,
  not even while its replica is down and nginx still lists it;
- nginx limits each client address (deploy/nginx.conf; issue 49): connections that never send a
  request are closed after 10 s, requests in progress per address (--conn-per-client, 600), new sessions
  and requests per second (429 past them); X-Forwarded-For is nginx's own ($remote_addr), and the
  replicas believe it from loopback only (GDN_TRUSTED_PROXIES gets 127.0.0.1/32,::1/128 appended;
  FORWARDED_ALLOW_IPS is emptied so Streamlit's server reports the TCP peer: app_pages/_support/client.py);
- nothing it creates is world-writable (its umask drops the write bit for others; nginx's scratch folders
  are 0700); a --logs folder others may write to is refused (nginx.conf, read by nginx, lives there);
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
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BACKOFF_START, BACKOFF_MAX, STABLE_AFTER = 1.0, 30.0, 60.0   # seconds
# A loaded replica answered its health check in 1.1 s (issue 40): 5 s each, 3 misses in a row, so only a
# replica silent for 15 s is killed.
LIVENESS_PERIOD, LIVENESS_TIMEOUT, LIVENESS_MISSES = 5.0, 5.0, 3
LOOPBACK_PROXIES = "127.0.0.1/32,::1/128"                     # nginx, on this machine
CONN_PER_CLIENT = 600                                        # a room's 500 phones behind one NAT, and headroom
NGINX_FILES = 40000                                          # nginx.conf: 16384 connections, 2 descriptors each
SCRATCH = ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")   # nginx's temp folders
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


def raising_file_limit(wanted: int):
    """For Popen's preexec_fn: the child may open `wanted` files (nginx's worker_connections need twice
    as many descriptors), as far as this account may raise its limits; never lowers them."""
    def arrange() -> None:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft >= wanted:
            return
        try:                                      # root (CAP_SYS_RESOURCE) may raise the hard limit too
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, max(hard, wanted)))
        except (ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(wanted, hard), hard))
    return arrange


def both(*steps):
    """One preexec_fn running each of `steps` in turn."""
    def arrange() -> None:
        for step in steps:
            step()
    return arrange


def hold_port() -> socket.socket:
    """A free local port, held: a socket bound to it and never listening. SO_REUSEADDR on both sides lets
    the replica (Streamlit sets it too) bind and listen beside it; a program that binds the port without
    SO_REUSEADDR is refused, and the kernel hands it to no other bind(0) or outgoing connection (a server
    that sets SO_REUSEADDR can still bind it: the hold keeps the port from being chosen, it is no lock). Closing a socket from
    free_port() and hoping the number stays free is a race with every other program on the machine."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.set_inheritable(False)                    # a replica started later must not inherit it
    return s


def healthy(port: int, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=timeout) as r:
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


def nginx_conf(prefix: Path, listen: str, ports: list[int], conn_per_client: int) -> str:
    """deploy/nginx.conf with its placeholders filled: the run folder, the address nginx listens on, the
    replicas on 127.0.0.1:ports, and the requests in progress one client address may have."""
    upstreams = "\n".join(f"        server 127.0.0.1:{p} max_fails=1 fail_timeout=5s;" for p in ports)
    conf = (ROOT / "deploy" / "nginx.conf").read_text(encoding="utf-8")
    for placeholder, value in (("@PREFIX@", str(prefix)), ("@LISTEN@", listen), ("@UPSTREAMS@", upstreams),
                               ("@CONN_PER_CLIENT@", str(conn_per_client))):
        conf = conf.replace(placeholder, value)
    return conf


class Probe:
    """One liveness check of a replica, run in a thread, so one that hangs never stalls the supervisor."""

    def __init__(self, pid: int, port: int):
        self.pid, self.answered = pid, None
        threading.Thread(target=self._check, args=(port,), daemon=True, name=f"probe-{port}").start()

    def _check(self, port: int) -> None:
        self.answered = healthy(port, LIVENESS_TIMEOUT)


def trusted_proxies(configured: str) -> str:
    """GDN_TRUSTED_PROXIES for a replica: the operator's networks, with loopback (this nginx) added."""
    return ",".join(net for net in (configured.strip(" ,"), LOOPBACK_PROXIES) if net)


def kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL to the child's process group, at once: a hung or stopped process dies too."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


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
        self.held = [hold_port() for _ in range(args.replicas)]           # held until the supervisor exits
        self.ports = [s.getsockname()[1] for s in self.held]
        self.replicas: list[subprocess.Popen | None] = [None] * args.replicas
        self.started_at = [0.0] * args.replicas
        self.backoff = [BACKOFF_START] * args.replicas
        self.restart_at: list[float | None] = [None] * args.replicas
        self.nginx: subprocess.Popen | None = None
        self.awaiting: set[int] = set()                          # restarted replicas not yet answering
        self.probes: list[Probe | None] = [None] * args.replicas
        self.next_probe = [0.0] * args.replicas
        self.misses = [0] * args.replicas                        # failed liveness checks in a row
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
            self.replicas[i] = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                                stdin=subprocess.DEVNULL, start_new_session=True,
                                                env=replica_environment(), preexec_fn=dying_with(os.getpid()))
        self.started_at[i] = time.monotonic()
        self.misses[i], self.probes[i], self.next_probe[i] = 0, None, 0.0
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

    def check_liveness(self, now: float) -> None:
        """Start a health check of each replica that should answer (running, not restarting) every
        LIVENESS_PERIOD, read those that finished, and kill a replica after LIVENESS_MISSES misses in a row:
        the loop then sees it exit and restarts it with the usual backoff."""
        for i, proc in enumerate(self.replicas):
            probe = self.probes[i]
            if probe is not None and probe.answered is not None:
                self.probes[i] = None
                if probe.pid == proc.pid and proc.poll() is None:        # not a check of an earlier process
                    self.misses[i] = 0 if probe.answered else self.misses[i] + 1
                    if self.misses[i] >= LIVENESS_MISSES:
                        self.kill_unresponsive(i)
            if i in self.awaiting and now - self.started_at[i] > self.args.health_timeout:
                self.say(f"replica {i} (pid {proc.pid}) has not answered in the {self.args.health_timeout:.0f} s "
                         f"since its restart: killing it (SIGKILL) to start it again")
                self.awaiting.discard(i)
                kill_group(proc)
                continue
            due = self.probes[i] is None and now >= self.next_probe[i]
            if due and self.restart_at[i] is None and i not in self.awaiting and proc.poll() is None:
                self.next_probe[i] = now + LIVENESS_PERIOD
                self.probes[i] = Probe(proc.pid, self.ports[i])

    def kill_unresponsive(self, i: int) -> None:
        self.say(f"replica {i} (pid {self.replicas[i].pid}) missed {self.misses[i]} health checks in a row "
                 f"({LIVENESS_TIMEOUT:.0f} s each): killing it (SIGKILL) to restart it")
        self.misses[i] = 0
        kill_group(self.replicas[i])

    # -- nginx -----------------------------------------------------------------------------------
    def start_nginx(self, nginx: str) -> bool:
        for sub in SCRATCH:                                      # nginx's own; it runs as one root process
            (self.logs / sub).mkdir(mode=0o700, exist_ok=True)
            os.chmod(self.logs / sub, 0o700)
        conf = nginx_conf(self.logs, f"{self.args.host}:{self.args.port}", self.ports, self.args.conn_per_client)
        (self.logs / "nginx.conf").write_text(conf, encoding="utf-8")
        # One process (master_process off): a master's workers are its children, not ours, and would
        # outlive a supervisor killed with SIGKILL, still serving on the port. worker_rlimit_nofile is a
        # worker's setting, so the file limit for a class's connections is raised here.
        self.nginx = subprocess.Popen([nginx, "-p", str(self.logs), "-e", str(self.logs / "error.log"),
                                       "-c", str(self.logs / "nginx.conf"), "-g", "daemon off; master_process off;"],
                                      stdin=subprocess.DEVNULL, start_new_session=True,
                                      preexec_fn=both(dying_with(os.getpid()), raising_file_limit(NGINX_FILES)))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.nginx.poll() is not None:
                break
            if port_taken(self.args.host, self.args.port):
                self.report_file_limit()
                return True
            time.sleep(0.1)
        self.say(f"nginx did not start (exit code {self.nginx.poll()}); the end of its error.log:\n"
                 f"{log_tail(self.logs / 'error.log')}")
        return False

    def report_file_limit(self) -> None:
        """Say so when nginx could not get NGINX_FILES descriptors: it then holds about half as many
        connections as it may open files (each proxied one is two), not nginx.conf's 16384."""
        try:
            files = resource.prlimit(self.nginx.pid, resource.RLIMIT_NOFILE)[0]
        except (OSError, AttributeError):          # not Linux
            return
        if files != resource.RLIM_INFINITY and files < NGINX_FILES:
            self.say(f"nginx may open {files} files (wanted {NGINX_FILES}; raise `ulimit -n` or run as root "
                     f"to lift it): about {files // 2} connections at once")

    # -- the whole server ------------------------------------------------------------------------
    def stop_all(self) -> None:
        self.stopping = True
        stop_group(self.nginx)
        for proc in self.replicas:
            stop_group(proc)
        for sub in SCRATCH:                                      # nginx's scratch space; logs stay
            shutil.rmtree(self.logs / sub, ignore_errors=True)
        for held in self.held:
            held.close()

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
            self.check_liveness(now)
            time.sleep(0.25)
        return 0


def replica_environment() -> dict[str, str]:
    """The operator's environment, and what a replica behind this nginx needs:
    GDN_SHARED_SERVER: a replica listens on 127.0.0.1, but nginx shares it with a room, so the practice
    page judges learners' code in the sandbox or not at all (app_pages/_practice.py);
    GDN_TRUSTED_PROXIES: X-Forwarded-For is believed from loopback (this nginx, which overwrites it);
    FORWARDED_ALLOW_IPS empty: Streamlit's server (uvicorn) would otherwise replace a loopback peer with
    the header's address itself, before the app could judge it (app_pages/_support/client.py)."""
    return {**os.environ, "GDN_SHARED_SERVER": "1", "FORWARDED_ALLOW_IPS": "",
            "GDN_TRUSTED_PROXIES": trusted_proxies(os.environ.get("GDN_TRUSTED_PROXIES", ""))}


def world_writable(path: Path) -> bool:
    return path.exists() and bool(path.stat().st_mode & 0o002)


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
    parser.add_argument("--conn-per-client", type=int, default=os.environ.get("GDN_CONN_PER_CLIENT", str(CONN_PER_CLIENT)),
                        help="requests in progress (websockets included) nginx allows one client address: a "
                        f"class behind one NAT is one address (GDN_CONN_PER_CLIENT, default {CONN_PER_CLIENT})")
    args = parser.parse_args(argv)
    if args.conn_per_client < 1:
        print(f"--conn-per-client {args.conn_per_client}: a client needs at least one connection", file=sys.stderr)
        return 2
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
    if args.logs is not None and world_writable(args.logs):
        print(f"--logs {args.logs}: anyone may write there (and nginx, run by this account, reads its "
              f"nginx.conf from it); name a folder of your own", file=sys.stderr)
        return 2
    os.umask(os.umask(0) | 0o002)                 # no file or folder of ours (or our children's) world-writable
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
