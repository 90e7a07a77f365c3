"""A replayed real head reopens from its link (the memory page's link names what the replay was made of, and a
fresh session makes it again on the real-model page), or the page says in words what it could not restore;
the replay shows the numbers of the run it replays, an intervention included."""
from urllib.parse import parse_qsl, urlsplit

import numpy as np
import pytest

from gdn.qwen35 import DEMO_PATH, load_model
from app_pages._real_model.replay_link import ReplaySpec
from tests.apptest import open_app

PAGE = "app_pages/real_model.py"


def open_replay_view(lang: str = "en", **params):
    params = {"real_model_preset": "recall", "real_model_view": "replay", **params}
    return open_app(lang, page=PAGE, state={"real_model_source": str(DEMO_PATH)}, **params)


def share_link(at) -> str:
    at.button(key="share_open").click().run()
    return next(c.value for c in at.code if c.value.startswith("http"))


def link_params(link: str) -> dict:
    return dict(parse_qsl(urlsplit(link).query))


def reopen(link: str):
    """The link opened in a fresh session (its language included), as the share dialog wrote it."""
    params = link_params(link)
    path = urlsplit(link).path.strip("/") or "start"
    return open_app(params.pop("lang"), page=f"app_pages/{'memory_table' if path == 'memory' else path}.py", **params)


def test_the_replay_shows_beta_of_the_intervened_run():
    """β := 0 on every head of the layer: the replay's β is 0 at every token (it showed the model's own 0.19)
    and its title says so; without an intervention the replay is of the model's own gates."""
    at = open_replay_view(real_model_layer="1", **{"real_model_iv": "beta=0.00;head=all"})
    assert any("β := 0.00" in i.value for i in at.info), [i.value for i in at.info]
    at.button(key="real_model_replay").click().run()
    assert not at.exception
    payload = at.session_state["memory_replay"]
    assert payload["beta"] == [0.0] * len(payload["beta"])
    assert "β := 0.00" in payload["title"]
    plain = open_replay_view(real_model_layer="1")
    plain.button(key="real_model_replay").click().run()
    assert min(plain.session_state["memory_replay"]["beta"]) > 0.0


def test_an_intervention_on_an_earlier_layer_reaches_the_replayed_one():
    from gdn.qwen35.analysis import layer_inputs
    model = load_model(DEMO_PATH)
    ids = model.tokenizer.encode(" the tiger is red . the tiger is").ids
    layers = list(model.cfg.gdn_layers)
    first, later = layers[0], layers[1]
    own, changed = layer_inputs(model, ids, later), layer_inputs(model, ids, later, set_alpha={(first, None): 0.0})
    assert not np.allclose(own.k.numpy(), changed.k.numpy())                    # the residual stream changed
    here = layer_inputs(model, ids, first, set_beta={(first, 1): 0.5})
    assert np.allclose(here.beta[0, :, 1].numpy(), 0.5) and not np.allclose(here.beta[0, :, 0].numpy(), 0.5)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_replay_link_reopens_the_same_replay_at_the_same_step(lang):
    at = open_replay_view(lang, real_model_layer="1", real_model_head="1", real_model_replay_len="6",
                          real_model_replay_start="2", real_model_iv="beta=0.00;head=all")
    at.button(key="real_model_replay").click().run()
    assert not at.exception
    sent = at.session_state["memory_replay"]
    at.switch_page("app_pages/memory_table.py")          # where the run went (AppTest would return to its last page)
    at.session_state["memory_t"], at.session_state["memory_stage"] = 4, "write"    # as the player relays a step
    link = share_link(at)
    params = link_params(link)
    assert urlsplit(link).path.rstrip("/").endswith("/memory_table"), link
    assert params["memory_preset"] == "replay" and params["memory_t"] == "4" and params["memory_stage"] == "write"
    spec = ReplaySpec.parse(params["memory_replay_of"])
    assert spec == ReplaySpec(layer=1, head=1, start=2, length=6, dims=4, tokens=512, prompt=f"recall.{lang}",
                              iv="beta=0.00;head=all", model=DEMO_PATH.name)
    again = reopen(link)                       # fresh session: through the real-model page and back
    assert not again.exception
    got = again.session_state["memory_replay"]
    assert {k: v for k, v in got.items()} == sent
    assert again.session_state["memory_preset"] == "replay"
    assert (again.session_state["memory_t"], again.session_state["memory_stage"]) == (4, "write")
    assert not again.warning, [w.value for w in again.warning]


def test_the_real_model_pages_replay_view_link_carries_the_window():
    at = open_replay_view(real_model_layer="1", real_model_head="2")
    at.slider(key="real_model_replay_len").set_value(5).run()
    at.slider(key="real_model_replay_start").set_value(3).run()
    params = link_params(share_link(at))
    assert (params["real_model_view"], params["real_model_layer"], params["real_model_head"]) == ("replay", "1", "2")
    assert (params["real_model_replay_len"], params["real_model_replay_start"]) == ("5", "3")
    again = open_app("en", page=PAGE, **{k: v for k, v in params.items() if k != "lang"})
    assert again.slider(key="real_model_replay_len").value == 5
    assert again.slider(key="real_model_replay_start").value == 3


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("what, spec", [
    ("typed", ReplaySpec(1, 0, 1, 4, 4, 512, "typed", "", DEMO_PATH.name)),
    ("model", ReplaySpec(1, 0, 1, 4, 4, 512, "recall.en", "", "othermodel")),
    ("link", None),
])
def test_a_replay_link_that_cannot_be_made_again_says_so(lang, what, spec):
    """Never the first example in silence: the page says which replay it could not make, and why."""
    params = {"memory_preset": "replay", "memory_t": "3"}
    if spec is not None:
        params["memory_replay_of"] = spec.text()
    at = open_app(lang, page="app_pages/memory_table.py", **params)
    assert not at.exception
    said = " ".join(w.value for w in at.warning)
    words = {"typed": {"en": "typed", "zh": "输入"}, "model": {"en": "othermodel", "zh": "othermodel"},
             "link": {"en": "not what it replays", "zh": "没有说明"}}[what][lang]
    assert words in said, said
    if spec is not None:
        assert ("layer 1, head 0, tokens 1–4" if lang == "en" else "第 1 层、头 0、词元 1–4") in said
    assert at.session_state["memory_preset"] == "write_read_2d"


def test_the_spec_reads_back_and_refuses_a_cut_link():
    spec = ReplaySpec(3, 2, 5, 12, 4, 512, "recall.zh", "alpha=0.35;head=all", "odd,name:with:colons")
    assert ReplaySpec.parse(spec.text()) == spec
    assert ReplaySpec.parse(spec.text()[:20]) is None and ReplaySpec.parse("") is None
    assert ReplaySpec.parse(spec.text().replace("layer:3", "layer:x")) is None
