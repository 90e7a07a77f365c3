"""Lecture mode scales with the screen (issue 51): a 1920x1080 projector shows what 1280x720 shows, 1.5 times
larger, without the browser's zoom. Every page in both languages: its main figure and the controls that drive
it whole on the first screen at 1280x720 and 1920x1080, and at 1920x1080 no text a back row reads (narration,
labels, numbers in tables and charts) under 24 px, measured on the drawn text of the main content (its font
size times any scale on screen, tests/page_tour.py SMALLEST_TEXT). Before, text stayed 16.5-20 px at 1920x1080.

The pages are opened once per language and screen by the shared tour (tests/page_tour.py), which waits until
the charts are drawn at the scale the tab asked for (devtools/app_server.py, SETTLED)."""
import pytest

from app_pages._support.path import PATH
from devtools.app_server import wait_for_app, wait_until_settled
from tests.page_tour import LECTURE_WHOLE, SCREENS

pytestmark = pytest.mark.browser

BACK_ROW_PX = 24            # at 1920x1080: 16 px at 1280x720 (test_browser_layout's floor) times 1.5


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("screen", ["1920x1080", "1280x720"])
def test_lecture_pages_show_their_figure_whole_and_readable_from_the_back(tour, screen, lang):
    width, height, lecture = SCREENS[screen]
    assert lecture
    views, misses = tour.get(lang, screen), []
    for stop in PATH:
        seen = views[stop.url_path]
        for selector, box in zip(LECTURE_WHOLE[stop.url_path], seen["lecture_whole"]):
            if box is None or box[0] < 0 or box[1] > height:
                misses.append((stop.url_path, "not whole on the first screen", selector, box))
        smallest = seen["smallest_text"]
        if screen == "1920x1080" and (not smallest or smallest[0][0] < BACK_ROW_PX):
            misses.append((stop.url_path, f"text under {BACK_ROW_PX} px", smallest))
    assert not misses, "\n".join(map(str, misses))


# While Plotly draws a chart again its ticks are briefly gone: a missing element reads as null (no size yet), so
# a wait polls on instead of failing on the moment between two drawings.
SIZES = """() => {
    const size = (selector) => {
        const element = document.querySelector(selector);
        return element ? parseFloat(getComputedStyle(element).fontSize) : null;
    };
    return {tick: size('.js-plotly-plot .xtick text'), title: size('h1')};
}"""


def test_a_window_moved_onto_the_projector_redraws_its_charts_larger(tabs, app_url):
    """A laptop's window (1280x720) dragged onto a 1920x1080 projector: the page's own text grows by itself
    (CSS) and its Plotly chart is drawn again by Python at 1.5 times its fonts (the tab reported the new scale);
    back on the laptop, as it was."""
    page = tabs.open({"width": 1280, "height": 720})
    page.goto(f"{app_url}/cost?lang=en&mode=lecture")
    wait_for_app(page)
    page.wait_for_function(f"() => {{ const s = ({SIZES})(); return !!(s.tick && s.title); }}")
    small = page.evaluate(SIZES)
    page.set_viewport_size({"width": 1920, "height": 1080})
    wait_until_settled(page)
    page.wait_for_function(f"() => ({SIZES})().tick === {1.5 * small['tick']}")     # the chart drawn again
    large = page.evaluate(SIZES)
    assert large["tick"] == pytest.approx(1.5 * small["tick"]) and large["title"] == pytest.approx(1.5 * small["title"])
    page.set_viewport_size({"width": 1280, "height": 720})
    wait_until_settled(page)
    page.wait_for_function(f"() => ({SIZES})().tick === {small['tick']}")
    assert page.evaluate(SIZES) == small
    assert not page.problems, page.problems
