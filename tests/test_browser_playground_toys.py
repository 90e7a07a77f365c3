"""The playground's browser-side toys (app_pages/_playground_toys.py) in headless Chromium: a slider move
redraws the numbers from the grid in the payload, sends the server nothing, keeps the link, and the toy
with its sliders fits the first screen of a 1280 x 720 projector, in both languages."""
import re
from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest

from gdn.units import half_life
from devtools.app_server import SentMessages, wait_for_app
from tests.page_tour import SCREENS
from tests.test_playground import overwrite_closed_form

pytestmark = pytest.mark.browser

METRICS = """() => Object.fromEntries([...document.querySelectorAll('.gdn-toy:not(.gdn-write2d) .metric')]
  .map(m => [m.dataset.metric, m.querySelector('.value').textContent]))"""


def open_toy(page, app_url, query: str) -> None:
    page.goto(f"{app_url}/playground?{query}")
    wait_for_app(page)
    page.wait_for_selector(".gdn-toy .metric")


@pytest.mark.parametrize("lang,unit", [("en", "tokens"), ("zh", "个词元")])
def test_half_life_slider_answers_in_the_browser(page, app_url, lang, unit):
    sent = SentMessages(page)
    open_toy(page, app_url, f"lang={lang}&playground_panel=halflife")
    assert page.evaluate(METRICS)["half"] == f"{half_life(0.97):.1f} {unit}".replace(" 个", " 个")
    sent.idle()
    page.locator(".gdn-x-playground_halflife_alpha").focus()
    for _ in range(7):                                           # 0.97 -> 0.90
        page.keyboard.press("ArrowLeft")
    page.wait_for_function("document.querySelector('.gdn-x-playground_halflife_alpha').value === '90'")
    sent.assert_quiet()
    got = page.evaluate(METRICS)
    assert got["half"].startswith(f"{np.log(0.5) / np.log(0.9):.1f}")
    assert got["after10"] == f"{0.9 ** 10:.3g}" and got["after50"] == f"{0.9 ** 50:.3g}"
    assert parse_qs(urlparse(page.url).query)["playground_halflife_alpha"] == ["0.9"]
    page.keyboard.press("End")
    page.wait_for_function("document.querySelector('.gdn-toy .metric .value').textContent.length > 0 && "
                           "document.querySelector('.gdn-x-playground_halflife_alpha').value === '100'")
    assert page.evaluate(METRICS)["after50"] == "1"
    assert not page.problems, page.problems


def test_repeated_writes_sliders_and_play(page, app_url):
    open_toy(page, app_url, "lang=en&playground_panel=repeat&playground_repeat_beta=0.5")
    assert page.evaluate(METRICS)["deltanet"] == f"{0.5 ** 8:.1%}"                 # (1 - beta)^T of the gap
    page.locator(".gdn-x-playground_repeat_beta").focus()
    page.keyboard.press("ArrowRight")                                          # beta 0.6
    page.wait_for_function("document.querySelector('.gdn-x-playground_repeat_beta').value === '6'")
    got = page.evaluate(METRICS)
    assert got["deltanet"] == f"{0.4 ** 8:.1%}" and got["linear"] == f"{abs(8 * 0.6 - 1):.1%}"
    page.locator(".gdn-explorer-play").first.click()       # writes 8 -> ... -> 20 (the 2-D write below has its own ▶)
    page.wait_for_function("document.querySelector('.gdn-x-playground_repeat_writes').value === '10'", timeout=20_000)
    assert page.evaluate(METRICS)["linear"] == f"{abs(20 * 0.6 - 1):.1%}"
    assert "playground_repeat_writes=20" in page.url
    assert not page.problems, page.problems


def test_key_norm_sliders_move_through_the_regimes(page, app_url):
    """Key norm c at beta = 1: c = 1 is an exact overwrite, c = 1.1 and 1.25 overshoot (1 < c^2 < 2), c = 1.5
    diverges (c^2 = 2.25): the message, its colour and the factor follow the grid, with no script run."""
    open_toy(page, app_url, "lang=en&playground_panel=knorm")
    state = "document.querySelector('.gdn-callout[data-state]').dataset.state"
    slider = page.locator(".gdn-x-playground_knorm_knorm")
    assert page.evaluate(state) == "exact"
    slider.focus()
    start = int(slider.input_value())
    for step, (c, want) in enumerate(((1.1, "overshoot"), (1.25, "overshoot"), (1.5, "diverge")), 1):
        page.keyboard.press("ArrowRight")
        page.wait_for_function(f"document.querySelector('.gdn-x-playground_knorm_knorm').value === '{start + step}'")
        assert page.evaluate(state) == want, c
        assert page.evaluate(METRICS)["factor"] == f"{1 - c ** 2:.2f}"
    assert "error" in page.evaluate("document.querySelector('.gdn-callout[data-state]').className")
    assert "playground_knorm_knorm=1.5" in page.url
    assert not page.problems, page.problems


