"""gdn.qwen35.gates and gdn.qwen35.analysis against independent derivations (no Streamlit)."""
import csv
import io
import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from gdn.ops import chunk_gated_delta_rule, recurrent_gated_delta_rule
from gdn.qwen35 import DEMO_PATH
from gdn.qwen35.analysis import describe
from gdn.qwen35.checkpoint import model_shapes
from gdn.qwen35.errors import error_kind
from gdn.qwen35.gates import (
    KERNEL_RTOL,
    gates_csv,
    gates_json,
    half_life,
    head_state,
    head_summary,
    kernels_side_by_side,
    replay_payload,
    top_block,
)


def tokens_to_half(alpha: float) -> int:
    """Count tokens until alpha ** n <= 0.5 (the definition, no logarithms)."""
    kept, n = 1.0, 0
    while kept > 0.5:
        kept, n = kept * alpha, n + 1
    return n


@pytest.mark.parametrize("alpha", [0.5, 0.9, 0.97, 0.999])
def test_half_life_matches_counting(alpha):
    hl = float(half_life(alpha))
    assert math.ceil(hl - 1e-9) == tokens_to_half(alpha)
    assert alpha ** hl == pytest.approx(0.5)


def test_half_life_edges():
    assert half_life([1.0, 0.0]).tolist() == [math.inf, 0.0]
    assert half_life(0.97) == pytest.approx(22.76, abs=0.01)           # docs/teaching-content.md §4: α = 0.97 is about 23 tokens


def test_head_summary_uses_geometric_mean():
    g = np.log(np.array([[0.5, 0.9], [0.8, 0.9]]))                      # [T=2, H=2]
    s = head_summary(g, np.array([[0.2, 0.4], [0.6, 0.8]]))
    assert s["alpha"] == pytest.approx([0.65, 0.9])
    assert s["beta"] == pytest.approx([0.4, 0.6])
    assert s["half_life"][0] == pytest.approx(float(half_life(math.sqrt(0.5 * 0.8))))
    assert s["half_life"][1] == pytest.approx(float(half_life(0.9)))


def test_top_block_keeps_the_largest_rows_and_columns_in_order():
    S = np.zeros((6, 5))
    S[4, 1], S[1, 3], S[2, 0] = 5.0, -4.0, 0.1
    rows, cols, block = top_block(S, 2)
    assert rows.tolist() == [1, 4] and cols.tolist() == [1, 3]
    assert block.tolist() == [[0.0, -4.0], [5.0, 0.0]]


def small_layer(T=11, HK=1, HV=2, K=4, V=3, seed=0):
    gen = torch.Generator().manual_seed(seed)
    q, k = torch.randn(1, T, HK, K, generator=gen), torch.randn(1, T, HK, K, generator=gen)
    v = torch.randn(1, T, HV, V, generator=gen)
    g = -torch.rand(1, T, HV, generator=gen)
    beta = torch.rand(1, T, HV, generator=gen)
    return q, k, v, g, beta


def loop_state(k, v, g, beta, t):
    """S_t of one head by the update rule, written out in numpy: S = αS; S += β k (v − Sᵀk)ᵀ."""
    S = np.zeros((k.shape[1], v.shape[1]))
    for i in range(t + 1):
        kk = k[i] / math.sqrt(float(k[i] @ k[i]) + 1e-6)
        S = math.exp(g[i]) * S
        S = S + beta[i] * np.outer(kk, v[i] - S.T @ kk)
    return S


def test_head_state_matches_the_update_rule():
    q, k, v, g, beta = small_layer()
    for head in (0, 1):
        want = loop_state(k[0, :, 0].double().numpy(), v[0, :, head].double().numpy(), g[0, :, head].double().numpy(),
                          beta[0, :, head].double().numpy(), t=7)
        assert head_state(q, k, v, g, beta, head=head, t=7) == pytest.approx(want, abs=1e-5)


def test_kernels_side_by_side_reports_the_differences_it_claims():
    """What the real-model page's kernels view shows, against differences computed here."""
    inputs = small_layer(T=150, HK=2, HV=4, K=16, V=8)
    side = kernels_side_by_side(*inputs, head=3)
    q, k, v, g, beta = inputs
    kw = dict(g=g, beta=beta, output_final_state=True, use_qk_l2norm_in_kernel=True)
    (o_c, S_c), (o_r, S_r) = chunk_gated_delta_rule(q, k, v, **kw), recurrent_gated_delta_rule(q, k, v, **kw)
    assert set(side["outputs"]) == {"recurrent", "chunk"}                      # no CUDA here: no fla
    assert side["outputs"]["chunk"] == pytest.approx(o_c[0, :, 3].numpy(), abs=1e-12)
    d_out, d_state = float((o_c - o_r).abs().max()), float((S_c - S_r).abs().max())
    assert side["max_diff_output"]["chunk"] == pytest.approx(d_out, rel=1e-6, abs=1e-12)
    assert side["max_diff_state"]["chunk"] == pytest.approx(d_state, rel=1e-6, abs=1e-12)
    rel = max(d_out / float(o_r.abs().max()), d_state / float(S_r.abs().max()))
    assert side["rel"]["chunk"] == pytest.approx(rel, rel=1e-6) and rel < KERNEL_RTOL
    assert all(seconds >= 0 for seconds in side["seconds"].values())


