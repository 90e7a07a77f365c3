"""The Triton kernel behind gdn.ops.state_pass (which says what it computes and when it runs): one program
per head and block of BV state columns walks every chunk in order with its state in registers."""
import os

import triton
import triton.language as tl

# Few programs at B = 1 (one per head and column block), so the block width trades parallelism
# against re-reading each chunk's [c, K] factors once per block; measured per shape, once.
_CONFIGS = [triton.Config({"BV": bv}, num_warps=w, num_stages=s)
            for bv in (16, 32, 64) for w in (4, 8) for s in (1, 2)]
if os.environ.get("TRITON_INTERPRET") == "1":   # Triton's own switch (gdn.ops.state_pass reads it too)
    _CONFIGS = _CONFIGS[:1]          # the interpreter's runs are slow and their timings mean nothing


@triton.jit
def _widened(ptr, at):
    """Half factors are read in half (half the bytes) and multiplied in float32."""
    return tl.load(ptr + at).to(tl.float32)


@triton.jit
def _chunk_step(S, i, h, BH, qd_ptr, p_ptr, kd_ptr, decay_ptr, u_ptr, w_ptr, o_ptr,
                C: tl.constexpr, K: tl.constexpr, V: tl.constexpr, BV: tl.constexpr):
    """Chunk i for head h and this program's BV columns: store its outputs, return the state after it."""
    rc, rk = tl.arange(0, C), tl.arange(0, K)
    rv = tl.program_id(1) * BV + tl.arange(0, BV)
    row = (i * BH + h).to(tl.int64)                                          # T * BH * K can pass 2^31
    ck = row * C * K + rc[:, None] * K + rk[None, :]                         # [C, K]
    cv = row * C * V + rc[:, None] * V + rv[None, :]                         # [C, BV]
    new_v = tl.load(u_ptr + cv) - tl.dot(_widened(w_ptr, ck), S, input_precision="ieee")
    o = tl.dot(_widened(qd_ptr, ck), S, input_precision="ieee")
    o += tl.dot(tl.load(p_ptr + row * C * C + rc[:, None] * C + rc[None, :]), new_v, input_precision="ieee")
    tl.store(o_ptr + cv, o)
    kd = _widened(kd_ptr, ck)                                                # [C, K]
    return S * tl.load(decay_ptr + row) + tl.dot(tl.trans(kd), new_v, input_precision="ieee")


def _fitting(configs, named_args, **kwargs):
    """Only blocks that tile the state's V columns (V < 64 is allowed: 16 and 32 are powers of two too)."""
    V = kwargs.get("V", named_args.get("V"))
    return [c for c in configs if c.kwargs["BV"] <= V]


@triton.autotune(configs=_CONFIGS, key=["C", "K", "V", "HALF"], prune_configs_by={"early_config_prune": _fitting})
@triton.jit
def state_pass_kernel(qd_ptr, p_ptr, kd_ptr, decay_ptr, u_ptr, w_ptr, s0_ptr, o_ptr, s_end_ptr, n_chunks, BH,
                       C: tl.constexpr, K: tl.constexpr, V: tl.constexpr, BV: tl.constexpr,
                       HALF: tl.constexpr, INTERPRET: tl.constexpr):
    h = tl.program_id(0)
    rk, rv = tl.arange(0, K), tl.program_id(1) * BV + tl.arange(0, BV)
    s_at = h * K * V + rk[:, None] * V + rv[None, :]                         # [K, BV]
    S = tl.load(s0_ptr + s_at)
    if INTERPRET:
        # Triton's CPU interpreter cannot take a runtime loop bound through range() (it converts a
        # one-element array with int(), which NumPy 2 refuses); a while loop is the same walk
        i = 0
        while i < n_chunks:
            S = _chunk_step(S, i, h, BH, qd_ptr, p_ptr, kd_ptr, decay_ptr, u_ptr, w_ptr, o_ptr, C, K, V, BV)
            i += 1
    else:                                 # range(): the compiler can prefetch chunk i + 1's factors
        for i in range(n_chunks):
            S = _chunk_step(S, i, h, BH, qd_ptr, p_ptr, kd_ptr, decay_ptr, u_ptr, w_ptr, o_ptr, C, K, V, BV)
    tl.store(s_end_ptr + s_at, S)
