"""Shared fixtures: one app server and one headless Chromium for all browser tests of a run."""
import os

# The tests run torch as the app does (app.py): one OpenMP thread unless the caller chose otherwise. Set here,
# before any test module imports torch. On a busy 2-core machine two threads wait on each other for every small
# op: tests/test_kernels.py + test_chunking.py took 54 s with torch's default (2 threads) and 17 s with 1.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import pytest

from devtools.app_server import app_server, launch_chromium, track_runs


@pytest.fixture(scope="session")
def app_url():
    with app_server() as url:
        yield url


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = launch_chromium(p)
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    """A fresh page whose console errors and outside requests are collected in page.problems."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.problems = []
    # A deep link (/compare) makes Streamlit's frontend probe /compare/_stcore/... for a base path;
    # those 404s are expected and harmless, every other console error is a problem.
    page.on("console", lambda m: m.type == "error" and "status of 404" not in m.text
            and page.problems.append(f"console: {m.text}"))
    page.on("pageerror", lambda e: page.problems.append(f"page error: {e}"))
    track_runs(page)
    yield page
    context.close()


BROWSER_FIXTURES = {"browser", "page", "app_url"}


def pytest_collection_modifyitems(items):
    """Every test that starts the app server or Chromium is a browser test, marked or not, so
    `pytest -m "not browser"` (the fast command in the README) never starts either."""
    for item in items:
        if BROWSER_FIXTURES & set(getattr(item, "fixturenames", ())) and not item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.browser)
