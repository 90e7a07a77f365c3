"""Chunking, memory cost and classroom in a real browser, at the three screens a class uses: the main
figure (or the first exercise) starts inside the first screen with room to see it, and lecture-mode
text is large enough to read from the back of a room.

The pages are opened by their links once per language and screen (tests/page_tour.py), a load shared with
the other tests that look at the same page; there each is read once its main element is drawn and settled."""
import pytest

from gdn.lessons.compare import COMPARE_PRESETS
from app_pages._support.path import PATH
from devtools.app_server import wait_for_app
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
    """A 1280x720 projector: the top navigation names every page (no "2 more"), and on the pages this
    checks the main figure and its controls lie wholly inside the first screen."""
    views = tour.get(lang, "1280x720")
    misses = []
    for address, parts in WHOLE.items():
        nav = views[address]["nav"]
        if len(nav) < len(PATH) or not all(item["shown"] for item in nav if item["text"]) or any(
                not item["text"] or "more" in item["text"] or "更多" in item["text"] for item in nav if item["shown"]):
            misses.append((address, "navigation", nav))
        for selector, box in zip(parts, views[address]["whole"]):
            if box is None or box[0] < 0 or box[1] > 720:
                misses.append((address, selector, box))
    assert not misses, "\n".join(map(str, misses))


# ---- compare on a projector: the rules x tokens grid and every vector row on the first screen ------------

TO_TOP = """() => { for (const e of [document.scrollingElement, document.querySelector('[data-testid="stMain"]'),
                                    document.querySelector('[data-testid="stAppViewContainer"]')]) if (e) e.scrollTop = 0; }"""
COMPARE_BOXES = """() => { const box = s => { const r = document.querySelector(s).getBoundingClientRect();
    return {top: r.top, bottom: r.bottom}; };
  return {grid: box('.st-key-compare_player .gdn-grid'), body: box('.st-key-compare_player .gdn-player-body'),
          step: document.querySelector('.st-key-compare_player .gdn-counter').textContent}; }"""


@pytest.mark.parametrize("size", ["1280x720", "1920x1080"])
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_compare_grid_and_vectors_fit_the_first_screen_at_every_query(tabs, app_url, size, lang):
    """Lecture mode: the grid of where the rules disagree sits beside the step's head and story line, so it
    and the rules' tables and vector rows (the body) lie inside the first screen on the opening frame and at
    the query stage of every token, the tallest frames (three readouts), for both examples. Its bottom was
    155-280 px under the fold at 1280x720."""
    width, height = map(int, size.split("x"))
    page = tabs.open({"width": width, "height": height})
    misses = []
    for preset in COMPARE_PRESETS:
        page.goto(f"{app_url}/compare?lang={lang}&mode=lecture&compare_preset={preset}")
        wait_for_app(page)
        page.wait_for_selector(".st-key-compare_player .gdn-grid")
        frames = [("opening", page.evaluate(COMPARE_BOXES))]
        T = COMPARE_PRESETS[preset]().stream.shape[0]
        for t in range(1, T + 1):                  # the scrubber, then the query stage: answered in the browser
            page.evaluate(f"""() => {{ const s = document.querySelector('.st-key-compare_player .gdn-slider');
                s.value = '{t}'; s.dispatchEvent(new Event('input', {{bubbles: true}})); }}""")
            page.locator(".st-key-compare_player .gdn-stages .gdn-stage").nth(4).click()
            page.wait_for_function(f"document.querySelector('.st-key-compare_player .gdn-counter').textContent"
                                   f".includes('{5 * t}') && document.querySelector('.gdn-readouts')")
            page.evaluate(TO_TOP)
            frames.append((f"t={t} query", page.evaluate(COMPARE_BOXES)))
        misses += [(preset, name, box) for name, box in frames
                   if box["grid"]["top"] < 0 or box["grid"]["bottom"] > height or box["body"]["bottom"] > height]
    assert not misses, "\n".join(map(str, misses))
    assert not page.problems, page.problems


@pytest.mark.parametrize("page_path", ["compare", "memory_table"])
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_stepping_pages_say_why_they_open_past_step_1(tabs, app_url, page_path, lang):
    """Both open where something first happens (gdn.lessons.stream.opening_step), not at step 1: on a
    projector a line beside the title says so, at 16 px or more, in the first screen, clear of the title
    and of the player under it."""
    page = tabs.open({"width": 1280, "height": 720})
    page.goto(f"{app_url}/{page_path}?lang={lang}&mode=lecture")
    wait_for_app(page)
    prefix = page_path.split("_")[0]
    got = page.evaluate(f"""() => {{ const r = e => e.getBoundingClientRect();
      const note = document.querySelector('.st-key-{prefix}_opens p'), h1 = document.querySelector('h1');
      const bar = [...document.querySelector('.st-key-{prefix}_player .gdn-player').children].find(c => r(c).height > 0);
      const step = document.querySelector('.st-key-{prefix}_player .gdn-counter').textContent;
      return {{note: note.innerText, font: parseFloat(getComputedStyle(note).fontSize), box: r(note).toJSON(),
              h1: r(h1).toJSON(), bar: r(bar).toJSON(), step}}; }}""")
    assert got["step"].strip() and not got["step"].strip().startswith(("Step 1 ", "第 1 /")), got   # it does open later
    assert got["note"] and got["font"] >= 16, got
    box, h1, bar = got["box"], got["h1"], got["bar"]
    assert 0 <= box["top"] and box["bottom"] <= bar["top"] and box["left"] >= h1["right"], got
