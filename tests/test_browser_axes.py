"""Never an axis title on a tick label, never Chinese turned sideways: on every page and view, at the three
screens a class uses (1440x900; lecture mode at 1920x1080 and 1280x720), in Chinese and in English.

Measured in the drawn page: every Plotly axis title's box (and every annotation's: they title rows and
axes too) against every tick label's box of its chart and against the other titles; the screen angle of every SVG text and the writing
mode of every HTML (and SVG chart) figure's text that holds a CJK character (vertical writing keeps CJK upright unless
text-orientation turns it sideways)."""
import pytest

from tests.page_tour import VIEWS

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("lecture", [False, True], ids=["1440x900", "lecture"])
def test_no_title_on_a_tick_and_no_sideways_chinese(tour, lang, lecture):
    """Lecture mode is measured at 1920x1080, then the same page at 1280x720 (the charts follow the window).
    Each page and view is opened by its link once per language and screen (tests/page_tour.py: the tour's
    AXES measurement, every view of tour.VIEWS), shared with the other tests that look at the same load."""
    screen = "1920x1080" if lecture else "1440x900"
    views = tour.get(lang, screen)
    assert list(views) == [name for name, _, _ in VIEWS]            # every page and view was measured
    misses = []
    for name, seen in views.items():
        misses += [f"{name} {screen}: {p}" for p in seen["axes"]]
        misses += [f"{name} 1280x720: {p}" for p in seen.get("axes_1280x720", [])]
    assert not misses, "\n".join(misses)
