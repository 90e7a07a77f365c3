"""Switches answered in the browser, read from the DOM in headless Chromium: compare's variant bar and the
real model's layer bar swap what Python sent with no websocket message per switch, and what they show is
what the library computes (gdn.lessons for the compare tables, gdn.qwen35's gate trace for the gates), in
both languages; the layer picked in the browser is the one the next view's picker opens on."""
import re

import numpy as np
import pytest

from gdn.i18n import prompt, t
from gdn.lessons.compare import VARIANT_PRESETS
from gdn.lessons.stream import step_records
from gdn.units import cell_text
from devtools.app_server import wait_for_app, wait_until_settled
from tests.test_memory_page import _Cells

pytestmark = pytest.mark.browser


def count_sent(page) -> list:
    """Every websocket frame the page sends to the app server from now on (appended as it goes)."""
    sent = []
    page.app_socket.on("framesent", lambda frame: sent.append(frame))
    return sent


def panels(html: str) -> dict[str, list[list[str]]]:
    parser = _Cells()
    parser.feed(html)
    return parser.panels


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_compare_variant_switch_is_answered_in_the_browser(page, app_url, lang):
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{app_url}/compare?lang={lang}")
    wait_for_app(page)
    sent = count_sent(page)
    for name in ("kda", "beta_channel", "rules", "kda"):
        before = page.inner_html(".gdn-player-figure")
        page.click(f'.gdn-variant[data-variant="{name}"]')
        page.wait_for_function("(h) => document.querySelector('.gdn-player-figure').innerHTML !== h", arg=before)
        assert page.get_attribute(f'.gdn-variant[data-variant="{name}"]', "aria-pressed") == "true"
        assert (f"compare_variant={name}" in page.url) == (name != "rules")      # the link names it
    page.keyboard.press("End")                                                  # its last frame: the query at t = T
    wait_until_settled(page)
    assert not sent, f"{len(sent)} websocket messages for four variant switches"
    # The columns shown are the variant's own streams, as gdn.lessons computes them.
    shown = panels(page.inner_html(".gdn-player-figure"))
    recs = [step_records(s) for s in VARIANT_PRESETS["kda"]().streams.values()]
    tables = [rows for key, rows in shown.items() if key.startswith("S_")]
    assert len(tables) == len(recs) == 2
    for rows, rec in zip(tables, recs):
        assert rows == cell_text(rec.S_new[-1]).tolist()
    story, grid = page.inner_text(".gdn-story"), page.inner_text(".gdn-player-fixed")
    # The same view drawn by the server from the link: the same tables, story and error grid.
    page.goto(page.url)
    wait_for_app(page)
    assert panels(page.inner_html(".gdn-player-figure")) == shown
    assert page.inner_text(".gdn-story") == story and page.inner_text(".gdn-player-fixed") == grid
    assert page.is_hidden(".st-key-compare_preset")                             # the rules' example picker
    # The two-call variant is drawn by the server (it runs the model): its switch is a page run.
    page.click('.gdn-variant[data-variant="stream"]')
    page.wait_for_selector(".js-plotly-plot")
    assert page.locator(".gdn-player-figure .gdn-figure").count() == 0
    assert not page.problems, page.problems


