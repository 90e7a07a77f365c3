"""Every hint and caption of the model page that states a number or a result, read back from the page (AppTest)
and checked against the model's own forward on the same prompt, computed here without the page's search
(gdn.qwen35.demo.hints): the issue was hints that said "switch off one head's gate and it answers wrong"
where no single head did, and "β jumps on the value words" next to 0.46 against 0.42.

Each claim key has a checker below (CHECKS); a key of the string table that states numbers and has none
fails test_every_numbered_key_is_checked, so a new hint cannot ship unchecked."""
from __future__ import annotations

import functools
import json
import re
import string

import numpy as np
import pytest

from gdn.i18n import prompt, t, table
from gdn.qwen35 import load_model
from gdn.qwen35.demo.evidence import evidence
from gdn.qwen35.demo.stories import STORIES, answer_slots, token_roles
from gdn.qwen35.predict import predict
from gdn.qwen35.sources import TRAINED_PATH
from gdn.units import fmt_count
from tests.apptest import open_app

PAGE = "app_pages/real_model.py"
TOL = 0.006                               # a number printed with two decimals, against the model's own
SPIKE, DROP = 0.15, 0.5                   # what "β jumps" and "α drops" mean (the figure's frames use the same)
PRESET_KIND = {"recall": "stop_writing", "switch": "never_forget"}


# -- the model's own numbers, computed here ------------------------------------------------------------------------

@functools.cache
def model():
    return load_model(TRAINED_PATH)


@functools.cache
def prompt_numbers(preset: str, lang: str) -> dict:
    """Every single head and whole layer of the preset's intervention, and the gates, on the preset prompt."""
    m = model()
    enc = m.tokenizer.encode(" " + prompt(preset, lang))
    ids, slots = list(enc.ids), answer_slots(enc.pieces, enc.ids)
    spec = STORIES[PRESET_KIND[preset]]
    base = predict(m, ids, ask=tuple(slots), same_script=True)
    right = [(t_, a) for t_, a in slots if int(base.top_ids[t_, 0]) == a]
    effects = {}                                       # (layer, head or None) -> [(answer, before, after, new top)]
    for layer in base.layers:
        for head in [*range(base.g.shape[-1]), None]:
            p = predict(m, ids, ask=tuple(right), same_script=True, **{f"set_{spec['gate']}": {(layer, head): spec["value"]}})
            effects[layer, head] = [(a, base.prob_of(t_, a), p.prob_of(t_, a), int(p.top_ids[t_, 0])) for t_, a in right]
    roles = np.array(token_roles(enc.pieces), dtype=object)
    gate = np.exp(base.g) if spec["gate"] == "alpha" else base.beta                     # [L, T, H]
    on, off = (roles == "switch", roles != "switch") if spec["gate"] == "alpha" else (roles == "value", roles == "")
    return dict(ids=ids, pieces=enc.pieces, roles=roles, slots=slots, right=right, effects=effects, layers=base.layers,
                gate=spec["gate"], gates=gate, on=on, off=off, base=base)


def contrast(n: dict, layer: int, head: int | None) -> tuple[float, float]:
    x = n["gates"][n["layers"].index(layer)]
    x = x.mean(axis=1) if head is None else x[:, head]
    return float(x[n["on"]].mean()), float(x[n["off"]].mean())


def holds(gate: str, on: float, off: float) -> bool:
    return on >= off + SPIKE if gate == "beta" else on <= DROP * off


def gap(gate: str, on: float, off: float) -> float:
    return on - off if gate == "beta" else off - on


def flips(n: dict, place) -> bool:
    return any(new != a for a, _, _, new in n["effects"][place])


def hurt_most(n: dict, place) -> tuple:
    """(answer, before, after, new) of the answer this intervention hurts most: a flipped one first."""
    return min(n["effects"][place], key=lambda e: (e[3] == e[0], e[2]))


@functools.cache
def batch():
    return evidence(model())


