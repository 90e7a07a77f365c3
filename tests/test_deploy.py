"""Hosting a class: the container recipe (checked as text: no container runtime here) and several app
replicas behind nginx with cookie affinity (started for real, visited by browsers)."""
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from devtools import class_server as class_server_process
from devtools.app_server import free_port

ROOT = Path(__file__).resolve().parent.parent
README_RUN = "streamlit run app.py"


def dockerfile() -> str:
    return (ROOT / "deploy" / "Dockerfile").read_text(encoding="utf-8")


def test_dockerfile_copies_what_exists_and_runs_the_readme_command():
    text = dockerfile()
    for line in re.findall(r"^COPY (.+)$", text, flags=re.M):
        for source in line.split()[:-1]:
            assert (ROOT / source).exists(), f"COPY {source}: no such file in the repository"
    copied = {s for line in re.findall(r"^COPY (.+)$", text, flags=re.M) for s in line.split()[:-1]}
    assert {"requirements.txt", "app.py", "app_pages", "gdn", "assets", ".streamlit"} <= copied
    cmd = re.search(r'^CMD \[(.*)\]$', text, flags=re.M).group(1).replace('"', "").replace(",", "")
    assert cmd.startswith(README_RUN) and README_RUN in (ROOT / "README.md").read_text(encoding="utf-8")
    assert re.search(r"^USER (?!root)\w+", text, flags=re.M)                       # not root
    assert "/_stcore/health" in re.search(r"^HEALTHCHECK .*$", text, flags=re.M).group(0)
    for var in ("GDN_MODEL_DIRS", "GDN_ALLOW_DOWNLOADS", "GDN_MAX_DOWNLOAD_GB", "HF_HUB_CACHE"):
        assert var in text
    assert "fonts-noto-cjk" in text and "requirements.txt" in text


@pytest.mark.browser                  # starts the app server itself (see tests/conftest.py)
def test_the_container_start_up_without_the_container(tmp_path):
    """The image's command with its environment, run here (this interpreter): the app answers its health check."""
    port = free_port()
    env = {**os.environ, "HF_HUB_CACHE": str(tmp_path), "GDN_MODEL_DIRS": "", "GDN_ALLOW_DOWNLOADS": "0"}
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.address", "127.0.0.1", "--server.port", str(port)]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_ok(f"http://127.0.0.1:{port}/_stcore/health", 90)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def wait_ok(url: str, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            return urllib.request.urlopen(url, timeout=2).status == 200
        except OSError:
            time.sleep(0.5)
    return False


@pytest.fixture
def class_server():
    """bash deploy/serve-class.sh --replicas 3 on a free port; yields (url, replica pids, log folder, the
    script's process and the lines it printed so far)."""
    if shutil.which("nginx") is None and not Path("/usr/sbin/nginx").exists():
        pytest.fail("nginx is not installed (.ci/run installs it with apt)")
    port = free_port()
    proc, lines = class_server_process.serving(3, port)
    pids = [int(m.group(1)) for m in (re.search(r"pid (\d+)", line) for line in lines) if m]
    logs = Path(re.search(r"logs in (\S+)\)", lines[-1]).group(1))
    url = f"http://127.0.0.1:{port}"
    assert wait_ok(f"{url}/_stcore/health", 60)
    try:
        yield url, pids, logs, proc, lines
    finally:
        proc.send_signal(signal.SIGINT)                   # Ctrl-C stops nginx and every replica
        proc.wait(timeout=30)
        assert not any(Path(f"/proc/{pid}").exists() for pid in pids)