def alphas_in_dom(page) -> np.ndarray:
    """α of every head and token, as the gates' cell titles state it (3 decimals): [H, T]."""
    titles = page.evaluate("""[...document.querySelectorAll('.rm-gates tr[data-gate="alpha"]')]
                              .map(tr => [...tr.querySelectorAll('td')].map(td => td.title))""")
    return np.array([[float(re.search(r"α = (-?[\d.]+)", t).group(1)) for t in row] for row in titles])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_real_model_layer_switch_is_answered_in_the_browser(page, app_url, lang):
    from gdn.qwen35 import load_model
    from gdn.qwen35.analysis import gate_run
    from gdn.qwen35.sources import TRAINED_PATH

    model = load_model(TRAINED_PATH)
    ids = model.tokenizer.encode(" " + prompt("recall", lang)).ids
    run = gate_run(model, ids)                                              # g: [L, T, H] of every GDN layer
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{app_url}/real_model?lang={lang}")
    wait_for_app(page)
    page.wait_for_selector(".gdn-swap-btn")
    sent = count_sent(page)
    for li, layer in reversed(list(enumerate(run.layers))):
        page.click(f'.gdn-swap-btn[data-value="{layer}"]')
        page.wait_for_function(f"document.querySelector('.rm-ov tr.sel th')?.innerText === '{layer}'")
        np.testing.assert_allclose(alphas_in_dom(page), np.exp(run.g[li]).T, atol=6e-4)   # this layer's α
        assert (f"real_model_layer={layer}" in page.url) == (layer != run.layers[0])
    # Pointing at a token after the swaps shows its card for the layer shown, and moves nothing.
    top = page.locator(".rm-gates").bounding_box()["y"]
    page.locator('.rm-gates tr[data-gate="beta"] td[data-tok="5"]').first.hover()
    card = page.locator('.gdn-tok-card[data-card="5"]')
    card.wait_for(state="visible")
    shown = [float(x) for x in card.locator("tr").nth(1).locator("td").all_inner_texts()]
    assert shown == pytest.approx(np.exp(run.g[0][5]).round(2).tolist(), abs=0.006)
    assert page.locator(".rm-gates").bounding_box()["y"] == top
    assert not sent, f"{len(sent)} websocket messages for {len(run.layers)} layer switches and a hover"
    # The server draws the same gates from the link, and the next view's picker opens on the layer picked.
    dom = alphas_in_dom(page)
    page.goto(page.url)
    wait_for_app(page)
    np.testing.assert_allclose(alphas_in_dom(page), dom, atol=0)
    page.click(f'.gdn-swap-btn[data-value="{run.layers[1]}"]')
    page.wait_for_function(f"document.querySelector('.rm-ov tr.sel th')?.innerText === '{run.layers[1]}'")
    page.locator('[data-testid="stButtonGroup"] button').nth(3).click()     # the "one head" view
    page.wait_for_selector(".st-key-real_model_layer")
    wait_for_app(page)
    picked = page.evaluate("""() => { const box = document.querySelector('.st-key-real_model_layer');
        return box.innerText + ' ' + [...box.querySelectorAll('input')].map(i => i.value).join(' '); }""")
    assert t("real_model.layer_n", lang, i=run.layers[1], n=model.cfg.num_hidden_layers) in picked, picked
    assert not page.problems, page.problems


