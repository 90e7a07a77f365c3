"""Start the app on 127.0.0.1 with a free port, and a headless Debian Chromium to look at it.

Used by the browser tests and by `python -m devtools.app_server URL-PATH OUT.png` to take a screenshot.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def start_server(timeout: float = 90.0, prefix: tuple[str, ...] = (), env: dict | None = None, script: str = "app.py",
                 root: Path = ROOT):
    """Yields (base URL, process) of a running `streamlit run app.py`; stops it afterwards.
    prefix: a command to run it under (e.g. taskset -c 0); env: extra environment variables;
    script: another Streamlit script, relative to the repository root (bench/trivial_page.py);
    root: another checkout of the repository to serve (a bench's "before", e.g. a git worktree)."""
    port = free_port()
    cmd = [*prefix, sys.executable, "-m", "streamlit", "run", script, "--server.address", "127.0.0.1",
           "--server.port", str(port), "--server.headless", "true"]
    proc = subprocess.Popen(cmd, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env={**os.environ, "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false", **(env or {})})
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                urllib.request.urlopen(f"{url}/_stcore/health", timeout=2)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the app server did not start:\n" + proc.stdout.read().decode()) from None
                time.sleep(0.1)                     # polling the health endpoint, no browser yet
        yield url, proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


@contextlib.contextmanager
def app_server(timeout: float = 90.0):
    """Yields the base URL of a running `streamlit run app.py`; stops it afterwards."""
    with start_server(timeout) as (url, _):
        yield url


def launch_chromium(playwright):
    return playwright.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_FLAGS)


# No script run in progress, as the app's root element says (data-test-script-state: "running" from the run's
# start to its end, fragment runs included; on a page with a periodic fragment it holds between two ticks).
# Not Streamlit's status widget: under toolbarMode "minimal" it is not drawn, so its absence says nothing.
# Before a page's first run ("initial") this is true too: wait for something the run draws first.
IDLE = "!['running', 'rerunRequested'].includes(document.querySelector('[data-testid=\"stApp\"]')?.dataset.testScriptState)"
# Settled: no script running, the fonts loaded, no element still loading its code (Streamlit shows a
# stSkeleton until a lazily loaded element such as a Plotly chart mounts: a chart not yet there cannot
# be measured), every Plotly chart drawn (its .main-svg), in lecture mode at the screen's scale (the scale
# Python drew at is the one the tab asks for: assets/common/screen.js), and the page's layout (its height,
# each figure's place and size) the same for `frames` animation frames in a row.
SETTLED = """(frames) => {
  const plots = [...document.querySelectorAll('.js-plotly-plot')];
  const figures = [...plots, ...document.querySelectorAll('.gdn-figure')].map(e => {
    const r = e.getBoundingClientRect(); return `${Math.round(r.top)},${Math.round(r.height)}`; });
  const main = document.querySelector('[data-testid="stMain"]');
  const sig = [main ? main.scrollHeight : 0, window.scrollY, ...figures].join('|');
  const s = window.__gdnSettle;
  if (!s || s.sig !== sig) { window.__gdnSettle = {sig, n: 0}; return false; }
  s.n += 1;
  const scale = document.documentElement.dataset;
  return s.n >= frames && document.fonts.status === 'loaded' && plots.every(p => p.querySelector('.main-svg'))
         && scale.gdnScaleWant === scale.gdnScaleDrawn && !document.querySelector('[data-testid="stSkeleton"]')
         && IDLE_NOW;
}""".replace("IDLE_NOW", IDLE)


def wait_until_settled(page, timeout_ms: int = 60_000, frames: int = 3) -> None:
    """Wait until nothing on the page moves any more (see SETTLED): after a scroll, a layout change, a run."""
    page.evaluate("window.__gdnSettle = null")
    page.wait_for_function(SETTLED, arg=frames, polling="raf", timeout=timeout_ms)


