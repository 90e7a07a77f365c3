"""Shared fixtures: one app server and one headless Chromium for all browser tests of a run."""
import os
import threading

# The tests run torch as the app does (app.py): one OpenMP thread unless the caller chose otherwise. Set here,
# before any test module imports torch. On a busy 2-core machine two threads wait on each other for every small
# op: tests/test_kernels.py + test_chunking.py took 54 s with torch's default (2 threads) and 17 s with 1.
os.environ.setdefault("OMP_NUM_THREADS", "1")
# The machine-wide copies of loaded checkpoints (gdn/qwen35/snapshot.py) go to a folder of this run, not to the
# user's cache, removed at exit (app servers and workers the tests start inherit it).
if "GDN_WEIGHT_CACHE" not in os.environ:
    import atexit
    import shutil
    import tempfile
    os.environ["GDN_WEIGHT_CACHE"] = tempfile.mkdtemp(prefix="gdn-weights-")
    atexit.register(shutil.rmtree, os.environ["GDN_WEIGHT_CACHE"], ignore_errors=True)

import pytest

from devtools.app_server import launch_chromium, start_server, track_runs


class ServerLog:
    """What a server prints, read line by line as it comes by a thread (also keeps its pipe from filling up)."""

    def __init__(self, stream):
        self.lines: list[str] = []
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream) -> None:
        for line in iter(stream.readline, b""):
            self.lines.append(line.decode(errors="replace"))

    def since(self, mark: int) -> str:
        return "".join(self.lines[mark:])


@pytest.fixture(scope="session")
def app_server_run():
    """The shared app server: (base URL, its log). Unbuffered, so what it prints is in the log at once."""
    with start_server(env={"PYTHONUNBUFFERED": "1"}) as (url, proc):
        yield url, ServerLog(proc.stdout)


@pytest.fixture(scope="session")
def app_url(app_server_run):
    return app_server_run[0]


@pytest.fixture(scope="session")
def app_log(app_server_run):
    """The shared server's log: mark = len(app_log.lines) before, app_log.since(mark) after."""
    return app_server_run[1]


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = launch_chromium(p)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def tour(browser, app_url):
    """Every page and view opened once per (language, screen), measured for every test that only looks
    (tests/page_tour.py): tour.get(lang, screen)[view]."""
    from tests.page_tour import Tour

    return Tour(browser, app_url)


class Tabs:
    """Tabs kept open across tests, one per kind of context (its options: a locale), each handed to one test
    at a time and wiped in between. Opening a tab costs about a second on the 2-core machine before its first
    page is drawn (measured: 2.2-2.5 s per load of the memory page in a new tab, 1.2-1.3 s in a kept one: a new
    renderer process, the app's scripts compiled and its fonts read again), and most browser tests open one.
    Between two tests a tab leaves the app (so its Streamlit session ends), and loses its cookies and the
    origin's localStorage and sessionStorage (what the app keeps in a tab: the live class's voter id, the
    kept prompt): the next test starts as a new visitor, whatever ran before. Listeners a test added stay
    attached to the tab but only ever fill that test's own lists."""

    def __init__(self, browser, app_url: str):
        self.browser, self.app_url, self.kept, self.used = browser, app_url, {}, set()

    def open(self, viewport: dict, **context_options):
        """The kept tab of this kind of context at `viewport`, wiped if a test had it since its last wipe."""
        key = tuple(sorted(context_options.items()))
        tab = self.kept.get(key)
        if tab is not None and not tab.is_closed() and tab in self.used:
            self.wipe(tab)
        if tab is None or tab.is_closed():
            tab = self.browser.new_context(viewport=viewport, **context_options).new_page()
            # A deep link (/compare) makes Streamlit's frontend probe /compare/_stcore/... for a base path;
            # those 404s are expected and harmless, every other console error is a problem.
            tab.on("console", lambda m: m.type == "error" and "status of 404" not in m.text
                   and tab.problems.append(f"console: {m.text}"))
            tab.on("pageerror", lambda e: tab.problems.append(f"page error: {e}"))
            track_runs(tab)
            self.kept[key] = tab
        tab.problems = []
        tab.set_viewport_size(viewport)
        self.used.add(tab)
        return tab

    def wipe(self, tab) -> None:
        """Leave the app for a plain page of its origin (the health check), clear what the tab keeps."""
        self.used.discard(tab)
        if tab.is_closed():
            return
        tab.goto(f"{self.app_url}/_stcore/health")
        tab.evaluate("() => { sessionStorage.clear(); localStorage.clear(); }")
        tab.context.clear_cookies()
        tab.mouse.move(0, 0)                     # where a new tab's pointer is: nothing hovered

    def close(self) -> None:
        for tab in self.kept.values():
            if not tab.is_closed():
                tab.context.close()


@pytest.fixture(scope="session")
def tabs(browser, app_url):
    kept = Tabs(browser, app_url)
    yield kept
    kept.close()


@pytest.fixture
def page(tabs):
    """A tab at 1280x800 on no page of the app, as a new visitor's (see Tabs), whose console errors and
    outside requests are collected in page.problems."""
    tab = tabs.open({"width": 1280, "height": 800})
    yield tab
    tabs.wipe(tab)


# The two fixtures that start something: the app server and Chromium (a test that starts a server of its own,
# a replica or a benchmark's, carries the mark itself). Every other browser fixture (app_url,
# app_log, tabs, tour, page) needs one of them, so a test's fixture closure names one exactly when it starts either. Matching on the
# fixtures' own names (page) marked the AppTest tests of tests/test_real_model_page.py, whose `page` fixture
# is their own module's and starts neither, and left them out of the fast command.
BROWSER_FIXTURES = {"browser", "app_server_run"}


SHARED_APP_GROUP = "shared_app"


@pytest.hookimpl(tryfirst=True)        # before xdist's own hook, which reads the groups off the items
def pytest_collection_modifyitems(items):
    """Every test that starts the app server or Chromium is a browser test, marked or not, so
    `pytest -m "not browser" -n 2` (the fast command in the README) never starts either.

    The whole suite runs in two worker processes (`-n 2 --dist loadgroup`, the README's test command): every
    test on the shared app server is put in one group, so one worker runs them all on one server, one tour and
    the kept tabs, while the other worker takes the rest module by module (a module's own fixtures, such as a
    server of its own or the recall page's three trainings, are made once). Measured on the 2-core machine,
    the browser tests alone used half a core over their 11 minutes (they mostly wait: on a server's answer, a
    page's drawing, a poll): the other core was idle."""
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if BROWSER_FIXTURES & fixtures and not item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.browser)
        group = SHARED_APP_GROUP if "app_server_run" in fixtures else item.nodeid.split("::")[0]
        item.add_marker(pytest.mark.xdist_group(group))
