"""The gated delta rule kernels, in the layout of transformers and flash-linear-attention.

    naive.py       recurrent_gated_delta_rule: the token loop, the readable truth
    chunk.py       chunk_gated_delta_rule: the same function in chunks (WY / UT form); the in-chunk
                   decays, the UT solve and the constants (CHUNK_SIZE, FLUSH) every other user imports
    matmul.py      batched products that read their factors in a chosen dtype (half-precision GEMMs)
    scan.py        the chunks' state maps S -> A S + B on the GPU path, replayed from a CUDA graph
    fused.py       the chunked kernel on CUDA as three Triton kernels, state in registers (when Triton is
                   installed); fused_kernels.py: those kernels
    state_scan.py  state_norm_scan: ||S_t|| per token and head without building S_t
    linear.py      causal_linear_attention: the rule without the delta correction, in quadratic form
    inputs.py      shape and value validation, L2 norm, working dtype
    varlen.py      cu_seqlens: N sequences packed in a batch of one, one initial and final state each
    options.py     fla's input forms: use_gate_in_kernel (A_log, dt_bias), use_beta_sigmoid_in_kernel
                   (allow_neg_eigval), state_v_first
    fla.py         flash-linear-attention's chunk kernel when it can run here (optional, CUDA only)
"""
from gdn.ops.chunk import CHUNK_SIZE, FLUSH, chunk_gated_delta_rule
from gdn.ops.naive import recurrent_gated_delta_rule
from gdn.ops.state_scan import state_norm_scan

__all__ = ["CHUNK_SIZE", "FLUSH", "chunk_gated_delta_rule", "recurrent_gated_delta_rule", "state_norm_scan"]