# -- reading the page's sentences back -----------------------------------------------------------------------------

# What each field may hold, so a sentence's pattern cannot run across its neighbours.
NUMBER, WHOLE, PERCENT, QUOTED = r"\d+\.\d+", r"\d+", r"\d+%", r"[^“”\s]+"
FIELDS = {"on": NUMBER, "off": NUMBER, "before": NUMBER, "after": NUMBER, "l_before": NUMBER, "l_after": NUMBER,
          "s": NUMBER, "answer": QUOTED, "new": QUOTED, "l_answer": QUOTED, "l_new": QUOTED, "view": r"[^“”]+",
          "gate": r"[αβ] := \d", "params": r"[\d.]+ [KMB]", "where": r"[^:：;；()（）“”]+?",
          **dict.fromkeys(("latest", "recall", "recall_lin", "none", "copy", "stop", "kept"), PERCENT)}


def pattern(key: str, lang: str) -> re.Pattern:
    """The sentence of `key` with each {field} a capture group (a field used twice must repeat itself)."""
    out, seen = "", set()
    for literal, field, _, _ in string.Formatter().parse(t(key, lang)):
        out += re.escape(literal)
        if field is not None:
            out += f"(?P={field})" if field in seen else f"(?P<{field}>{FIELDS.get(field, WHOLE)})"
            seen.add(field)
    return re.compile(out)


def find(key: str, lang: str, text: str) -> dict | None:
    m = pattern(key, lang).search(text)
    return m.groupdict() if m else None


def place(text: str, lang: str) -> tuple[int, int | None]:
    """"layer 3, all heads" / "layer 1, head 1" / "layer 3, mean of all heads" -> (3, None) / (1, 1)."""
    for key in ("where", "where_all", "where_mean"):
        m = re.fullmatch(pattern(f"real_model.{key}", lang), text)
        if m:
            return int(m["layer"]), int(m["head"]) if "head" in m.groupdict() else None
    raise AssertionError(f"not a place: {text!r}")


def close(shown: str, value: float) -> bool:
    return abs(float(shown) - value) <= TOL


def pct(shown: str, value: float) -> bool:
    return shown == f"{100 * value:.0f}%"


@functools.cache
def opened(lang: str, preset: str):
    at = open_app(lang, page=PAGE, real_model_preset=preset)
    assert not at.exception
    return at


def note_of(at, lang: str) -> str:
    """The box under the views: the preset's hint, then the model's note (its Markdown escapes undone)."""
    first = t("real_model.about_trained", lang).split("{")[0]
    text = next(e.value for e in at.info if first in e.value)
    return text.replace("\\#", "#")


# -- the checkers: one per key that states a number or a result ----------------------------------------------------

def check_contrast(f, n, lang, key):
    layer, head = place(f["where"], lang)
    on, off = contrast(n, layer, head)
    assert close(f["on"], on) and close(f["off"], off), (key, f, on, off)
    assert holds(n["gate"], on, off) == key.endswith("_shows"), (key, on, off)
    story = first_flip(n)
    if story is not None:                            # the place the hint reads is the one the intervention flips
        assert (layer, head) == story, (key, layer, head, story)


def check_clearest(f, n, lang, key):
    layer, head = place(f["where"], lang)
    best = max((gap(n["gate"], *contrast(n, l_, h)), l_, h) for l_ in n["layers"] for h in range(n["gates"].shape[-1]))
    assert (layer, head) == best[1:], (key, f, best)
    on, off = contrast(n, layer, head)
    assert close(f["on"], on) and close(f["off"], off)
    assert holds(n["gate"], on, off) == key.endswith("_clearest"), (key, on, off)


def first_flip(n: dict):
    heads = [p for p in n["effects"] if p[1] is not None]
    layers = [p for p in n["effects"] if p[1] is None]
    return next((p for p in [*heads, *layers] if flips(n, p)), None)


