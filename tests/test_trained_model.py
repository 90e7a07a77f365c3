"""The shipped trained demo model: exact Qwen3.5 format, loadable by us and by transformers, the app's
default, and gates that mean something on its own tasks (gdn.qwen35.demo.evidence, fixed batch, no training)."""
import json

import pytest
import torch
from safetensors import safe_open

from gdn.qwen35 import list_sources, load_model
from gdn.qwen35.demo.evidence import evidence
from gdn.qwen35.demo.stories import STORIES, answer_slots, find_story
from gdn.qwen35.demo.tasks import build_tokenizer, vocabulary
from gdn.qwen35.demo.train import LAYER_TYPES, train
from gdn.qwen35.predict import predict
from gdn.qwen35.sources import TRAINED_PATH
from tests.qwen35_fixtures import hf_reference

MAX_BYTES = 20_000_000
# What issue 14 asks of the shipped checkpoint (measured values: TRAINING.md and the page's evidence table).
MIN_RECALL = 0.95           # held-out accuracy on keys set once and on re-assigned keys (the LATEST value)
MIN_ABLATION_GAP = 0.5      # linear attention (alpha = 1, no delta) must do this much worse on re-assigned keys
MIN_FLIP = 0.2              # a gate intervention in one layer must cost at least this much accuracy


@pytest.fixture(scope="module")
def model():
    return load_model(TRAINED_PATH)


@pytest.fixture(scope="module")
def ev(model):
    return evidence(model)


def test_files_format_and_size():
    files = {p.name: p for p in TRAINED_PATH.iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= set(files)
    assert sum(p.stat().st_size for p in files.values()) <= MAX_BYTES
    cfg = json.loads(files["config.json"].read_text())
    text = cfg["text_config"]
    assert cfg["model_type"] == "qwen3_5" and text["model_type"] == "qwen3_5_text"
    assert text["layer_types"] == ["full_attention"] + ["linear_attention"] * 3      # see demo/train.py: LAYER_TYPES
    assert text["linear_key_head_dim"] == text["linear_value_head_dim"] <= 64 and text["linear_conv_kernel_dim"] == 4
    assert 128 <= text["hidden_size"] <= 256
    with safe_open(str(files["model.safetensors"]), "pt") as f:
        for name in f.keys():
            assert name.startswith("model.language_model.")
            want = torch.float32 if name.endswith(("linear_attn.A_log", "linear_attn.norm.weight")) else torch.bfloat16
            assert f.get_slice(name).get_dtype() == str(want).replace("torch.float32", "F32").replace("torch.bfloat16", "BF16")


def test_tokenizer_is_the_task_tokenizer(model):
    assert model.tokenizer.tok.to_str() == build_tokenizer().to_str()
    for word in vocabulary():
        assert len(model.tokenizer.tok.encode(" " + word).ids) == 1, word


def test_transformers_loads_it_and_agrees(model):
    ids = torch.tensor(model.tokenizer.encode("apple is red . apple is jade . ask apple ? jade .").ids)
    ref = hf_reference(TRAINED_PATH, ids)
    ours = load_model(TRAINED_PATH, dtype=torch.float32).trace(ids)
    err = (ours.logits - ref["logits"]).norm() / ref["logits"].norm()
    assert err < 1e-4


def test_is_the_default_source():
    first = list_sources()[0]
    assert first.path == TRAINED_PATH and first.kind == "trained" and not first.random_weights


def test_recall_beats_linear_attention(ev):
    acc, abl = ev["acc"], ev["acc_ablation"]
    assert acc["reassigned"] >= MIN_RECALL and acc["latest"] >= MIN_RECALL
    assert acc["reassigned"] - abl["reassigned"] >= MIN_ABLATION_GAP


def test_gate_interventions_break_what_the_gates_are_for(ev):
    """No writing in the beta head's layer: recall fails; no forgetting in the switch head's layer: the
    old topic leaks into the "none" answers after ###."""
    acc = ev["acc"]
    assert acc["reassigned"] - ev["acc_stop_writing"]["reassigned"] >= MIN_FLIP
    assert acc["none"] - ev["acc_never_forget"]["none"] >= MIN_FLIP


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_story_preset_flips_an_answer(model, lang):
    """The page's one-click stories: each finds an intervention that turns a right answer of its task
    prompt into a wrong one, and says how likely the answer was before and after."""
    prompts = json.loads((TRAINED_PATH.parents[1] / "prompts" / "real_model.json").read_text(encoding="utf-8"))
    for kind, spec in STORIES.items():
        enc = model.tokenizer.encode(" " + prompts[spec["prompt"]][lang])
        story = find_story(model, enc.ids, answer_slots(enc.pieces, enc.ids), kind)
        assert story is not None, kind
        p = predict(model, enc.ids, **story.overrides, ask=((story.slot, enc.ids[story.slot + 1]),))
        assert int(p.top_ids[story.slot, 0]) == story.new_top != enc.ids[story.slot + 1]
        assert story.before > 0.5 > story.after


def test_training_script_runs_on_cpu(tmp_path):
    """The same script, two steps on the CPU: it writes a checkpoint our loader reads."""
    info = train(2, "cpu", tmp_path, batch_size=2, log_every=1)
    assert [e["step"] for e in info["log"]] == [0, 1] and info["layer_types"] == LAYER_TYPES
    model = load_model(tmp_path, allow_any_folder=True)
    assert model.cfg.layer_types[0] == "full_attention" and model.trace([5, 6, 7]).logits.shape[0] == 3


def test_beta_higher_on_values_than_filler(ev):
    s = ev["beta_head"]
    assert ev["beta_value"][s["gdn_index"]][s["head"]] > ev["beta_filler"][s["gdn_index"]][s["head"]] + 0.3


def test_alpha_drops_at_the_switch_marker(ev):
    s = ev["switch_head"]
    assert ev["alpha_switch"][s["gdn_index"]][s["head"]] < ev["alpha_other"][s["gdn_index"]][s["head"]] - 0.3
