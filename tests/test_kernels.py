"""The two kernels are one function: checked against each other (float64), against transformers'
torch kernels (float32), and by properties (hypothesis)."""
import math

import pytest
import torch
from hypothesis import given, settings, strategies as st

from gdn.ops import chunk_gated_delta_rule, recurrent_gated_delta_rule
from tests.kernel_inputs import make_inputs

CASES = [  # B, T, HK, HV, K, V, C, per-channel beta
    pytest.param(1, 1, 1, 1, 4, 4, 64, False, id="one-token"),
    pytest.param(2, 5, 2, 2, 8, 6, 16, False, id="T-below-chunk"),
    pytest.param(2, 37, 2, 2, 8, 16, 16, False, id="ragged-tail"),
    pytest.param(1, 64, 2, 2, 16, 8, 64, False, id="exact-chunk"),
    pytest.param(2, 45, 2, 6, 8, 4, 8, False, id="grouped-heads-HV3xHK"),
    pytest.param(1, 29, 1, 2, 6, 5, 4, True, id="per-channel-beta"),
    pytest.param(2, 33, 2, 4, 5, 7, 3, True, id="per-channel-beta-grouped"),
    pytest.param(1, 130, 1, 1, 32, 32, 64, False, id="three-chunks"),
]


@pytest.mark.parametrize("B,T,HK,HV,K,V,C,per_channel", CASES)
@pytest.mark.parametrize("l2norm", [False, True], ids=["raw-qk", "l2norm-qk"])
def test_chunked_matches_recurrent_float64(B, T, HK, HV, K, V, C, per_channel, l2norm):
    q, k, v, g, beta, S0 = make_inputs(B, T, HK, HV, K, V, per_channel_beta=per_channel)
    if not l2norm:  # raw keys must keep beta*|k|^2 < 2 or both forms diverge (and agree on garbage)
        k = k / k.norm(dim=-1, keepdim=True)
    kw = dict(initial_state=S0, output_final_state=True, use_qk_l2norm_in_kernel=l2norm)
    o_ref, S_ref = recurrent_gated_delta_rule(q, k, v, g=g, beta=beta, **kw)
    o, S = chunk_gated_delta_rule(q, k, v, g=g, beta=beta, chunk_size=C, **kw)
    assert o.dtype == S.dtype == torch.float64 and o.shape == (B, T, HV, V) and S.shape == (B, HV, K, V)
    torch.testing.assert_close(o, o_ref, rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(S, S_ref, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("C", [1, 2, 3, 16, 64])
def test_every_chunk_size_gives_the_same_function(C):
    q, k, v, g, beta, S0 = make_inputs(1, 50, 2, 4, 8, 8, seed=3)
    kw = dict(initial_state=S0, output_final_state=True, use_qk_l2norm_in_kernel=True)
    o_ref, S_ref = recurrent_gated_delta_rule(q, k, v, g=g, beta=beta, **kw)
    o, S = chunk_gated_delta_rule(q, k, v, g=g, beta=beta, chunk_size=C, **kw)
    torch.testing.assert_close(o, o_ref, rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(S, S_ref, rtol=1e-10, atol=1e-10)


# transformers is a dev requirement and the outside oracle: imported, never skipped (style rule 10).
from transformers.models.qwen3_5 import modeling_qwen3_5 as hf  # noqa: E402


def relative_error(x, ref):
    return ((x.double() - ref.double()).norm() / ref.double().norm()).item()


@pytest.mark.parametrize("B,T,HK,HV,K,V", [
    pytest.param(1, 70, 2, 2, 16, 16, id="equal-heads"),
    pytest.param(2, 100, 2, 4, 16, 8, id="grouped-heads"),
])
def test_match_transformers_float32(B, T, HK, HV, K, V):
    q, k, v, g, beta, S0 = make_inputs(B, T, HK, HV, K, V, seed=1, dtype=torch.float32)
    kw = dict(initial_state=S0, output_final_state=True, use_qk_l2norm_in_kernel=True)
    for ours, theirs in ((recurrent_gated_delta_rule, hf.torch_recurrent_gated_delta_rule),
                         (chunk_gated_delta_rule, hf.torch_chunk_gated_delta_rule)):
        o, S = ours(q, k, v, g=g, beta=beta, **kw)
        o_hf, S_hf = theirs(q, k, v, g=g, beta=beta, **kw)
        assert relative_error(o, o_hf) < 1e-5 and relative_error(S, S_hf) < 1e-5


def test_dtypes_are_promoted_never_downcast():
    q, k, v, g, beta, S0 = make_inputs(1, 9, 1, 1, 4, 4, dtype=torch.float32)
    to_bf16 = lambda x: x.to(torch.bfloat16)
    for kernel in (recurrent_gated_delta_rule, chunk_gated_delta_rule):
        o, S = kernel(to_bf16(q), to_bf16(k), to_bf16(v), g=g, beta=to_bf16(beta), initial_state=S0,
                      output_final_state=True, use_qk_l2norm_in_kernel=True)
        assert o.dtype == torch.bfloat16 and S.dtype == torch.float32


def test_default_scale_is_inverse_sqrt_key_dim():
    q, k, v, g, beta, _ = make_inputs(1, 6, 1, 1, 9, 3, state=False)
    o_default, _ = recurrent_gated_delta_rule(q, k, v, g=g, beta=beta)
    o_explicit, _ = recurrent_gated_delta_rule(q, k, v, g=g, beta=beta, scale=1 / 3)
    o_unscaled, _ = recurrent_gated_delta_rule(q, k, v, g=g, beta=beta, scale=1.0)
    torch.testing.assert_close(o_default, o_explicit)
    torch.testing.assert_close(o_default, o_unscaled / 3)


def test_full_decay_alpha_zero_keeps_only_the_current_write():
    q, k, v, g, beta, S0 = make_inputs(1, 10, 1, 1, 4, 4)
    g[:, 6] = -math.inf                                                  # alpha_6 = 0 wipes the table
    for kernel in (recurrent_gated_delta_rule, chunk_gated_delta_rule):
        _, S_full = kernel(q, k, v, g=g, beta=beta, initial_state=S0, output_final_state=True,
                           scale=1.0)
        _, S_tail = kernel(q[:, 7:], k[:, 7:], v[:, 7:], g=g[:, 7:], beta=beta[:, 7:], scale=1.0,
                           initial_state=torch.einsum("k,v->kv", k[0, 6, 0], beta[0, 6, 0] * v[0, 6, 0])[None, None],
                           output_final_state=True)
        assert torch.isfinite(S_full).all()
        torch.testing.assert_close(S_full, S_tail, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("bad, message", [
    (dict(q=torch.zeros(1, 3, 1, 4)), "same shape"),
    (dict(v=torch.zeros(1, 3, 3, 4)), "multiple of key heads"),
    (dict(g=torch.zeros(1, 3, 1)), "g must be"),
    (dict(beta=torch.zeros(1, 3, 4, 5)), "beta must be"),
    (dict(initial_state=torch.zeros(1, 4, 4, 5)), "initial_state must be"),
    (dict(k=torch.zeros(3, 4)), "4-D"),
])
def test_bad_shapes_raise_clear_errors(bad, message):
    args = dict(q=torch.zeros(1, 3, 2, 4), k=torch.zeros(1, 3, 2, 4), v=torch.zeros(1, 3, 4, 4),
                g=torch.zeros(1, 3, 4), beta=torch.zeros(1, 3, 4), initial_state=None) | bad
    for kernel in (recurrent_gated_delta_rule, chunk_gated_delta_rule):
        with pytest.raises(ValueError, match=message):
            kernel(args["q"], args["k"], args["v"], g=args["g"], beta=args["beta"],
                   initial_state=args["initial_state"])
    with pytest.raises(ValueError, match="chunk_size"):
        chunk_gated_delta_rule(*(args[n] for n in "qkv"), g=args["g"], beta=args["beta"], chunk_size=0)


def test_empty_sequence_returns_the_initial_state():
    q, k, v, g, beta, S0 = make_inputs(1, 0, 1, 2, 4, 3)
    for kernel in (recurrent_gated_delta_rule, chunk_gated_delta_rule):
        o, S = kernel(q, k, v, g=g, beta=beta, initial_state=S0, output_final_state=True)
        assert o.shape == (1, 0, 2, 3)
        torch.testing.assert_close(S, S0)


shapes = st.tuples(st.integers(1, 2), st.integers(1, 40), st.integers(1, 2), st.integers(1, 3),
                   st.integers(1, 9), st.integers(1, 9), st.integers(1, 20))


@settings(max_examples=40, deadline=None)
@given(shape=shapes, split=st.floats(0, 1), seed=st.integers(0, 2**16), per_channel=st.booleans())
def test_property_split_sequence_with_carried_state_equals_one_call(shape, split, seed, per_channel):
    B, T, HK, r, K, V, C = shape
    q, k, v, g, beta, S0 = make_inputs(B, T, HK, HK * r, K, V, seed=seed, per_channel_beta=per_channel)
    cut = int(split * T)
    kw = dict(output_final_state=True, use_qk_l2norm_in_kernel=True)
    o_ref, S_ref = recurrent_gated_delta_rule(q, k, v, g=g, beta=beta, initial_state=S0, **kw)
    head = lambda x: x[:, :cut]
    tail = lambda x: x[:, cut:]
    o1, S1 = chunk_gated_delta_rule(*map(head, (q, k, v)), g=head(g), beta=head(beta), chunk_size=C,
                                    initial_state=S0, **kw)
    o2, S2 = chunk_gated_delta_rule(*map(tail, (q, k, v)), g=tail(g), beta=tail(beta), chunk_size=C,
                                    initial_state=S1, **kw)
    torch.testing.assert_close(torch.cat([o1, o2], dim=1), o_ref, rtol=1e-9, atol=1e-9)
    torch.testing.assert_close(S2, S_ref, rtol=1e-9, atol=1e-9)