def check_effect(f: dict, n: dict, lang: str, where_place, prefix: str = ""):
    answer, before, after, new = hurt_most(n, where_place)
    piece = lambda i: model().tokenizer.piece(int(i)).strip()
    assert f[f"{prefix}answer"] == piece(answer), (f, piece(answer))
    assert close(f[f"{prefix}before"], before) and close(f[f"{prefix}after"], after), (f, before, after)
    if f"{prefix}new" in f:
        assert f[f"{prefix}new"] == piece(new)


def check_head_flips(f, n, lang, key):
    layer, head = place(f["where"], lang)
    assert head is not None and (layer, head) == first_flip(n)
    check_effect(f, n, lang, (layer, head))


def check_layer_flips(f, n, lang, key):
    assert not any(flips(n, p) for p in n["effects"] if p[1] is not None), "a single head flips an answer"
    layer = int(f["layer"])
    assert (layer, None) == first_flip(n)
    strongest = min((p for p in n["effects"] if p[1] is not None), key=lambda p: hurt_most(n, p)[2])
    assert place(f["where"], lang) == strongest
    check_effect(f, n, lang, strongest)
    check_effect(f, n, lang, (layer, None), prefix="l_")


def check_no_flip(f, n, lang, key):
    assert first_flip(n) is None
    check_effect(f, n, lang, place(f["where"], lang))


def check_none_right(f, n, lang, key):
    assert not n["right"] and int(f["n"]) == len(n["slots"])


def check_leak(f, n, lang, key):
    cut = list(n["roles"]).index("switch")
    before = {model().tokenizer.piece(i).strip() for i, r in zip(n["ids"][:cut], n["roles"][:cut]) if r == "value"}
    assert f["new"] in before, (f, before)


def check_about_trained(f, n, lang, key):
    cfg, ev = model().cfg, batch()
    assert int(f["layers"]) == cfg.num_hidden_layers and int(f["gdn"]) == len(cfg.gdn_layers)
    assert int(f["full"]) == cfg.layer_types.count("full_attention")
    assert f["params"] == fmt_count(sum(p.numel() for p in model().parameters()))
    assert int(f["n"]) == ev["n_examples"]
    for field, value in (("latest", ev["acc"]["latest"]), ("recall", ev["acc"]["reassigned"]),
                         ("recall_lin", ev["acc_ablation"]["reassigned"]), ("none", ev["acc"]["none"]), ("copy", ev["acc"]["copy"])):
        assert pct(f[field], value), (field, f[field], value)


def check_about_gate(f, n, lang, key):
    ev = batch()
    gate = "beta" if "_beta_" in key else "alpha"
    which, on_k, off_k = (("beta_head", "beta_value", "beta_filler") if gate == "beta" else
                          ("switch_head", "alpha_switch", "alpha_other"))
    layer, head = place(f["where"], lang)
    li = ev["gdn_layers"].index(layer)
    assert (layer, head) == (ev[which]["layer"], ev[which]["head"])
    on, off = ev[on_k][li][head], ev[off_k][li][head]
    assert close(f["on"], on) and close(f["off"], off)
    assert holds(gate, on, off) == key.endswith("_shows"), (key, on, off)


def check_about_ablation(f, n, lang, key):
    ev = batch()
    assert int(f["b_layer"]) == ev["beta_head"]["layer"] and int(f["s_layer"]) == ev["switch_head"]["layer"]
    assert pct(f["recall"], ev["acc"]["reassigned"]) and pct(f["stop"], ev["acc_stop_writing"]["reassigned"])
    assert pct(f["none"], ev["acc"]["none"]) and pct(f["kept"], ev["acc_never_forget"]["none"])