BOTTOMS = """(selectors) => selectors.map(s => Math.max(...[...document.querySelectorAll(s)]
  .filter(e => e.offsetParent).map(e => e.getBoundingClientRect().bottom)))"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_lecture_1280x720_shows_the_figure_and_its_controls_whole(page, app_url, lang):
    """Lecture mode on a 1280x720 projector: compare's variant bar, player bar and all five vector rows of
    the three rules; the real model's layer bar, hover card and gates down to the token axis, which a
    hover no longer pushes down. All inside the first screen, without scrolling."""
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{app_url}/compare?lang={lang}&mode=lecture")
    wait_for_app(page)
    bars, player, figure = page.evaluate(BOTTOMS, [".gdn-variants", ".gdn-player-bar", ".gdn-player-figure table"])
    assert page.evaluate("scrollY") == 0 and max(bars, player, figure) <= 720, (bars, player, figure)
    assert page.locator(".gdn-player-figure tr").filter(has_text="o = S").count() == 1   # the last rows are there
    page.goto(f"{app_url}/real_model?lang={lang}&mode=lecture")
    wait_for_app(page)
    page.wait_for_selector(".gdn-swap-btn")
    bar, gates = page.evaluate(BOTTOMS, [".gdn-swap-bar", ".rm-gates"])
    assert page.evaluate("scrollY") == 0 and max(bar, gates) <= 720, (bar, gates)
    top = page.locator(".rm-gates").bounding_box()["y"]
    page.locator('.rm-gates tr[data-gate="alpha"] td[data-tok="3"]').first.hover()
    page.locator('.gdn-tok-card[data-card="3"]').wait_for(state="visible")
    assert page.locator(".rm-gates").bounding_box()["y"] == top
    assert page.evaluate(BOTTOMS, [".rm-gates"])[0] <= 720


LAYER_PAYLOADS = """() => { const tab = window.__gdnView, pick = tab.views.get('pick:real_model_layer');
  return [...pick.swaps.values()].flatMap(s => s.data.options.map(o => [o.hash, tab.payloads.get(o.hash)])); }"""


def test_each_layers_html_reaches_a_tab_once(page, app_url):
    """Every layer's gates and overview are payloads of their own (app_pages/_support/swap.py): the first run
    sends each one, and a later run that mounts the swappers again (another view and back, after layer
    switches) sends their hashes alone. Counted in the bytes the tab's websocket receives."""
    received = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda frame: received.append(
        frame if isinstance(frame, bytes) else frame.encode())))
    page.goto(f"{app_url}/real_model?lang=en")
    wait_for_app(page)
    page.wait_for_selector(".gdn-swap-btn")
    layers = page.evaluate(LAYER_PAYLOADS)                   # [hash, gz] of every layer's gates and overview
    assert len(layers) >= 4 and all(gz and len(gz) > 500 for _, gz in layers), layers
    first_run = sum(map(len, received))
    for button in page.locator(".gdn-swap-btn").all():       # every layer, answered in the browser
        button.click()
    last = page.locator(".gdn-swap-btn").last.get_attribute("data-value")
    page.locator('[data-testid="stButtonGroup"] button').nth(3).click()     # another view (its run hears the pick)
    page.wait_for_selector(".st-key-real_model_layer")
    wait_for_app(page)
    before_gates = sum(map(len, received))
    page.locator('[data-testid="stButtonGroup"] button').nth(0).click()     # back to the gates: mounted anew
    page.wait_for_selector(".gdn-swap-btn")
    wait_for_app(page)
    gates_again = sum(map(len, received)) - before_gates
    assert page.evaluate(LAYER_PAYLOADS) == layers           # the same payloads, drawn from the tab's copy
    pressed = page.evaluate("document.querySelector('.gdn-swap-btn[aria-pressed=true]').dataset.value")
    assert pressed == last and f"real_model_layer={last}" in page.url        # the layer picked last, still shown
    # each layer's HTML arrived once, in the first run: the two later runs sent no layer's gz again, and the
    # gates drawn again cost the first run's bytes less (nearly) all of the layers'
    times = {h: sum(frame.count(gz[:300].encode()) for frame in received) for h, gz in layers}
    assert set(times.values()) == {1}, times
    layer_bytes = sum(len(gz) for _, gz in layers)
    assert gates_again + 0.9 * layer_bytes < first_run, (first_run, gates_again, layer_bytes)
    assert not page.problems, page.problems


def test_a_page_link_after_a_layer_pick_switches_in_one_run(page, app_url):
    """A page link is no click to flush on (assets/common/view.js, leaves): the pick's own run would race the
    page switch. One run goes, the switch's, with no pick relayed; the tab keeps the pick, and the next
    click outside a view on the real-model page tells Python."""
    from streamlit.proto.BackMsg_pb2 import BackMsg

    page.goto(f"{app_url}/real_model?lang=en")
    wait_for_app(page)
    page.wait_for_selector(".gdn-swap-btn")
    page.locator(".gdn-swap-btn").last.click()
    sent = count_sent(page)
    page.locator('[data-testid="stTopNavLink"][href$="/memory_table"]').click()
    page.wait_for_selector(".gdn-player-figure td")
    wait_for_app(page)
    messages = [BackMsg.FromString(f if isinstance(f, bytes) else f.encode()) for f in sent]
    reruns = [m for m in messages if m.WhichOneof("type") == "rerun_script"]
    assert len(reruns) == 1, len(reruns)
    assert not [w for w in reruns[0].rerun_script.widget_states.widgets if '"pick"' in w.json_value]
    assert "/memory_table" in page.url
    assert page.evaluate("window.__gdnView.views.get('pick:real_model_layer').moved") is True
    assert not page.problems, page.problems
