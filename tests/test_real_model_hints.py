"""The real-model page's hints name the layer and head whose intervention flips an answer of the prompt
shown (issue: the hint named layer 1 head 1, which changes nothing on the Chinese recall prompt), checked
by running that intervention here with the model's own forward; the intervention's link value round-trips;
a note's line-start "#" is shown as itself."""
import pytest

from gdn.i18n import prompt, t
from gdn.qwen35 import load_model
from gdn.qwen35.demo.stories import answer_slots
from gdn.qwen35.predict import predict
from gdn.qwen35.sources import TRAINED_PATH
from app_pages._support.notes import no_headings
from tests.apptest import open_app
from tests.test_real_model_claims import find, place

PAGE = "app_pages/real_model.py"


def flips(model, ids, slots, gate: str, value: float, layer: int, head: int | None) -> bool:
    """Does setting `gate` to `value` at (layer, head) change the first guess of an answer the model gets right?
    Guesses ranked as the page ranks them (same_script)."""
    base = predict(model, ids, ask=tuple(slots), same_script=True)
    right = [(t_, a) for t_, a in slots if int(base.top_ids[t_, 0]) == a]
    after = predict(model, ids, ask=tuple(right), same_script=True, **{f"set_{gate}": {(layer, head): value}})
    return any(int(after.top_ids[t_, 0]) != a for t_, a in right)



@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("preset, gate, value", [("recall", "beta", 0.0), ("switch", "alpha", 1.0)])
def test_the_hint_names_a_place_that_flips_the_answer(lang, preset, gate, value):
    assert "{layer}" in t("real_model.where", lang) and "{layer}" in t("real_model.where_all", lang)
    at = open_app(lang, page=PAGE, real_model_preset=preset)
    assert not at.exception
    story_start = t(f"real_model.story_{preset}", lang)
    note = next(e.value for e in at.info if e.value.startswith(no_headings(story_start)))
    hint = note.split("\n\n")[0]                  # the preset's story; the model's note follows it
    model = load_model(TRAINED_PATH)
    enc = model.tokenizer.encode(" " + prompt(preset, lang))
    slots = answer_slots(enc.pieces, enc.ids)
    if said := find("real_model.hint_head_flips", lang, hint):          # one head alone flips an answer
        assert flips(model, enc.ids, slots, gate, value, *place(said["where"], lang)), (lang, preset, said)
    else:                                                                 # only a whole layer: the head named does not
        said = find("real_model.hint_layer_flips", lang, hint)
        assert said, hint
        assert flips(model, enc.ids, slots, gate, value, int(said["layer"]), None), (lang, preset, said)
        assert not flips(model, enc.ids, slots, gate, value, *place(said["where"], lang)), (lang, preset, said)


def test_the_chinese_recall_hint_does_not_name_a_head_that_changes_nothing():
    """The bug as it was: the hint said switching one head's writing off breaks the answer; on the Chinese
    recall prompt no single head's β := 0 flips it. The page must say so, and name the layer that does."""
    model = load_model(TRAINED_PATH)
    enc = model.tokenizer.encode(" " + prompt("recall", "zh"))
    slots = answer_slots(enc.pieces, enc.ids)
    at = open_app("zh", page=PAGE, real_model_preset="recall")
    text = " ".join(e.value for e in at.info)
    heads = [(layer, head) for layer in model.cfg.gdn_layers for head in range(model.cfg.linear_num_value_heads)]
    if not any(flips(model, enc.ids, slots, "beta", 0.0, layer, head) for layer, head in heads):
        opening = lambda key: t(key, "zh").split("{where}")[0].format(view=t("real_model.tab_intervene", "zh"), gate="β := 0")
        assert opening("real_model.hint_head_flips") not in text and opening("real_model.hint_layer_flips") in text


def test_intervention_link_round_trips():
    from app_pages._real_model import keys
    from app_pages._real_model.views.intervene import ALL_HEADS, from_link, link_text
    for head, on in ((ALL_HEADS, {"alpha": None, "beta": 0.0}), (2, {"alpha": 0.35, "beta": 1.0}), (0, {"alpha": 1.0, "beta": None})):
        state = from_link(link_text(head, on), [0, 1, 2, 3])
        assert state[keys.IV_HEAD] == head
        for gate, value in on.items():
            assert state[keys.iv_on(gate)] == (value is not None)
            if value is not None:
                assert state[keys.iv_value(gate)] == pytest.approx(value)
    assert link_text(1, {"alpha": None, "beta": None}) == ""
    for bad in ("", "head=all", "beta=0;head=9", "gamma=1;head=0", "beta=x;head=0", "beta=0", "beta=0;head=1.5"):
        assert from_link(bad, [0, 1, 2, 3]) is None, bad
    assert from_link("beta=7;head=0", [0, 1])[keys.IV_BETA] == 1.0                   # clamped to the slider


def test_a_note_never_becomes_a_heading():
    assert no_headings("### 之后，旧的不算") == "\\### 之后，旧的不算"
    assert no_headings("a\n  # b\nc ### d") == "a\n  \\# b\nc ### d"
