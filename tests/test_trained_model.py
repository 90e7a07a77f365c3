"""The shipped trained demo model: exact Qwen3.5 format, loadable by us and by transformers, the app's
default, and gates that mean something on its own tasks (gdn.qwen35.demo.evidence, fixed batch, no training)."""
import json

import pytest
import torch
from safetensors import safe_open

from gdn.qwen35 import list_sources, load_model
from gdn.qwen35.demo.evidence import evidence
from gdn.qwen35.demo.tasks import build_tokenizer, vocabulary
from gdn.qwen35.sources import TRAINED_PATH
from tests.qwen35_fixtures import hf_reference

MAX_BYTES = 20_000_000
# Thresholds the shipped checkpoint meets with a margin (measured values: TRAINING.md and the page).
MIN_RECALL = 0.75           # accuracy on keys that were re-assigned: the LATEST value must come back (measured 0.86)
MIN_ABLATION_GAP = 0.5      # linear attention (alpha = 1, no delta) must do this much worse (measured 0.86 vs 0.05)


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
    assert text["layer_types"] == ["linear_attention"] * 3 + ["full_attention"]
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
    assert acc["reassigned"] >= MIN_RECALL
    assert acc["reassigned"] - abl["reassigned"] >= MIN_ABLATION_GAP


def test_beta_higher_on_values_than_filler(ev):
    s = ev["beta_head"]
    assert ev["beta_value"][s["gdn_index"]][s["head"]] > ev["beta_filler"][s["gdn_index"]][s["head"]] + 0.3


def test_alpha_drops_at_the_switch_marker(ev):
    s = ev["switch_head"]
    assert ev["alpha_switch"][s["gdn_index"]][s["head"]] < ev["alpha_other"][s["gdn_index"]][s["head"]] - 0.3