@pytest.mark.browser
def test_three_replicas_behind_nginx_share_a_class(class_server, browser):
    url, pids, logs, proc, lines = class_server
    prompt = "the tiger is red . ask tiger ?"
    contexts = []
    for i in range(6):                                    # six students, one NAT (all 127.0.0.1)
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        page = context.new_page()
        page.goto(f"{url}/real_model?lang=en")
        page.wait_for_selector(".rm-gates", timeout=90_000)
        page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(
            files=[{"name": f"p{i}.txt", "mimeType": "text/plain", "buffer": f"{prompt} {i}".encode()}])
        area = page.locator("textarea").first
        deadline = time.monotonic() + 60
        while area.input_value() != f"{prompt} {i}":      # the upload (an HTTP PUT) reached the session's replica
            assert time.monotonic() < deadline, "the uploaded prompt never arrived"
            time.sleep(0.3)
        assert page.locator('[data-testid="stException"]').count() == 0
        contexts.append(context)
    # nginx logs a websocket when it closes; the uploads are done: one per session, each on its replica.
    uploads = [line for line in (logs / "access.log").read_text().splitlines() if "/_stcore/upload_file" in line]
    upstreams = {re.search(r"-> (\S+)", line).group(1) for line in uploads}
    assert len(upstreams) > 1, upstreams                  # the sessions are spread over replicas
    assert len({line.split("sid=")[1] for line in uploads}) == 6     # one affinity id per browser
    os.kill(pids[0], signal.SIGTERM)                      # one replica dies: the supervisor saw it exit
    class_server_process.read_until(proc, rf"replica 0 \(pid {pids[0]}\) (was killed|exited)", lines, timeout=30)
    for _ in range(2):                                    # new students are still served
        context = browser.new_context()
        page = context.new_page()
        page.goto(f"{url}/?lang=en")
        try:
            page.wait_for_selector(".gdn-att .att-bar", timeout=90_000)   # the start page's figure, drawn
        except PlaywrightTimeout:                         # a student reloads once: the surviving replicas may
            page.reload()                                 # still be busy with the six sessions' first runs
            page.wait_for_selector(".gdn-att .att-bar", timeout=90_000)   # the start page's figure, drawn
        contexts.append(context)
    for context in contexts:
        context.close()


def listening(port: int) -> bool:
    """Whether anything accepts a connection on 127.0.0.1:port."""
    import socket
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def time_wait_on(port: int) -> int:
    """Connections in TIME_WAIT whose local port is `port` (/proc/net/tcp: state 06)."""
    rows = Path("/proc/net/tcp").read_text().splitlines()[1:]
    return sum(1 for r in rows if r.split()[1].endswith(f":{port:04X}") and r.split()[3] == "06")


@pytest.mark.browser                  # starts the class server itself
def test_the_class_server_restarts_on_its_port_right_after_a_class():
    """A class's connections to nginx end in TIME_WAIT on the server's port (nginx closes them first); a
    restart at once must take the port (a listening check, not a bind that TIME_WAIT blocks)."""
    port = free_port()
    proc, lines = class_server_process.serving(1, port)
    for _ in range(40):                                   # traffic: each request on its own connection
        request = urllib.request.Request(f"http://127.0.0.1:{port}/_stcore/health", headers={"Connection": "close"})
        assert urllib.request.urlopen(request, timeout=10).status == 200
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=30) == 0 and not listening(port)
    assert time_wait_on(port) > 0                         # the situation of issue 40, here for real
    again, lines = class_server_process.serving(1, port)  # at once: no waiting out TIME_WAIT
    try:
        assert wait_ok(f"http://127.0.0.1:{port}/_stcore/health", 30)
        third = class_server_process.serve("--replicas", "1", "--port", str(port))   # a live server: refused
        assert third.wait(timeout=30) == 1 and "is in use" in third.stderr.read()
    finally:
        again.send_signal(signal.SIGINT)
        again.wait(timeout=30)


@pytest.mark.browser
def test_kill_9_of_the_supervisor_leaves_nothing_serving():
    """The replicas and nginx die with their supervisor (PR_SET_PDEATHSIG): kill -9 of serve-class.sh
    leaves no orphan answering on the port, and no replica."""
    port = free_port()
    proc, lines = class_server_process.serving(2, port)
    replicas = [int(m.group(1)) for m in (re.search(r"pid (\d+)", line) for line in lines) if m]
    logs = Path(re.search(r"logs in (\S+)\)", lines[-1]).group(1))
    nginx = int((logs / "nginx.pid").read_text())
    assert listening(port) and len(replicas) == 2
    os.kill(proc.pid, signal.SIGKILL)                     # the supervisor (bash exec'd it: the same pid)
    proc.wait(timeout=10)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and (listening(port) or any(alive(p) for p in [nginx, *replicas])):
        time.sleep(0.2)
    assert not listening(port), "something still answers on the class server's port"
    assert not [p for p in [nginx, *replicas] if alive(p)]


def alive(pid: int) -> bool:
    """A process that exists and is not a zombie waiting for its parent."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