# What shows that each view of the real model page is drawn (after its forward pass in a worker): its figure,
# or for views that draw none until the visitor acts, their first control.
REAL_MODEL_READY = {"gates": ".gdn-figure", "head": ".js-plotly-plot", "intervene": ".st-key-real_model_iv_head",
                    "check": ".st-key-real_model_check", "replay": ".st-key-real_model_replay",
                    "export": ".st-key-real_model_csv"}


def wait_for_app(page, timeout_ms: int = 60_000, chart: bool = True) -> None:
    """Wait until the script finished running and (if the page has one) a figure is drawn: a Plotly chart or
    one of the HTML figures (.gdn-figure: the stepped tables, the real model's gates), else the page's heading
    (any level: in lecture mode the real model page's title is a subheader, to stay one line); then until it
    settled."""
    page.wait_for_selector(".js-plotly-plot, .gdn-figure" if chart else '[data-testid="stHeading"]', timeout=timeout_ms)
    page.wait_for_function(IDLE, timeout=timeout_ms)
    wait_until_settled(page, timeout_ms)


class SentMessages:
    """What a page sends its server over its websockets, to check that moves answered in the browser send
    nothing: over a burst and a window after it, no more messages than over an idle window as long (the
    connection's own traffic). idle() measures that window and starts the count; assert_quiet() checks it."""
    WINDOW_MS = 1500

    def __init__(self, page):
        self.page, self.frames, self.start, self.allowed = page, [], 0, 0
        # a Python function, not list.append: playwright cannot wrap a builtin as a listener
        page.on("websocket", lambda ws: ws.on("framesent", lambda payload: self.frames.append(payload)))

    def idle(self) -> None:
        start = len(self.frames)
        self.page.wait_for_timeout(self.WINDOW_MS)          # a measuring window, not a wait for readiness
        self.allowed, self.start = len(self.frames) - start, len(self.frames)

    def assert_quiet(self, window_ms: int = WINDOW_MS) -> None:
        self.page.wait_for_timeout(window_ms)
        assert len(self.frames) - self.start <= self.allowed, self.frames[self.start:]


def track_runs(page) -> None:
    """Keep the page's Streamlit connection as page.app_socket, for rerun() (call before page.goto)."""
    page.on("websocket", lambda ws: "_stcore/stream" in ws.url and setattr(page, "app_socket", ws))


def rerun(page, action, timeout_ms: int = 60_000) -> None:
    """action() (a click, a key) makes the script run: wait for the server's answer, then for the page to
    settle. Waiting for the answer first matters when the run changes nothing visible (the same Run twice)."""
    with page.app_socket.expect_event("framereceived", timeout=timeout_ms):
        action()
    wait_for_app(page, timeout_ms, chart=False)


def stays(page, expression: str, ms: int) -> bool:
    """True when the JS `expression` keeps its value for `ms` (a watched window: it returns False the
    moment the value changes). For claims that nothing happens, e.g. a paused player does not step."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout  # here: the servers need no browser

    before = page.evaluate(f"() => {expression}")
    try:
        page.wait_for_function(f"(before) => ({expression}) !== before", arg=before, timeout=ms)
        return False
    except PlaywrightTimeout:
        return True


def open_page(page, url: str, *, width: int = 1280, height: int = 1400, chart: bool = True) -> None:
    """Open a page by its link (deep links work on a fresh server) and wait for it to be drawn."""
    page.set_viewport_size({"width": width, "height": height})
    page.goto(url)
    wait_for_app(page, chart=chart)


if __name__ == "__main__":
    from playwright.sync_api import sync_playwright

    shots = [a.split("=", 1) for a in sys.argv[1:]]            # out.png=path?query [WxH via env SIZE]
    w, h = map(int, os.environ.get("SIZE", "1280x800").split("x"))
    with app_server() as base, sync_playwright() as p:
        browser = launch_chromium(p)
        page = browser.new_page(viewport={"width": w, "height": h})
        for out, path in shots:
            page.goto(f"{base}/{path}")
            wait_for_app(page, chart="classroom" not in path)
            page.screenshot(path=out, full_page=os.environ.get("FULL") == "1")
            print("saved", out)
        browser.close()
