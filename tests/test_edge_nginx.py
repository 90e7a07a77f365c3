"""The class server's front (deploy/nginx.conf, as deploy/serve_class.py fills it) in Debian's nginx, in
front of a tiny upstream that echoes the X-Forwarded-For it receives: nginx overwrites a client's own
header, and one client address past a limit gets 429 while another is served (issue 49). Everything runs
on 127.0.0.1; the "other client" binds its source address to 127.0.0.2, so nginx sees two addresses."""
from __future__ import annotations

import http.client
import importlib.util
import select
import shutil
import socket
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from devtools.app_server import free_port

ROOT = Path(__file__).resolve().parent.parent
FLOODER = "127.0.0.2"               # a second loopback address: the client nginx must limit
CONN_PER_CLIENT = 20                # small here; serve-class's default (600) is a class behind one NAT


def serve_class_module():
    """deploy/serve_class.py, imported by path (deploy/ is no package)."""
    spec = importlib.util.spec_from_file_location("serve_class", ROOT / "deploy" / "serve_class.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Echo(BaseHTTPRequestHandler):
    """Answers every request with the X-Forwarded-For it was sent (what a replica would believe)."""

    def do_GET(self):
        body = (self.headers.get("X-Forwarded-For") or "").encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET

    def log_message(self, *args):         # quiet: the test reads the answers, not a log
        pass


def listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture(scope="module")
def front(tmp_path_factory):
    """nginx with the class server's configuration, one upstream (the echo server); yields its port."""
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not Path(nginx).exists():
        pytest.fail("nginx is not installed (.ci/run installs it with apt)")
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    run = tmp_path_factory.mktemp("nginx")
    for sub in serve_class_module().SCRATCH:
        (run / sub).mkdir(mode=0o700)
    port = free_port()
    conf = serve_class_module().nginx_conf(run, f"127.0.0.1:{port}", [upstream.server_address[1]], CONN_PER_CLIENT)
    (run / "nginx.conf").write_text(conf, encoding="utf-8")
    proc = subprocess.Popen([nginx, "-p", str(run), "-e", str(run / "error.log"), "-c", str(run / "nginx.conf"),
                             "-g", "daemon off; master_process off;"], stdin=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 10
    while not listening(port):
        assert proc.poll() is None, "nginx did not start:\n" + proc.stderr.read()
        assert time.monotonic() < deadline, "nginx did not listen within 10 s"
        time.sleep(0.05)
    try:
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        upstream.shutdown()


def get(port: int, path: str, source: str = "127.0.0.1", headers: dict | None = None,
        conn: http.client.HTTPConnection | None = None) -> tuple[int, str]:
    """(status, body) of one GET through nginx from `source`, on `conn` when given (kept alive)."""
    conn = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(source, 0))
    conn.request("GET", path, headers=headers or {})
    response = conn.getresponse()
    return response.status, response.read().decode()


def test_nginx_overwrites_a_client_s_own_x_forwarded_for(front):
    """The replica sees the address nginx saw ($remote_addr), never what the client wrote, which
    $proxy_add_x_forwarded_for would have kept in front of it (and a loopback client's own word would
    have been the hop a replica believes)."""
    assert get(front, "/", headers={"X-Forwarded-For": "203.0.113.9"}) == (200, "127.0.0.1")
    assert get(front, "/", FLOODER, headers={"X-Forwarded-For": "203.0.113.9, 198.51.100.7"}) == (200, FLOODER)
    assert get(front, "/_stcore/stream", FLOODER, headers={"X-Forwarded-For": "10.1.1.1"}) == (200, FLOODER)
    assert get(front, "/") == (200, "127.0.0.1")                                # no header: still the peer


def test_one_address_opening_sessions_too_fast_gets_429_and_another_is_served(front):
    """New sessions (the websocket's path) per address: a class's 500 at once pass, then 10 a second;
    past that the flooder gets 429 at once, while a second address opens its session."""
    conn = http.client.HTTPConnection("127.0.0.1", front, timeout=10, source_address=(FLOODER, 0))
    statuses = [get(front, "/_stcore/stream", conn=conn)[0] for _ in range(620)]
    conn.close()
    assert set(statuses[:500]) == {200}, statuses[:500]                      # the burst: a class arriving
    assert statuses.count(429) >= 50 and set(statuses) == {200, 429}
    assert get(front, "/_stcore/stream")[0] == 200                          # the other client


def test_one_address_past_its_connections_gets_429_and_another_is_served(front):
    """Requests in progress per address (limit_conn): each of the flooder's connections sends a POST's
    head and holds its body back; CONN_PER_CLIENT of them are held (until client_body_timeout), the rest
    answered 429 at once; a second address is served meanwhile."""
    extra = 10
    socks = []
    try:
        for _ in range(CONN_PER_CLIENT + extra):
            s = socket.create_connection(("127.0.0.1", front), timeout=5, source_address=(FLOODER, 0))
            s.sendall(b"POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n")
            socks.append(s)
        answered, deadline = {}, time.monotonic() + 5
        while len(answered) < extra and time.monotonic() < deadline:
            ready, _, _ = select.select([s for s in socks if s not in answered], [], [], 0.2)
            for s in ready:
                answered[s] = s.recv(200).split(b"\r\n", 1)[0]
        assert sorted(set(answered.values())) == [b"HTTP/1.1 429 Too Many Requests"], answered.values()
        held = [s for s in socks if s not in answered]
        assert len(held) == CONN_PER_CLIENT and not select.select(held, [], [], 0.5)[0]   # held, unanswered
        assert get(front, "/")[0] == 200
    finally:
        for s in socks:
            s.close()
