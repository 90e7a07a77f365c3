"""Every page teaches on one screen: its main figure starts in the first screen with at least 300 px (or all
of a smaller figure) showing, at 1440x900 and in lecture mode at 1920x1080 and 1280x720; lecture text is projector-sized;
in-app page switches keep the language even when the browser's own language is another."""
import pytest

from app_pages._support.path import PATH
from devtools.app_server import wait_for_app
from tests.page_tour import NO_MAIN_CHART
from tests.page_tour import SCREENS as tour_screens
from tests.test_browser_classroom import MIN_BODY_PX, MIN_CHART_PX

pytestmark = pytest.mark.browser

MIN_VISIBLE_PX = 300
SCREENS = ["1440x900", "1920x1080", "1280x720"]


@pytest.mark.parametrize("screen", SCREENS)
def test_main_figure_is_on_the_first_screen(tour, screen):
    """Each page's default view opened by its link in both languages (tests/page_tour.py: the load is shared
    with the other tests that look at it; there the main figure and, in lecture mode, the text sizes are read
    once every chart is drawn)."""
    width, height, lecture = tour_screens[screen]
    misses = []
    for stop in PATH:
        if stop.url_path in NO_MAIN_CHART:
            continue
        for lang in ("zh", "en"):
            seen = tour.get(lang, screen)[stop.url_path]
            box = seen["main_figure"]
            # at least MIN_VISIBLE_PX of it, or all of a smaller figure (the chunking page's 3 x 3 tables)
            if box is None or box["top"] >= height or box["visible"] < min(MIN_VISIBLE_PX, box["height"] - 1):
                misses.append((stop.url_path, lang, box))
            if lecture:
                sizes = seen["lecture_sizes"]
                if sizes["body"] is not None and sizes["body"] < MIN_BODY_PX:
                    misses.append((stop.url_path, lang, "body text", sizes["body"]))
                if sizes["ticks"] is not None and sizes["ticks"] < MIN_CHART_PX:
                    misses.append((stop.url_path, lang, "tick labels", sizes["ticks"]))
                small = [p for p in sizes["metrics"] if p[0] < p[1]]
                if small:
                    misses.append((stop.url_path, lang, "metric value smaller than its label", small))
    assert not misses, "\n".join(map(str, misses))


def test_page_switches_keep_the_language_of_the_link(tabs, app_url):
    """The browser says English, the link says Chinese: navigation, next links, "show me live" and the
    real model's replay must all keep Chinese (a bare st.switch_page used to lose it)."""
    page = tabs.open({"width": 1440, "height": 900}, locale="en-US")      # a kept tab, as a new visitor's
    nav = lambda: [x.split("\n")[-1] for x in page.locator('[data-testid="stTopNavLink"]').all_inner_texts()]
    page.goto(f"{app_url}/{PATH[0].address}?lang=zh")
    wait_for_app(page)
    assert "记忆表" in nav()
    for stop in PATH[1:]:                                     # the "next" link at the end of every page
        page.locator('[data-testid="stPageLink"] a').last.click()
        page.wait_for_url(f"**/{stop.url_path}?*", timeout=30_000)
        wait_for_app(page, chart=stop.url_path not in NO_MAIN_CHART)
        assert "lang=zh" in page.url and "记忆表" in nav(), (stop.url_path, page.url, nav())
    # the top navigation itself
    page.locator('[data-testid="stTopNavLink"]').filter(has_text="对比").click()
    page.wait_for_url("**/compare*", timeout=30_000)
    wait_for_app(page)
    assert "lang=zh" in page.url and "记忆表" in nav(), (page.url, nav())
    page.locator('[data-testid="stTopNavLink"]').filter(has_text="课堂").click()
    page.wait_for_url("**/classroom*", timeout=30_000)
    wait_for_app(page, chart=False)
    # classroom -> "show me live" (a st.switch_page inside the app)
    page.locator('[data-testid="stMain"] [data-testid="stRadio"]').first.locator("[role=radiogroup] label").first.click()
    page.get_by_role("button", name="揭晓答案").first.click()
    page.get_by_role("button").filter(has_text="play_circle").first.click()
    page.wait_for_function("!location.pathname.endsWith('/classroom')", timeout=30_000)
    wait_for_app(page)
    assert "lang=zh" in page.url and "记忆表" in nav(), (page.url, nav())


def test_a_language_switch_relabels_the_chosen_options(page, app_url):
    """Select boxes used to keep showing their chosen option in the old language after a switch."""
    memory = next(stop for stop in PATH if stop.key == "memory")
    page.goto(f"{app_url}/{memory.address}?lang=zh")
    wait_for_app(page)
    shown = lambda: page.locator('[data-testid="stMain"] [data-testid="stSelectbox"]').first.evaluate(
        "e => [...e.querySelectorAll('input')].map(i => i.value).join() + e.innerText")
    assert "写入两对键值" in shown()
    page.locator('[data-testid="stSidebar"] label').filter(has_text="English").click()
    page.wait_for_function("document.querySelector('h1').innerText.startsWith('The memory table')", timeout=20_000)
    wait_for_app(page)
    assert "Write two pairs" in shown() and "写入" not in shown()
