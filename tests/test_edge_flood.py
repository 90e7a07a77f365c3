"""One client floods the class server (issue 49: no single client can take a class down): 4,200 idle TCP
connections, kept up as nginx drops them, from 127.0.0.2 against serve-class.sh's nginx on 127.0.0.1,
while another client (127.0.0.1) loads the page and asks for the health check through nginx. The other
client's p95 stays within 3x its p95 before the flood, every answer is a 200, the supervisor's own
health checks never miss, and the flooder is refused: nginx closes its idle connections after
client_header_timeout, and past --conn-per-client requests in progress it gets 429."""
from __future__ import annotations

import http.client
import re
import resource
import select
import selectors
import signal
import socket
import statistics
import threading
import time
from pathlib import Path

import pytest

from devtools import class_server
from devtools.app_server import free_port

FLOODER = "127.0.0.2"                # the flood's source address: nginx tells it from the other client
FLOOD = 4200                         # idle connections held at once
HEADER_TIMEOUT = 10.0                # deploy/nginx.conf's client_header_timeout
CONN_PER_CLIENT = 600                # serve-class's default


def enough_files(wanted: int) -> None:
    """Raise this process's soft descriptor limit to `wanted` if it is lower and the hard limit allows."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < wanted:
        if hard != resource.RLIM_INFINITY and hard < wanted:
            pytest.fail(f"ulimit -n: the hard limit {hard} is below the {wanted} descriptors the flood needs")
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


class Flood:
    """FLOOD idle connections from FLOODER, each reopened when nginx closes it (a flooder keeps trying),
    in a thread. closed: how many nginx closed; first_wave_closed: when the first FLOOD had all been closed."""

    def __init__(self, port: int, count: int):
        self.port, self.count = port, count
        self.selector = selectors.DefaultSelector()
        self.closed, self.open, self.opened_at, self.first_wave_closed = 0, 0, None, None
        self.first_wave: set[int] = set()
        self.stop = threading.Event()
        self.failed: list[str] = []
        self.thread = threading.Thread(target=self._run, daemon=True, name="flood")

    def _connect(self) -> socket.socket:
        s = socket.socket()
        s.settimeout(5)
        s.bind((FLOODER, 0))
        s.connect(("127.0.0.1", self.port))
        s.setblocking(False)
        self.selector.register(s, selectors.EVENT_READ)
        self.open += 1
        return s

    def _run(self) -> None:
        try:
            self.first_wave = {self._connect().fileno() for _ in range(self.count)}
            self.opened_at = time.monotonic()
            while not self.stop.is_set():
                for key, _ in self.selector.select(0.2):
                    self._closed_by_server(key.fileobj)
        except OSError as e:                      # the test reads this: a flood that could not be made
            self.failed.append(repr(e))

    def _closed_by_server(self, s: socket.socket) -> None:
        try:
            data = s.recv(512)
        except ConnectionResetError:              # reset_timedout_connection: nginx resets them
            data = b""
        if data:                                  # nginx never answers an idle connection
            self.failed.append(f"an idle connection got {data[:40]!r}")
        self.selector.unregister(s)
        self.first_wave.discard(s.fileno())
        s.close()
        self.open -= 1
        self.closed += 1
        if not self.first_wave and self.first_wave_closed is None:
            self.first_wave_closed = time.monotonic()
        self._connect()                           # the flooder tries again

    def __enter__(self):
        self.thread.start()
        deadline = time.monotonic() + 60
        while self.opened_at is None and not self.failed:
            assert time.monotonic() < deadline, f"{self.open} of {self.count} connections opened in 60 s"
            time.sleep(0.05)
        assert not self.failed, self.failed
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(timeout=10)
        for key in list(self.selector.get_map().values()):
            key.fileobj.close()
        self.selector.close()


def page_and_health(port: int) -> list[tuple[float, int]]:
    """One visit of the other client (a new connection each, as a phone's first load): GET / and
    /_stcore/health through nginx; (seconds, status) of each."""
    took = []
    for path in ("/", "/_stcore/health"):
        t0 = time.perf_counter()
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
        conn.request("GET", path)
        response = conn.getresponse()
        response.read()
        conn.close()
        took.append((time.perf_counter() - t0, response.status))
    return took


def visits(port: int, rounds: int) -> tuple[list[float], set[int]]:
    answers = [answer for _ in range(rounds) for answer in page_and_health(port)]
    return [seconds for seconds, _ in answers], {status for _, status in answers}


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1]


def held_requests_refused(port: int, count: int) -> list[bytes]:
    """`count` connections from the flooder, each sending a POST's head and holding its body back (a
    request in progress, counted by limit_conn); the status lines answered within 5 s."""
    socks = []
    try:
        for _ in range(count):
            s = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(FLOODER, 0))
            s.sendall(b"POST /_stcore/upload_file HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n")
            socks.append(s)
        answered, deadline = {}, time.monotonic() + 5
        while time.monotonic() < deadline and len(answered) < count - CONN_PER_CLIENT:
            for s in select.select([s for s in socks if s not in answered], [], [], 0.2)[0]:
                answered[s] = s.recv(200).split(b"\r\n", 1)[0]
        return list(answered.values())
    finally:
        for s in socks:
            s.close()


@pytest.mark.browser                  # starts the class server itself
def test_one_client_s_flood_of_idle_connections_leaves_the_class_served():
    enough_files(FLOOD + CONN_PER_CLIENT + 2000)
    port = free_port()
    proc, lines = class_server.serving(1, port)
    logs = Path(re.search(r"logs in (\S+)\)", lines[-1]).group(1))
    try:
        visits(port, 5)                                          # warm: the first answers are the slowest
        idle, idle_statuses = visits(port, 40)
        with Flood(port, FLOOD) as flood:
            flooded, flood_statuses = visits(port, 40)
            deadline = time.monotonic() + HEADER_TIMEOUT + 20
            while flood.first_wave_closed is None and time.monotonic() < deadline:
                time.sleep(0.2)
            assert not flood.failed, flood.failed
            assert flood.first_wave_closed is not None, f"nginx closed {flood.closed} of the {FLOOD} idle connections"
            dropped_after = flood.first_wave_closed - flood.opened_at
            during = visits(port, 10)                            # nginx busy closing and the flooder reopening
        refused = held_requests_refused(port, CONN_PER_CLIENT + 50)
        after, after_statuses = visits(port, 10)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
    print(f"other client p95: {p95(idle) * 1000:.1f} ms idle, {p95(flooded) * 1000:.1f} ms under {FLOOD} idle "
          f"connections (max {max(flooded) * 1000:.1f} ms); nginx closed all {FLOOD} within {dropped_after:.1f} s "
          f"({flood.closed} closed in all); {len(refused)} held requests past {CONN_PER_CLIENT} refused")
    assert idle_statuses == flood_statuses == during[1] == after_statuses == {200}
    # 3x the quiet p95, with a floor: a quiet answer here takes ~5 ms, and the other test worker of a 2-core CI
    # machine alone can stretch that by tens of ms; a flood that took nginx down fails the statuses above anyway
    assert p95(flooded) <= max(3 * p95(idle), 0.15), (p95(idle), p95(flooded))
    assert dropped_after <= HEADER_TIMEOUT + 10
    assert refused and set(refused) == {b"HTTP/1.1 429 Too Many Requests"} and len(refused) == 50, refused
    said = (logs / "supervisor.log").read_text()
    assert "missed" not in said and "restarting" not in said, said    # the supervisor's checks held
    assert "worker_connections are not enough" not in (logs / "error.log").read_text()
