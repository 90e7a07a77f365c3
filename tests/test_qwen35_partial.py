"""The first layers of a Qwen3.5-27B-shaped sharded checkpoint trace when only the shard holding them exists.

What is real here: config.json (the 27B text shapes of docs/qwen35.md, Released sizes), the index naming all 851
text tensors over 11 shards, and the one shard present, whose header declares every tensor of the embedding
and layers 0..3 with its full 27B shape and release dtype. What is not: the values. Matrices are zeros
stored as sparse-file holes (so the shard takes a few MB of disk, not 5.6 GB) except the embedding's first
1024 rows; the small tensors the gates read (input_layernorm, in_proj_a, A_log, dt_bias) are random, so
layer 0's g is checked against an independent computation from the file.
"""
import json

import pytest
import torch
import torch.nn.functional as F
from safetensors import safe_open

from gdn.qwen35 import load_model
from gdn.qwen35.synth import text_config, write_partial_checkpoint
from tests.qwen35_fixtures import rel_err

QWEN35_27B = dict(
    vocab_size=248320, hidden_size=5120, intermediate_size=17408, num_hidden_layers=64, num_attention_heads=24,
    num_key_value_heads=4, head_dim=256, linear_num_key_heads=16, linear_num_value_heads=48,
    linear_key_head_dim=128, linear_value_head_dim=128, linear_conv_kernel_dim=4, tie_word_embeddings=False,
    max_position_embeddings=262144, eos_token_id=248044,
    rope_parameters={"rope_type": "default", "rope_theta": 10000000.0, "partial_rotary_factor": 0.25,
                     "mrope_section": [11, 11, 10], "mrope_interleaved": True})
SHARD1 = "model-00001-of-00011.safetensors"
P = "model.language_model."


@pytest.fixture(scope="module")
def partial(tmp_path_factory):
    return write_partial_checkpoint(tmp_path_factory.mktemp("q27b") / "partial", text_config(**QWEN35_27B),
                                    upto_layer=3, shards=11)


def test_the_fixture_is_a_27b_index_with_one_shard_on_disk(partial):
    weight_map = json.loads((partial / "model.safetensors.index.json").read_text())["weight_map"]
    assert len(weight_map) == 2 + 5 * 64 + 9 * 48 + 6 * 16 + 1            # docs/qwen35.md, Checkpoint tensors: untied
    assert [p.name for p in partial.glob("*.safetensors")] == [SHARD1]
    with safe_open(str(partial / SHARD1), framework="pt") as f:
        assert f.get_slice(P + "embed_tokens.weight").get_shape() == [248320, 5120]
        assert f.get_slice(P + "layers.0.linear_attn.in_proj_qkv.weight").get_shape() == [10240, 5120]
        assert f.get_slice(P + "layers.3.self_attn.q_proj.weight").get_shape() == [12288, 5120]
        assert not any(".layers.4." in n for n in f.keys())
    assert (partial / SHARD1).stat().st_blocks * 512 < 64 << 20            # sparse: < 64 MB of 5.6 GB declared


def test_first_four_layers_trace_from_the_partial_download(partial):
    model = load_model(partial, lazy=True, allow_any_folder=True)
    assert model.dtype == torch.bfloat16                                   # a big model keeps bfloat16
    ids = torch.tensor([5, 17, 1000, 3, 17, 640])                          # rows below 1024 hold real values
    trace = model.trace(ids, upto_layer=3)
    assert [lt.kind for lt in trace.layers] == ["linear_attention"] * 3 + ["full_attention"]
    assert trace.logits is None and model._loaded == {0, 1, 2, 3}         # embedding rows only, no head
    assert trace.layers[0].g.shape == (6, 48) and torch.isfinite(trace.layers[3].output).all()
    # layer 0's g, from the file by hand: g = -exp(A_log) * softplus(a . rmsnorm(x) (1 + w) + dt_bias)
    with safe_open(str(partial / SHARD1), framework="pt") as f:
        get = lambda n: f.get_tensor(P + n).float()
        x = f.get_slice(P + "embed_tokens.weight")[0:1024].float()[ids]    # [T, D]
        w, a = get("layers.0.input_layernorm.weight"), get("layers.0.linear_attn.in_proj_a.weight")
        A_log, dt_bias = get("layers.0.linear_attn.A_log"), get("layers.0.linear_attn.dt_bias")
    xn = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * (1 + w)
    g_ref = -A_log.exp() * F.softplus(xn @ a.T + dt_bias)                   # [T, 48]
    assert rel_err(trace.layers[0].g, g_ref) < 2e-2                        # the model computes in bfloat16


def test_a_layer_in_a_missing_shard_says_which_file_to_get(partial):
    model = load_model(partial, lazy=True, allow_any_folder=True)
    with pytest.raises(ValueError, match=r"model-00002-of-00011\.safetensors: listed in model\.safetensors\.index"
                                         r"\.json but missing .* it holds layers 4\.\.9"):
        model.trace([1, 2, 3], upto_layer=4)
    assert model._loaded == set()                                          # refused before reading anything