CHECKS = {
    "hint_beta_shows": check_contrast, "hint_beta_flat": check_contrast,
    "hint_alpha_shows": check_contrast, "hint_alpha_flat": check_contrast,
    "hint_beta_clearest": check_clearest, "hint_beta_nowhere": check_clearest,
    "hint_alpha_clearest": check_clearest, "hint_alpha_nowhere": check_clearest,
    "hint_head_flips": check_head_flips, "hint_layer_flips": check_layer_flips, "hint_no_flip": check_no_flip,
    "hint_none_right": check_none_right, "hint_leak": check_leak,
    "about_trained": check_about_trained, "about_beta_shows": check_about_gate, "about_beta_flat": check_about_gate,
    "about_alpha_shows": check_about_gate, "about_alpha_flat": check_about_gate, "about_ablation": check_about_ablation,
}
# Keys with numbers checked by a test of their own below (captions, the title, the layer bar), and keys that state no
# result of this model: plans, errors, widget labels, a real checkpoint's natural-text presets (suggestions of what
# to look for, not results: the page cannot load a real checkpoint in a test).
CHECKED_ELSEWHERE = {"ran", "accuracy", "layer_bar", "title_trained", "iv_changed", "source_line"}


def test_every_numbered_key_is_checked():
    """Every hint_* and about_* key with a field has a checker (a new claim cannot ship unchecked), and the
    checkers cover nothing that is gone."""
    keys = {k.split(".", 1)[1] for k, v in table("en").items() if k.startswith("real_model.")
            and k.split(".", 1)[1].startswith(("hint_", "about_")) and "{" in v}
    assert keys == set(CHECKS), (keys ^ set(CHECKS))
    assert CHECKED_ELSEWHERE <= {k.split(".", 1)[1] for k in table("en")}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("preset", ["recall", "switch"])
def test_each_hint_sentence_is_what_the_model_does(lang, preset):
    n = prompt_numbers(preset, lang)
    text = note_of(opened(lang, preset), lang)
    found = {key: f for key in CHECKS if (f := find(f"real_model.{key}", lang, text)) is not None}
    gate = n["gate"]
    # the hint has its contrast line and one intervention line; the model's note has all four of its own
    assert sum(k in found for k in (f"hint_{gate}_shows", f"hint_{gate}_flat")) == 1, found.keys()
    assert sum(k in found for k in ("hint_head_flips", "hint_layer_flips", "hint_no_flip", "hint_none_right")) == 1
    assert {"about_trained", "about_ablation"} <= set(found)
    for key, fields in found.items():
        CHECKS[key](fields, n, lang, key)
    if f"hint_{gate}_flat" in found:                    # a contrast that does not hold says where one does (or none)
        assert f"hint_{gate}_clearest" in found or f"hint_{gate}_nowhere" in found
    story = first_flip(n)
    if gate == "alpha" and story is not None and hurt_most(n, story)[3] in set(
            i for i, r in zip(n["ids"][:list(n["roles"]).index("switch")], n["roles"]) if r == "value"):
        assert "hint_leak" in found                     # a leak the model shows is said


