"""fla's optional input forms on our kernels (gdn/ops/varlen.py, gdn/ops/options.py), each against a float64
reference formed without it: packed sequences (cu_seqlens) against separate calls, the in-kernel gate and
beta against the formulas written out here, the V-first state against a transpose."""
import math

import pytest
import torch

from gdn.ops import chunk_gated_delta_rule, recurrent_gated_delta_rule, state_norm_scan
from tests.kernel_inputs import make_inputs

KERNELS = [pytest.param(recurrent_gated_delta_rule, id="recurrent"), pytest.param(chunk_gated_delta_rule, id="chunk")]
# lengths that are not multiples of the chunk (16 below), one shorter than a chunk, one of a single token
PACKS = [pytest.param([0, 37, 38, 90], id="three-ragged"), pytest.param([0, 5, 5, 70, 71], id="with-empty"),
         pytest.param([0, 48], id="one-sequence")]


def separate_calls(q, k, v, g, beta, S0, bounds, **kw):
    """The reference: every packed sequence as its own call of the recurrent kernel, in float64."""
    outs, states = [], []
    for n, (a, b) in enumerate(zip(bounds, bounds[1:])):
        o, S = recurrent_gated_delta_rule(q[:, a:b], k[:, a:b], v[:, a:b], g=g[:, a:b], beta=beta[:, a:b],
                                          initial_state=S0[n:n + 1], output_final_state=True, **kw)
        outs.append(o)
        states.append(S)
    return torch.cat(outs, dim=1), torch.cat(states)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("bounds", PACKS)
@pytest.mark.parametrize("per_channel", [False, True], ids=["per-head-beta", "per-channel-beta"])
def test_packed_sequences_equal_separate_calls_float64(kernel, bounds, per_channel):
    N, T = len(bounds) - 1, bounds[-1]
    q, k, v, g, beta, _ = make_inputs(1, T, 2, 4, 8, 6, per_channel_beta=per_channel, seed=1)
    S0 = torch.randn(N, 4, 8, 6, dtype=torch.float64)
    kw = dict(use_qk_l2norm_in_kernel=True)
    o_ref, S_ref = separate_calls(q, k, v, g, beta, S0, bounds, **kw)
    extra = {"chunk_size": 16} if kernel is chunk_gated_delta_rule else {}
    o, S = kernel(q, k, v, g=g, beta=beta, initial_state=S0, output_final_state=True,
                  cu_seqlens=torch.tensor(bounds), **kw, **extra)
    assert o.shape == (1, T, 4, 6) and S.shape == (N, 4, 8, 6)
    assert (o - o_ref).abs().max() <= 1e-10 and (S - S_ref).abs().max() <= 1e-10


def test_no_state_crosses_into_the_next_sequence():
    """Packed, the second sequence starts from its own (zero) state: the same as a call of it alone,
    not as the second half of one long call (which would carry the first one's memory)."""
    q, k, v, g, beta, _ = make_inputs(1, 40, 1, 1, 8, 8, seed=2)
    o, _ = chunk_gated_delta_rule(q, k, v, g=g, beta=beta, cu_seqlens=torch.tensor([0, 20, 40]), chunk_size=16)
    alone, _ = chunk_gated_delta_rule(q[:, 20:], k[:, 20:], v[:, 20:], g=g[:, 20:], beta=beta[:, 20:], chunk_size=16)
    joined, _ = chunk_gated_delta_rule(q, k, v, g=g, beta=beta, chunk_size=16)
    assert (o[:, 20:] - alone).abs().max() <= 1e-12
    assert (o[:, 20:] - joined[:, 20:]).abs().max() > 1e-3


def test_gradients_through_packed_sequences_equal_separate_calls():
    bounds = [0, 21, 50]
    q, k, v, g, beta, _ = make_inputs(1, 50, 1, 2, 6, 5, seed=4)
    S0 = torch.randn(2, 2, 6, 5, dtype=torch.float64)
    leaves = [x.clone().requires_grad_() for x in (q, k, v, g, beta, S0)]
    o, S = chunk_gated_delta_rule(*leaves[:3], g=leaves[3], beta=leaves[4], initial_state=leaves[5],
                                  output_final_state=True, cu_seqlens=torch.tensor(bounds), chunk_size=8,
                                  use_qk_l2norm_in_kernel=True)
    (o.square().sum() + S.sum()).backward()
    grads = [x.grad for x in leaves]
    ref = [x.clone().requires_grad_() for x in (q, k, v, g, beta, S0)]
    o_ref, S_ref = separate_calls(*ref, bounds, use_qk_l2norm_in_kernel=True)
    (o_ref.square().sum() + S_ref.sum()).backward()
    for got, want in zip(grads, (x.grad for x in ref)):
        torch.testing.assert_close(got, want, rtol=1e-9, atol=1e-10)


