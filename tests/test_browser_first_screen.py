"""Chunking, memory cost and classroom in a real browser, at the three screens a class uses: the main
figure (or the first exercise) starts inside the first screen with room to see it, and lecture-mode
text is large enough to read from the back of a room.

The pages are opened by their links once per language and screen (tests/page_tour.py), a load shared with
the other tests that look at the same page; there each is read once its main element is drawn and settled."""
import pytest

from tests.page_tour import SCREENS, WHOLE

pytestmark = pytest.mark.browser

MIN_VISIBLE_PX, MIN_BODY_PX = 300, 20


@pytest.mark.parametrize("screen", ["1440x900", "1920x1080", "1280x720"],
                         ids=["1440x900", "lecture-1920x1080", "lecture-1280x720"])
@pytest.mark.parametrize("page_path", ["chunking", "cost", "classroom"])
def test_main_content_is_on_the_first_screen(tour, page_path, screen):
    width, height, lecture = SCREENS[screen]
    lang = "zh" if width == 1280 else "en"                 # both languages: Chinese on the smallest screen
    got = tour.get(lang, screen)[page_path]["content"]
    # A chart: at least 300 px of it (all of a smaller one: the chunking tables); the first exercise: all options.
    want = got["height"] - 1 if page_path == "classroom" else min(MIN_VISIBLE_PX, got["height"] - 1)
    assert 0 <= got["top"] < height and got["visible"] >= want, got
    if lecture:
        assert got["body"] >= MIN_BODY_PX, got
        assert got["metrics"] or page_path == "classroom"
        assert all(value > label for value, label in got["metrics"]), got


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_lecture_1280x720_shows_every_page_in_the_navigation_and_whole_figures(tour, lang):
    """A 1280x720 projector: the top navigation names all nine pages (no "2 more"), and on the pages this
    checks the main figure and its controls lie wholly inside the first screen."""
    views = tour.get(lang, "1280x720")
    misses = []
    for address, parts in WHOLE.items():
        nav = views[address]["nav"]
        if len(nav) < 9 or not all(item["shown"] for item in nav if item["text"]) or any(
                not item["text"] or "more" in item["text"] or "更多" in item["text"] for item in nav if item["shown"]):
            misses.append((address, "navigation", nav))
        for selector, box in zip(parts, views[address]["whole"]):
            if box is None or box[0] < 0 or box[1] > 720:
                misses.append((address, selector, box))
    assert not misses, "\n".join(map(str, misses))