def test_the_shipped_demo_hints_say_what_the_issue_found():
    """The two claims the issue caught, on the shipped demo: no single head's β := 0 flips the Chinese recall
    prompt, so the hint says the whole layer does; and β at that layer does not jump, so it says no jump."""
    n = prompt_numbers("recall", "zh")
    assert not any(flips(n, p) for p in n["effects"] if p[1] is not None)
    text = note_of(opened("zh", "recall"), "zh")
    assert find("real_model.hint_layer_flips", "zh", text) and find("real_model.hint_beta_flat", "zh", text)
    assert "干预门控" not in text and t("real_model.tab_intervene", "zh") in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_captions_and_title_count_from_the_model(lang):
    at = opened(lang, "recall")
    cfg, n = model().cfg, prompt_numbers("recall", lang)
    n_params = fmt_count(sum(p.numel() for p in model().parameters()))
    assert at.title[0].value == t("real_model.title_trained", lang, params=n_params)
    captions = " ".join(c.value for c in at.caption)
    ran = find("real_model.ran", lang, captions)
    assert ran and int(ran["T"]) == len(n["ids"]) and int(ran["layers"]) == cfg.num_hidden_layers
    assert int(ran["gdn"]) == len(cfg.gdn_layers) and int(ran["full"]) == cfg.layer_types.count("full_attention")
    acc = find("real_model.accuracy", lang, captions)
    assert acc and (int(acc["right"]), int(acc["n"])) == (len(n["right"]), len(n["slots"]))
    labels = [json.loads(e.proto.json).get("label") for e in at.get("bidi_component") if e.proto.json.startswith("{")]
    bar = next(find("real_model.layer_bar", lang, x) for x in labels if x)
    assert int(bar["n"]) == len(cfg.gdn_layers)          # the layers it offers, not the model's total (it said 4 over 3)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_intervention_caption_counts_the_changed_guesses(lang):
    layer = model().cfg.gdn_layers[-1]
    at = open_app(lang, page=PAGE, real_model_preset="recall", real_model_view="intervene",
                  real_model_iv="beta=0.00;head=all", real_model_layer=str(layer))
    assert not at.exception
    ids = prompt_numbers("recall", lang)["ids"]
    before = predict(model(), ids, same_script=True)
    after = predict(model(), ids, same_script=True, set_beta={(layer, None): 0.0})
    shown = next(f for c in at.caption if (f := find("real_model.iv_changed", lang, c.value)))
    assert int(shown["n"]) == int((before.top_ids[:, 0] != after.top_ids[:, 0]).sum()) and int(shown["T"]) == len(ids)


def test_the_checkers_can_fail():
    """A checker fed the sentence the page used to show fails it: 0.46 against 0.42 called a jump, a single
    head said to flip an answer that only the whole layer flips."""
    n = prompt_numbers("recall", "zh")
    layer = first_flip(n)[0]
    on, off = contrast(n, layer, None)
    where = t("real_model.where_mean", "zh", layer=layer)
    with pytest.raises(AssertionError):
        check_contrast({"where": where, "on": f"{on:.2f}", "off": f"{off:.2f}"}, n, "zh", "hint_beta_shows")
    head = t("real_model.where", "zh", layer=layer, head=0)
    with pytest.raises(AssertionError):
        check_head_flips({"where": head, "answer": "玉", "before": "1.00", "after": "0.02", "new": "无"}, n, "zh", "")


def test_sizes_and_names_as_the_title_writes_them():
    assert [fmt_count(n) for n in (2_967_128, 752e6, 999.6e6, 2.3e9, 950)] == ["3.0 M", "752 M", "1.0 B", "2.3 B", "950"]
    from gdn.qwen35.sources import model_name
    assert model_name("/cache/hub/models--Qwen--Qwen3.5-0.8B/snapshots/0123abc") == "Qwen3.5-0.8B"   # not the commit
    assert model_name(TRAINED_PATH) == TRAINED_PATH.name and model_name("/models/snapshots") == "snapshots"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_random_demo_claims_no_gate_story(lang):
    """With random weights the model answers nothing right: the hint says so with its count, and reads no
    purpose into a gate ("β jumps on the values to store" would be noise called a finding)."""
    from gdn.qwen35 import DEMO_PATH
    m = load_model(DEMO_PATH)
    enc = m.tokenizer.encode(" " + prompt("recall", lang))
    slots = answer_slots(enc.pieces, enc.ids)
    base = predict(m, enc.ids, ask=tuple(slots), same_script=True)
    right = sum(int(base.top_ids[t_, 0]) == a for t_, a in slots)
    at = open_app(lang, page=PAGE, state={"real_model_source": str(DEMO_PATH)}, real_model_preset="recall")
    assert not at.exception
    hint = next(e.value for e in at.info if e.value.startswith(t("real_model.story_recall", lang)))
    said = find("real_model.hint_none_right", lang, hint)
    assert (said is not None) == (right == 0) and (said is None or int(said["n"]) == len(slots))
    assert not any(find(f"real_model.hint_beta_{w}", lang, hint) for w in ("shows", "flat")) or right