def test_state_norm_scan_of_packed_sequences():
    bounds = [0, 30, 31, 100]
    _, k, v, g, beta, _ = make_inputs(1, 100, 1, 2, 8, 8, seed=6)
    S0 = torch.randn(3, 2, 8, 8, dtype=torch.float64)
    norms, S = state_norm_scan(k, v, g, beta, S0, chunk=16, cu_seqlens=torch.tensor(bounds))
    for n, (a, b) in enumerate(zip(bounds, bounds[1:])):
        norms_n, S_n = state_norm_scan(k[:, a:b], v[:, a:b], g[:, a:b], beta[:, a:b], S0[n:n + 1], chunk=16)
        assert (norms[:, a:b] - norms_n).abs().max() <= 1e-10 and (S[n] - S_n[0]).abs().max() <= 1e-10


def softplus_by_hand(x: torch.Tensor) -> torch.Tensor:
    """log(1 + e^x), written so that it cannot overflow: max(x, 0) + log1p(e^-|x|)."""
    return x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("with_bias", [True, False], ids=["dt_bias", "no-dt_bias"])
def test_gate_in_kernel_is_qwen35s_gate(kernel, with_bias):
    q, k, v, _, beta, S0 = make_inputs(2, 33, 2, 4, 8, 8, seed=7)
    gen = torch.Generator().manual_seed(8)
    a = torch.randn(2, 33, 4, generator=gen, dtype=torch.float64) * 3
    A_log = torch.randn(4, generator=gen, dtype=torch.float64)
    dt_bias = torch.randn(4, generator=gen, dtype=torch.float64) if with_bias else None
    g = -torch.exp(A_log) * softplus_by_hand(a + (dt_bias if with_bias else 0))    # alpha = exp(g)
    kw = dict(initial_state=S0, output_final_state=True, use_qk_l2norm_in_kernel=True)
    o_ref, S_ref = recurrent_gated_delta_rule(q, k, v, g=g, beta=beta, **kw)
    o, S = kernel(q, k, v, g=a, beta=beta, use_gate_in_kernel=True, A_log=A_log, dt_bias=dt_bias, **kw)
    torch.testing.assert_close(o, o_ref, rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(S, S_ref, rtol=1e-10, atol=1e-10)


def test_gate_in_kernel_passes_gradients_to_A_log_and_dt_bias():
    """Finite differences (gradcheck) through the chunked kernel to the gate's parameters."""
    q, k, v, _, beta, _ = make_inputs(1, 12, 1, 2, 4, 4, seed=9)
    a = torch.randn(1, 12, 2, dtype=torch.float64)
    A_log = torch.randn(2, dtype=torch.float64, requires_grad=True)
    dt_bias = torch.randn(2, dtype=torch.float64, requires_grad=True)
    run = lambda A_log, dt_bias: chunk_gated_delta_rule(q, k, v, g=a, beta=beta, use_gate_in_kernel=True, A_log=A_log,
                                                         dt_bias=dt_bias, chunk_size=4, use_qk_l2norm_in_kernel=True)[0]
    assert torch.autograd.gradcheck(run, (A_log, dt_bias))


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("neg", [False, True], ids=["sigmoid", "2-sigmoid-allow_neg_eigval"])
def test_beta_sigmoid_in_kernel(kernel, neg):
    q, k, v, g, _, S0 = make_inputs(1, 40, 2, 2, 8, 8, seed=10)
    logits = torch.randn(1, 40, 2, dtype=torch.float64) * 2
    beta = (2 if neg else 1) / (1 + torch.exp(-logits))
    k = k / k.norm(dim=-1, keepdim=True)               # beta up to 2 with |k| = 1 keeps each step's map bounded
    kw = dict(initial_state=S0, output_final_state=True)
    o_ref, S_ref = recurrent_gated_delta_rule(q, k, v, g=g, beta=beta, validate=False, **kw)
    o, S = kernel(q, k, v, g=g, beta=logits, use_beta_sigmoid_in_kernel=True, allow_neg_eigval=neg, **kw)
    torch.testing.assert_close(o, o_ref, rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(S, S_ref, rtol=1e-10, atol=1e-10)
    if neg:
        assert beta.max() > 1.5                          # the doubled range was really used, and accepted


@pytest.mark.parametrize("kernel", KERNELS)
def test_state_v_first_is_the_transposed_layout(kernel):
    q, k, v, g, beta, S0 = make_inputs(2, 30, 1, 2, 8, 6, seed=11)
    o_ref, S_ref = kernel(q, k, v, g=g, beta=beta, initial_state=S0, output_final_state=True)
    o, S = kernel(q, k, v, g=g, beta=beta, initial_state=S0.transpose(-1, -2).contiguous(), output_final_state=True,
                  state_v_first=True)
    assert S.shape == (2, 2, 6, 8) and S.is_contiguous()
    assert torch.equal(o, o_ref) and torch.equal(S, S_ref.transpose(-1, -2))


def test_all_options_together_with_packed_sequences():
    bounds = [0, 17, 40, 64]
    q, k, v, _, _, _ = make_inputs(1, 64, 2, 4, 8, 8, seed=12)
    a, logits = torch.randn(1, 64, 4, dtype=torch.float64), torch.randn(1, 64, 4, dtype=torch.float64)
    A_log, dt_bias = torch.randn(4, dtype=torch.float64), torch.randn(4, dtype=torch.float64)
    S0_vk = torch.randn(3, 4, 8, 8, dtype=torch.float64)
    o, S = chunk_gated_delta_rule(q, k, v, g=a, beta=logits, initial_state=S0_vk, output_final_state=True,
                                  cu_seqlens=torch.tensor(bounds), use_gate_in_kernel=True, A_log=A_log,
                                  dt_bias=dt_bias, use_beta_sigmoid_in_kernel=True, state_v_first=True,
                                  use_qk_l2norm_in_kernel=True, chunk_size=16)
    g = -torch.exp(A_log) * softplus_by_hand(a + dt_bias)
    o_ref, S_ref = separate_calls(q, k, v, g, 1 / (1 + torch.exp(-logits)), S0_vk.transpose(-1, -2), bounds,
                                  use_qk_l2norm_in_kernel=True)
    assert (o - o_ref).abs().max() <= 1e-10 and (S - S_ref.transpose(-1, -2)).abs().max() <= 1e-10


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("change, message", [
    (dict(cu_seqlens=torch.tensor([0, 10, 20])), "batch must be one packed row"),
    (dict(B=1, cu_seqlens=torch.tensor([1, 20])), "start at 0 and end at T"),
    (dict(B=1, cu_seqlens=torch.tensor([0, 12, 8, 20])), "must not decrease"),
    (dict(B=1, cu_seqlens=torch.tensor([0.0, 20.0])), "must hold integers"),
    (dict(B=1, cu_seqlens=torch.tensor([[0, 20]])), "1-D tensor"),
    (dict(B=1, cu_seqlens=torch.tensor([0, 5, 20]), state=3), "one per sequence of cu_seqlens"),
    (dict(use_gate_in_kernel=True), "needs A_log"),
    (dict(use_gate_in_kernel=True, A_log=torch.zeros(3)), r"A_log must be \[HV\]"),
], ids=["B2", "not-from-0", "decreasing", "float", "2-D", "wrong-N-states", "no-A_log", "A_log-shape"])
def test_bad_options_raise_clear_errors(kernel, change, message):
    change = dict(change)
    B, n_states = change.pop("B", 2), change.pop("state", None)
    q, k, v, g, beta, _ = make_inputs(B, 20, 1, 2, 4, 4, seed=13)
    S0 = None if n_states is None else torch.zeros(n_states, 2, 4, 4, dtype=torch.float64)
    with pytest.raises(ValueError, match=message):
        kernel(q, k, v, g=g, beta=beta, initial_state=S0, **change)


@pytest.mark.parametrize("kernel", KERNELS)
def test_allow_neg_eigval_widens_the_range_of_a_given_beta(kernel):
    """Without the sigmoid, allow_neg_eigval accepts beta up to 2 (and computes with it as given); without
    the flag such a beta is refused, and above 2 it is refused either way."""
    q, k, v, g, beta, S0 = make_inputs(1, 30, 1, 2, 4, 4, seed=14)
    k = k / k.norm(dim=-1, keepdim=True)
    wide = beta * 1.4 + 0.6                                             # in [0.6, 2.0]
    with pytest.raises(ValueError, match=r"beta must lie in \[0, 1\]"):
        kernel(q, k, v, g=g, beta=wide)
    with pytest.raises(ValueError, match=r"beta must lie in \[0, 2\]"):
        kernel(q, k, v, g=g, beta=wide + 0.5, allow_neg_eigval=True)
    o, S = kernel(q, k, v, g=g, beta=wide, initial_state=S0, output_final_state=True, allow_neg_eigval=True)
    o_ref, S_ref = recurrent_gated_delta_rule(q, k, v, g=g, beta=wide, initial_state=S0, output_final_state=True,
                                              validate=False)
    torch.testing.assert_close(o, o_ref, rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(S, S_ref, rtol=1e-10, atol=1e-10)
    assert math.isfinite(float(o.sum()))