@pytest.mark.parametrize("panel", ["halflife", "repeat", "knorm", "overwrite"])
@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("screen", ["1440x900", "1920x1080", "1280x720"])
def test_a_toy_and_its_sliders_fit_the_first_screen(tour, panel, lang, screen):
    """The panel opened by its link (the overwrite panel: the page's default), read as loaded
    (tests/page_tour.py: one load per page, language and screen, shared with the other tests that look)."""
    width, height, _ = SCREENS[screen]
    box = tour.get(lang, screen)["playground" if panel == "overwrite" else f"playground-{panel}"]["toy"]
    assert box["top"] >= 0 and box["bottom"] <= height and box["overflow"] == 0, (width, height, box)


WRITE_2D = """() => Object.fromEntries([...document.querySelectorAll('.gdn-write2d .metric')]
  .map(m => [m.dataset.metric, m.querySelector('.value').textContent]))"""


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_2d_write_sliders_answer_in_the_browser(page, app_url, lang):
    """The angle between the keys 60° -> 75° -> 90° and beta 1 -> 0.9: the numbers are the closed forms
    (read k1 = (1 - beta c^2, beta c), interference beta |c| sqrt(1 + c^2)), nothing goes to the server."""
    sent = SentMessages(page)
    page.goto(f"{app_url}/playground?lang={lang}&playground_panel=halflife")
    wait_for_app(page)
    page.wait_for_selector(".gdn-write2d .metric")
    c = np.cos(np.deg2rad(60))
    assert page.evaluate(WRITE_2D)["interference"] == f"{c * np.sqrt(1 + c * c):.2f}"
    sent.idle()
    between = ".gdn-x-playground_delta2d_between"
    page.locator(between).focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function(f"document.querySelector('{between}').value === '5'")          # 75°
    c = np.cos(np.deg2rad(75))
    assert page.evaluate(WRITE_2D)["interference"] == f"{c * np.sqrt(1 + c * c):.2f}"
    page.keyboard.press("ArrowRight")                                                     # 90°: orthogonal
    page.wait_for_function(f"document.querySelector('{between}').value === '6'")
    got = page.evaluate(WRITE_2D)
    assert got["interference"] == "0.00" and got["read1"] == "(1.00, 0.00)" and got["read2"] == "(0.00, 1.00)"
    page.locator(between).press("ArrowLeft")                                              # back to 75°
    page.locator(".gdn-x-playground_delta2d_beta").focus()
    page.keyboard.press("ArrowLeft")                                                      # beta 0.9
    page.wait_for_function("document.querySelector('.gdn-x-playground_delta2d_beta').value === '9'")
    got = page.evaluate(WRITE_2D)
    assert got["read1"] == f"({1 - 0.9 * c * c:.2f}, {0.9 * c:.2f})"
    sent.assert_quiet()
    query = parse_qs(urlparse(page.url).query)
    assert query["playground_delta2d_between"] == ["75"] and query["playground_delta2d_beta"] == ["0.9"]
    assert not page.problems, page.problems


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("screen", ["1440x900", "1280x720"])
def test_the_2d_write_and_its_sliders_fit_one_screen(tour, lang, screen):
    """Scrolled to its heading, the 2-D write's sliders and both planes are on one screen (the half-life
    panel's load of tests/page_tour.py, scrolled there after every other reading of it)."""
    width, height, _ = SCREENS[screen]
    box = tour.get(lang, screen)["playground-halflife"]["write2d"]
    assert box["top"] >= 0 and box["bottom"] <= height and box["overflow"] == 0, (width, height, box)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_overwrite_sliders_answer_in_the_browser(page, app_url, lang):
    """An old link (?playground_overwrite_beta=0.5) opens its view; alpha 1 -> 0.9 and the key norm 1 -> 1.1
    redraw the four numbers from the grid, equal to the closed forms (tests/test_playground.py), with no
    message to the server; the address bar follows; the download is the frame on screen; pointing at a
    part's legend entry lights its bars."""
    sent = SentMessages(page)
    open_toy(page, app_url, f"lang={lang}&playground_panel=overwrite&playground_overwrite_beta=0.5")
    got = lambda: page.evaluate(METRICS)
    want = lambda a, b, c: {k: f"{v:.0%}" for k, v in overwrite_closed_form(a, b, c).items()}
    assert got() == want(1.0, 0.5, 1.0)
    sent.idle()
    alpha = ".gdn-x-playground_overwrite_alpha"
    page.locator(alpha).focus()
    for _ in range(3):                                           # 1 -> 0.99 -> 0.95 -> 0.9
        page.keyboard.press("ArrowLeft")
    page.wait_for_function(f"document.querySelector('{alpha}').value === '5'")
    assert got() == want(0.9, 0.5, 1.0)
    page.locator(".gdn-x-playground_overwrite_knorm").press("ArrowRight")
    page.wait_for_function("document.querySelector('.gdn-x-playground_overwrite_knorm').value === '5'")
    assert got() == want(0.9, 0.5, 1.1)
    sent.assert_quiet()
    query = parse_qs(urlparse(page.url).query)
    assert [query[f"playground_overwrite_{k}"] for k in ("alpha", "beta", "knorm")] == [["0.9"], ["0.5"], ["1.1"]]
    with page.expect_download() as saved:                        # the frame on screen, saved by the browser
        page.locator(".gdn-explorer-download").first.click()
    text = open(saved.value.path(), encoding="utf-8").read()
    values = dict(re.findall(r'data-metric="(\w+)"><div class="label">[^<]*</div><div class="value">([^<]*)<', text))
    assert text.startswith("<!doctype html>") and values == want(0.9, 0.5, 1.1), values
    sent.assert_quiet(1000)              # the download sent nothing either
    page.locator(".ow-legend .key.old").hover()
    page.wait_for_function("document.querySelectorAll('.ow-step.old.gdn-lit').length === 3")
    assert page.evaluate("document.querySelectorAll('.ow-step.total.gdn-lit').length") == 0
    assert not page.problems, page.problems


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_overwrite_panel_dragged_sliders_and_figure_at_1280x720(tour, lang):
    """Lecture mode on a 1280x720 projector: alpha, beta and the key norm, the staircase with its axis
    title and the readout table are on the first screen (the example's shape widgets go under the toy).
    The overwrite panel is the playground's default view: its load in tests/page_tour.py."""
    got = tour.get(lang, "1280x720")["playground"]["overwrite"]
    assert max(got["sliders"]) <= 720 and got["title"] <= 720 and got["table"] <= 720, got
    assert got["titleTop"] >= got["ticks"] - 1, got                  # the axis title below its tick labels


