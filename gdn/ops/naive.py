"""The gated delta rule, one token at a time: the readable reference every other form is checked against.

Per value head, with the state S: [K, V] (read a key as S^T k), each token t does, in this order:
    1. decay:   S <- alpha_t S                      alpha_t = exp(g_t) in (0, 1]
    2. read:    v_hat = S^T k_t                     what the decayed memory predicts for k_t
    3. write:   S <- S + k_t (beta_t * (v_t - v_hat))^T     only the error is written
    4. query:   o_t = S^T q_t                       read after the write
Closed form of one step: S_t = alpha_t (I - beta_t k_t k_t^T) S_{t-1} + beta_t k_t v_t^T.
"""
from __future__ import annotations

import torch

from gdn.ops.inputs import prepare
from gdn.ops.options import Options, apply_options, final_state_layout
from gdn.ops.varlen import packed


def recurrent_gated_delta_rule(q, k, v, g, beta, *, scale=None, initial_state=None,
                               output_final_state=False, use_qk_l2norm_in_kernel=False, validate=True,
                               cu_seqlens=None, use_gate_in_kernel=False, A_log=None, dt_bias=None,
                               use_beta_sigmoid_in_kernel=False, allow_neg_eigval=False, state_v_first=False):
    """Gated delta rule as a token loop (reference).

    q, k: [B, T, HK, K] queries and keys; v: [B, T, HV, V] values, HV a multiple of HK.
    g: [B, T, HV] log decay (<= 0; -inf allowed), alpha = exp(g).
    beta: [B, T, HV] write strength in [0, 1], or [B, T, HV, V] per value channel.
    scale: multiplies q; None means K ** -0.5.
    initial_state: [B, HV, K, V] or None (zeros).
    validate: raise ValueError on NaN/Inf inputs, g > 0 or beta outside [0, 1] (False skips the check).
    cu_seqlens: LongTensor [N + 1], N sequences packed in a batch of one (gdn.ops.varlen); then
    initial_state and the final state are [N, HV, K, V].
    use_gate_in_kernel (with A_log, dt_bias), use_beta_sigmoid_in_kernel, allow_neg_eigval,
    state_v_first: fla's input forms (gdn.ops.options).
    Returns o: [B, T, HV, V] in v's dtype, and the final state [B, HV, K, V] (float32, or float64
    for float64 inputs) when output_final_state, else None.
    """
    opts = Options(use_gate_in_kernel, A_log, dt_bias, use_beta_sigmoid_in_kernel, allow_neg_eigval, state_v_first)
    g, beta, initial_state = apply_options(g, beta, initial_state, opts)
    if cu_seqlens is not None:
        o, S = packed(recurrent_gated_delta_rule, q, k, v, g, beta, cu_seqlens, initial_state=initial_state,
                      output_final_state=output_final_state, validate=validate, beta_max=opts.beta_max,
                      scale=scale, use_qk_l2norm_in_kernel=use_qk_l2norm_in_kernel)
        return o, final_state_layout(S, opts)
    x = prepare(q, k, v, g, beta, scale=scale, initial_state=initial_state,
                use_qk_l2norm_in_kernel=use_qk_l2norm_in_kernel, validate=validate, beta_max=opts.beta_max)
    S = x.state                                                    # [B, HV, K, V]
    outputs = []
    for t in range(x.v.shape[2]):
        k_t, q_t = x.k[:, :, t], x.q[:, :, t]                      # [B, HV, K]
        S = S * x.g[:, :, t].exp()[..., None, None]                # [B, HV, K, V]  decay first
        v_hat = torch.einsum("bhk,bhkv->bhv", k_t, S)              # [B, HV, V]     read the decayed memory
        error = x.beta[:, :, t] * (x.v[:, :, t] - v_hat)           # [B, HV, V]     beta-scaled correction
        S = S + torch.einsum("bhk,bhv->bhkv", k_t, error)          # [B, HV, K, V]  rank-1 write
        outputs.append(torch.einsum("bhk,bhkv->bhv", q_t, S))      # [B, HV, V]     query after the write
    o = torch.stack(outputs, dim=1) if outputs else x.v.new_zeros(x.v.shape).transpose(1, 2)
    x.verdict()
    return o.to(x.out_dtype), final_state_layout(S if output_final_state else None, opts)  # o: [B, T, HV, V]