def test_exports_say_what_they_claim():
    T, H = 3, 2
    g, beta, norms = np.log(np.full((T, H), 0.5)), np.full((T, H), 0.25), np.arange(T * H, dtype=float).reshape(T, H)
    meta = dict(model="demo", layer=4, kernel="chunk", ids=[7, 8, 9], tokens=["a", " b", "中"], g=g, beta=beta,
                state_norms=norms)
    rows = list(csv.DictReader(io.StringIO(gates_csv(**meta))))
    assert len(rows) == T * H
    assert rows[3] == {"model": "demo", "layer": "4", "kernel": "chunk", "t": "1", "token_id": "8", "token": " b",
                       "head": "1", "alpha": "0.5", "beta": "0.25", "g": f"{math.log(0.5):.6g}", "state_norm": "3"}
    data = json.loads(gates_json(prompt="a b中", head=1, **meta))
    assert data["prompt"] == "a b中" and data["head"] == 1 and data["layer"] == 4 and data["kernel"] == "chunk"
    assert np.array(data["alpha"]).shape == (T, H) and data["head_alpha"] == [0.5] * T
    assert data["half_life_per_head"] == [1.0, 1.0] and data["tokens"][2] == "中"


def test_replay_payload_fits_the_toy_and_keeps_geometry():
    rng = np.random.default_rng(0)
    basis = np.linalg.qr(rng.normal(size=(128, 2)))[0]                   # keys live in a 2-D plane of 128 dims
    k, q = rng.normal(size=(40, 2)) @ basis.T, rng.normal(size=(40, 2)) @ basis.T
    v, g, beta = rng.normal(size=(40, 128)), -rng.random(40), rng.random(40)
    p = replay_payload(title="x", tokens=[f"t{i}" for i in range(40)], q=q, k=k, v=v, g=g, beta=beta,
                       start=5, length=50, dims=2)
    assert len(p["tokens"]) == 32 and p["tokens"][0] == "t5"            # window capped at 32 tokens
    kk = np.array(p["k"])
    assert kk.shape == (32, 2) and np.linalg.norm(kk, axis=1) == pytest.approx(np.ones(32), abs=1e-3)
    kn = k[5:37] / np.linalg.norm(k[5:37], axis=1, keepdims=True)
    assert kk @ kk.T == pytest.approx(kn @ kn.T, abs=1e-3)              # cosines between keys survive
    assert p["alpha"] == pytest.approx(np.exp(g[5:37]), abs=1e-4) and p["beta"] == pytest.approx(beta[5:37], abs=1e-4)
    assert np.abs(np.array(p["v"])).max() == pytest.approx(1.0)
    assert set(p) == {"title", "tokens", "K", "V", "k", "v", "q", "alpha", "beta"}
    assert (p["K"], p["V"]) == (128, 128)                                # the source head's sizes, for the story


def test_describe_reads_headers_only():
    info = describe(DEMO_PATH)
    want = sum(math.prod(s) for s in model_shapes(info.config).values())
    assert info.n_params == want and info.n_tensors == len(model_shapes(info.config))
    assert info.read_bytes < info.disk_bytes and info.gdn_layers == [0, 1, 2, 4, 5, 6]


def test_loader_errors_carry_their_kind_where_raised(tmp_path):
    """The page's headline comes from the error's kind, set where it is raised (never from its wording)."""
    from gdn.qwen35 import check_folder
    from gdn.qwen35.config import load_config
    from gdn.qwen35.errors import KINDS, CheckpointError
    with pytest.raises(CheckpointError) as outside:
        check_folder("/etc")
    with pytest.raises(CheckpointError) as no_config:
        load_config(tmp_path)
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(CheckpointError) as bad_config:
        load_config(tmp_path)
    assert [error_kind(e.value) for e in (outside, no_config, bad_config)] == ["outside_roots", "no_config", "bad_config"]
    assert isinstance(outside.value, ValueError)                          # callers catching ValueError still do
    assert error_kind(ValueError("corrupt, NaN or Inf, no config.json")) == "other"   # words decide nothing
    with pytest.raises(ValueError, match="unknown checkpoint error kind"):
        CheckpointError("typo", "x")
    en = json.loads((Path(__file__).resolve().parents[1] / "assets/i18n/en/real_model.json").read_text())
    assert {f"err_{k}" for k in (*KINDS, "other")} <= set(en)              # every kind has its headline


def test_one_layers_state_norms_on_demand_equal_the_traced_ones():
    from gdn.qwen35 import DEMO_PATH, load_model
    from gdn.qwen35.analysis import gate_run, layer_inputs, layer_state_norms

    model = load_model(DEMO_PATH)
    ids = model.tokenizer.encode("记忆会衰减 memory fades, and the password is now 7730").ids
    run = gate_run(model, ids)
    layer = run.layers[2]
    traced = model.trace(ids).layers[layer].state_norms.numpy()                 # [T, HV]
    np.testing.assert_allclose(layer_state_norms(layer_inputs(model, ids, layer)), traced, rtol=1e-4, atol=1e-6)