def test_overwrite_geometry_switch_brings_the_angle_slider(page, app_url):
    """Picking the "angle" geometry (a rerun: a new grid) adds the angle slider; alpha moved to 0.4 in the
    browser comes over to the coarser grid as its nearest point, 0.5; the numbers are the lesson's."""
    from gdn.lessons import playground as ex
    from gdn.lessons.compare import RULES

    def want(alpha, angle):
        ow = ex.overwrite(3, 3, 3, geometry="angle", angle_deg=angle, alpha=alpha, beta=1.0, knorm=1.0)
        return {r: f"{e:.0%}" for r, e in zip(RULES, ow.error)} | {"disturbed": f"{ow.disturbed[-1]:.0%}"}

    open_toy(page, app_url, "lang=en&playground_panel=overwrite")
    alpha = ".gdn-x-playground_overwrite_alpha"
    page.locator(alpha).focus()
    for _ in range(6):                                           # 1 -> 0.99 -> ... -> 0.4
        page.keyboard.press("ArrowLeft")
    page.wait_for_function(f"document.querySelector('{alpha}').value === '2'")
    page.locator(".st-key-playground_geometry").click()
    page.get_by_role("option", name="angle between k₁ and k₂").click()
    angle = ".gdn-x-playground_overwrite_angle"
    page.wait_for_selector(angle)
    page.wait_for_function(f"document.querySelector('{alpha}').value === '1'")       # 0.5 of (0, 0.5, 0.9, 1)
    assert page.evaluate(METRICS) == want(0.5, 60)
    page.locator(angle).press("ArrowLeft")                                            # 60 -> 45 degrees
    page.wait_for_function(f"document.querySelector('{angle}').value === '3'")
    assert page.evaluate(METRICS) == want(0.5, 45)
    query = parse_qs(urlparse(page.url).query)
    assert query["playground_overwrite_angle"] == ["45"] and query["playground_overwrite_alpha"] == ["0.5"]
    assert not page.problems, page.problems
