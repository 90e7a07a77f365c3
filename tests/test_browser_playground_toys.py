"""The playground's browser-side toys (app_pages/_playground_toys.py) in headless Chromium: a slider move
redraws the numbers from the grid in the payload, sends the server nothing, keeps the link, and the toy
with its sliders fits the first screen of a 1280 x 720 projector, in both languages."""
from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest

from gdn.units import half_life
from devtools.app_server import wait_for_app

pytestmark = pytest.mark.browser

METRICS = """() => Object.fromEntries([...document.querySelectorAll('.gdn-toy .metric')]
  .map(m => [m.dataset.metric, m.querySelector('.value').textContent]))"""


def open_toy(page, app_url, query: str) -> None:
    page.goto(f"{app_url}/playground?{query}")
    wait_for_app(page)
    page.wait_for_selector(".gdn-toy .metric")


@pytest.mark.parametrize("lang,unit", [("en", "tokens"), ("zh", "个词元")])
def test_half_life_slider_answers_in_the_browser(page, app_url, lang, unit):
    sent = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda payload: sent.append(payload)))
    open_toy(page, app_url, f"lang={lang}&playground_panel=halflife")
    assert page.evaluate(METRICS)["half"] == f"{half_life(0.97):.1f} {unit}".replace(" 个", " 个")
    start = len(sent)
    page.wait_for_timeout(1500)                                  # a measuring window, not a wait for readiness
    idle = len(sent) - start
    start = len(sent)
    page.locator(".gdn-x-playground_halflife_alpha").focus()
    for _ in range(7):                                           # 0.97 -> 0.90
        page.keyboard.press("ArrowLeft")
    page.wait_for_function("document.querySelector('.gdn-x-playground_halflife_alpha').value === '90'")
    page.wait_for_timeout(1500)
    assert len(sent) - start <= idle, sent[start:]
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
    assert page.evaluate(METRICS)["delta"] == f"{0.5 ** 8:.1%}"                 # (1 - beta)^T of the gap
    page.locator(".gdn-x-playground_repeat_beta").focus()
    page.keyboard.press("ArrowRight")                                          # beta 0.6
    page.wait_for_function("document.querySelector('.gdn-x-playground_repeat_beta').value === '6'")
    got = page.evaluate(METRICS)
    assert got["delta"] == f"{0.4 ** 8:.1%}" and got["linear"] == f"{abs(8 * 0.6 - 1):.1%}"
    page.locator(".gdn-explorer-play").click()                                 # writes 8 -> ... -> 20
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


@pytest.mark.parametrize("panel", ["halflife", "repeat", "knorm"])
@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("width,height,mode", [(1440, 900, ""), (1920, 1080, "&mode=lecture"),
                                               (1280, 720, "&mode=lecture")])
def test_a_toy_and_its_sliders_fit_the_first_screen(browser, app_url, panel, lang, width, height, mode):
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    open_toy(page, app_url, f"lang={lang}{mode}&playground_panel={panel}")
    box = page.evaluate("""() => { const r = (s) => document.querySelector(s).getBoundingClientRect();
      const controls = [...document.querySelectorAll('.gdn-explorer-control')].map(c => c.getBoundingClientRect());
      return {top: Math.min(r('.gdn-toy').top, ...controls.map(c => c.top)),
              bottom: Math.max(r('.gdn-toy svg').bottom, ...controls.map(c => c.bottom)),
              overflow: [...document.querySelectorAll('.gdn-explorer-row')].filter(e => e.scrollWidth > e.clientWidth + 1).length};
    }""")
    assert box["top"] >= 0 and box["bottom"] <= height and box["overflow"] == 0, (width, height, box)
    context.close()
