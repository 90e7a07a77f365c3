"""The Triton kernels behind gdn.ops.fused (which says what they compute, in which precision, and when
they run). Three kernels (two when the walk writes the outputs), in the order they are launched:

    prep    one program per chunk and value head: decays, the UT solve, U, W and the keys' row factors
            (and, when the walk writes the outputs, the chunk's scores and the queries' row factors)
    walk    one program per sequence, value head and block of BV state columns: the states entering
            every chunk of the sequence, in order (OUTPUT_IN_WALK: and every token's output on the way)
    output  one program per chunk, value head and block of BV columns: every token's output, from the
            states the walk stored (not launched when the walk writes the outputs)

A chunk never crosses a sequence's end: with cu_seqlens (VARLEN) each chunk's first row and its
sequence's end come from a chunk table, else they are computed from B equal sequences of T tokens.

Every product goes through `_dot`, whose PREC chooses how float32 factors meet the tensor cores.
"""
import triton
import triton.language as tl

FLUSH = tl.constexpr(-80.0)     # gdn.ops.chunk's FLUSH: decays below e^-80 are exactly 0 (no subnormal arithmetic)
TF32X3, TF32, TF32_NEAREST = 1, 2, 3   # PREC: how a float32 x float32 product is computed (see _dot)


@triton.jit
def _dot(a, b, PREC: tl.constexpr):
    """a @ b, float32 in and out, on the tensor cores.
    - TF32X3: three products of the factors' high and low TF32 parts (the lo x lo term dropped), ~5e-7.
    - TF32: one product, each factor cut to 10 bits of mantissa by the hardware. The H200 truncates
      (bench/fused_precision.py matched its measured errors only so): every factor moves toward zero, and
      that bias, not the 10 bits, is most of the error bfloat16 inputs got from it (2.5e-3, floor 1.7e-3).
    - TF32_NEAREST: one product of the factors first rounded to nearest (_tf32_nearest): no extra pass,
      and bfloat16 inputs reach ~1.8e-3 in the emulation.
    (bfloat16 tensor-core products ended in an illegal memory access on the H200 under Triton 3.6, in
    this kernel's autotuning as in an earlier kernel's.)"""
    if PREC == 1:
        out = tl.dot(a, b, input_precision="tf32x3")
    elif PREC == 2:
        out = tl.dot(a, b, input_precision="tf32")
    else:
        out = tl.dot(_tf32_nearest(a), _tf32_nearest(b), input_precision="tf32")
    return out


@triton.jit
def _tf32_nearest(x):
    """float32 -> the nearest value with 10 bits of mantissa (ties away from zero, as PTX's cvt.rna.tf32),
    so that the tensor core's cut of the low 13 bits loses nothing. In integer operations, not inline
    PTX, so Triton's CPU interpreter runs it too: add half of the last kept bit to the magnitude (a carry
    into the exponent is the right rounding), then clear the 13 low bits. Finite x only (the inputs are
    checked): an infinity would become a NaN."""
    bits = x.to(tl.int32, bitcast=True)
    return ((bits + 0x1000) & -0x2000).to(tl.float32, bitcast=True)


@triton.jit
def _exp_flushed(x):
    return tl.where(x < FLUSH, 0.0, tl.exp(x))


@triton.jit
def _chunk_decays(g, C: tl.constexpr):
    """g: [C] log decays of one chunk -> Gamma [C, C] (decay from token j to token i, j <= i, else 0),
    decay [C] (e^gamma_i, from the chunk start) and to_end [C] (from token j to the chunk's end). Each
    exponent is summed over its own tokens (D_ij = g_{j+1} + ... + g_i, a cumulative sum down the
    columns), never a difference of two cumulative sums: that stays exact after alpha = 0 (g = -inf)."""
    ri, rj = tl.arange(0, C)[:, None], tl.arange(0, C)[None, :]
    D = tl.cumsum(tl.where(rj < ri, g[:, None], 0.0), axis=0)                # [C, C]
    Gamma = tl.where(rj <= ri, _exp_flushed(D), 0.0)
    to_end = _exp_flushed(tl.sum(tl.where(ri == C - 1, D, 0.0), axis=0))      # [C]  row C-1 of D
    return Gamma, _exp_flushed(tl.cumsum(g, axis=0)), to_end


@triton.jit
def _unit_lower_inverse(A, C: tl.constexpr, REFINE: tl.constexpr, DOUBLING: tl.constexpr):
    """(I + A)^-1 for a strictly lower-triangular A [C, C], by forward substitution (X_i = e_i -
    sum_{j<i} A_ij X_j: the rows j < i are final when row i is formed), in blocks of 16 rows as 21 TF32
    products. The diagonal blocks all at once (step r forms row r of every block), then block row b from
    the finished rows above it: X_b,<b = -X_bb (A_b,<b X_<b,<b).
    REFINE: then one Newton step in TF32X3, X <- X + X (I - (I + A) X). If X = (I + A)^-1 (I - E), the
    step leaves (I + A)^-1 (I - E^2): TF32's ~1e-3 becomes ~1e-6, for two products. On the H200 that was
    faster than the 21 products in TF32X3 (prep 2.3 ms against 4.6 at T = 32768, float32), than the
    solve row by row with exact sums across threads (4.2 ms: 63 steps one after another), and than
    IEEE products (7.3 ms), to the same 4.8e-7 error of the whole kernel."""
    ri, rj = tl.arange(0, C)[:, None], tl.arange(0, C)[None, :]
    X = tl.where(ri == rj, 1.0, 0.0)
    same_block = ri // 16 == rj // 16
    A_diag = tl.where(same_block, A, 0.0)
    if DOUBLING:
        # the diagonal blocks' inverse as a product: A_diag is nilpotent (A_diag^16 = 0), so
        # (I + A_diag)^-1 = (I - A) (I + A^2) (I + A^4) (I + A^8): 6 products where forward substitution takes 15
        A2 = _dot(A_diag, A_diag, 2)
        A4 = _dot(A2, A2, 2)
        X = X - A_diag
        X += _dot(X, A2, 2)
        X += _dot(X, A4, 2)
        X += _dot(X, _dot(A4, A4, 2), 2)
    else:
        for r in range(1, 16):
            step = ri % 16 == r
            X = tl.where(step, X - _dot(tl.where(step, A_diag, 0.0), X, 2), X)
    for b in range(1, C // 16):
        in_b = ri // 16 == b
        above = _dot(tl.where(in_b & (rj < b * 16), A, 0.0), X, 2)        # rows of b: A_b,<b X_<b
        X -= _dot(tl.where(in_b & same_block, X, 0.0), above, 2)
    if REFINE:
        X = _newton_step(A, X, C)
    return X


@triton.jit
def _newton_step(A, X, C: tl.constexpr):
    """X + X E with E = I - (I + A) X, in TF32X3: a better (I + A)^-1 from a rough one X (see REFINE)."""
    ri, rj = tl.arange(0, C)[:, None], tl.arange(0, C)[None, :]
    residual = tl.where(ri == rj, 1.0, 0.0) - X - _dot(A, X, 1)
    return X + _dot(X, residual, 1)


@triton.jit
def _load_rows(ptr, t, live, head, heads, D: tl.constexpr):
    """Rows t [C] of head `head` from a [B*T, heads, D] tensor (b folded into t), float32, 0 past the end."""
    at = (t.to(tl.int64)[:, None] * heads + head) * D + tl.arange(0, D)[None, :]
    return tl.load(ptr + at, mask=live[:, None], other=0.0).to(tl.float32)


@triton.jit
def _norm_factor(x, L2NORM: tl.constexpr):
    """[C, D] rows -> [C]: what each row is multiplied by to normalise it (1 without L2NORM)."""
    if L2NORM:                                                                 # eps as gdn.ops.inputs.l2_normalize
        return tl.rsqrt(tl.sum(x * x, axis=1) + 1e-6)
    return tl.full((x.shape[0],), 1.0, tl.float32)


@triton.jit
def _normalised(x, L2NORM: tl.constexpr):
    return x * _norm_factor(x, L2NORM)[:, None]


@triton.jit
def _chunk_rows(i, starts_ptr, stops_ptr, T, n_per, C: tl.constexpr, VARLEN: tl.constexpr):
    """Chunk i's rows [C] into the [B*T] packed rows and which of them are tokens of its sequence.
    VARLEN: the chunk table's start and sequence end (gdn.ops.fused.chunk_table); else B sequences of T
    tokens, n_per chunks each, chunk i being chunk i % n_per of sequence i // n_per."""
    if VARLEN:
        start = tl.load(starts_ptr + i).to(tl.int64)
        stop = tl.load(stops_ptr + i).to(tl.int64)
    else:
        b = (i // n_per).to(tl.int64)
        start = b * T + (i % n_per) * C
        stop = b * T + T
    rows = start + tl.arange(0, C)
    return rows, rows < stop


@triton.jit
def prep_kernel(q_ptr, k_ptr, v_ptr, g_ptr, beta_ptr, w_ptr, u_ptr, key_rows_ptr, decay_ptr, scores_ptr,
                query_rows_ptr, starts_ptr, stops_ptr, scale, T, HK, HV, n_per, n_chunks,
                C: tl.constexpr, K: tl.constexpr, V: tl.constexpr, GROUP: tl.constexpr, VARLEN: tl.constexpr,
                L2NORM: tl.constexpr, PREC: tl.constexpr, REFINE: tl.constexpr, DOUBLING: tl.constexpr,
                OUTPUT_IN_WALK: tl.constexpr):
    """Chunk i of value head hv: W = L^-1 diag(beta e^gamma) K [C, K], U = L^-1 diag(beta) V [C, V], the keys'
    row factors [C] (normalisation times the decay to the chunk end: Kd = diag(factor) K_raw) and e^gamma_C,
    stored head-major ([HV, chunks, C, *]: a walk's chunks lie together). Kd itself is not stored: rounded
    to bfloat16 it was the largest error once gates forget slowly (bench/fused_precision.py), and the walk
    reads the raw keys, exact in their own dtype, where they lie.
    OUTPUT_IN_WALK: also what the walk needs to write the outputs itself: the in-chunk scores
    (Q K^T * Gamma) [C, C] and the queries' row factors [C] (normalisation, scale, decay from the chunk
    start: the walk reads the raw queries, as it reads the raw keys)."""
    i, hv = tl.program_id(0), tl.program_id(1)
    rc = tl.arange(0, C)
    t, live = _chunk_rows(i, starts_ptr, stops_ptr, T, n_per, C, VARLEN)   # rows past the sequence: zero keys,
    k_raw = _load_rows(k_ptr, t, live, hv // GROUP, HK, K)                  # values and beta, g = 0 (no decay)
    norm = _norm_factor(k_raw, L2NORM)                                                 # [C]
    k = k_raw * norm[:, None]
    v = _load_rows(v_ptr, t, live, hv, HV, V)                                          # [C, V]
    gb_at = t * HV + hv
    g = tl.load(g_ptr + gb_at, mask=live, other=0.0).to(tl.float32)
    beta = tl.load(beta_ptr + gb_at, mask=live, other=0.0).to(tl.float32)
    Gamma, decay, to_end = _chunk_decays(g, C)
    A = tl.where(rc[None, :] < rc[:, None], _dot(k, tl.trans(k), PREC) * Gamma * beta[:, None], 0.0)
    inv_L_beta = _unit_lower_inverse(A, C, REFINE, DOUBLING) * beta[None, :]                             # [C, C]
    at = hv.to(tl.int64) * n_chunks + i
    row = at * C + rc                                                                  # [C]
    ck, cv = row[:, None] * K + tl.arange(0, K)[None, :], row[:, None] * V + tl.arange(0, V)[None, :]
    tl.store(u_ptr + cv, _dot(inv_L_beta, v, PREC))
    tl.store(w_ptr + ck, _dot(inv_L_beta * decay[None, :], k, PREC).to(w_ptr.dtype.element_ty))
    tl.store(key_rows_ptr + row, norm * to_end)
    tl.store(decay_ptr + at, tl.sum(tl.where(rc == C - 1, decay, 0.0), axis=0))
    if OUTPUT_IN_WALK:
        q_raw = _load_rows(q_ptr, t, live, hv // GROUP, HK, K)
        q_norm = _norm_factor(q_raw, L2NORM) * scale                                    # [C]
        scores = _dot(q_raw * q_norm[:, None], tl.trans(k), PREC) * Gamma                # [C, C]  lower
        tl.store(scores_ptr + row[:, None] * C + rc[None, :], scores)
        tl.store(query_rows_ptr + row, q_norm * decay)


@triton.jit
def _walk_step(S, i, at, q_ptr, k_ptr, w_ptr, u_ptr, key_rows_ptr, decay_ptr, scores_ptr, query_rows_ptr, states_ptr,
               new_v_ptr, o_ptr, starts_ptr, stops_ptr, rv, T, HK, HV, hv, head, n_per, C: tl.constexpr,
               K: tl.constexpr, V: tl.constexpr, VARLEN: tl.constexpr, PREC: tl.constexpr,
               OUTPUT_IN_WALK: tl.constexpr):
    """Chunk i (stored at row block `at` = hv * chunks + i): its new values N = U - W S [C, BV], and the state
    after it, e^gamma_C S + Kd^T N, formed as K_raw^T (diag(row factor) N). Then either the state entering
    the chunk and N are stored for the output kernel, or (OUTPUT_IN_WALK) the chunk's outputs are written
    here, O = diag(query row factor) Q_raw S + scores N, and neither is stored."""
    rc, rk = tl.arange(0, C), tl.arange(0, K)
    ck = (at * C + rc[:, None]) * K + rk[None, :]                                       # [C, K]
    cv = (at * C + rc[:, None]) * V + rv[None, :]                                       # [C, BV]
    w = tl.load(w_ptr + ck).to(tl.float32)                                              # half: widened
    t, live = _chunk_rows(i, starts_ptr, stops_ptr, T, n_per, C, VARLEN)
    k = _load_rows(k_ptr, t, live, head, HK, K)                                         # [C, K]  raw, 0 past the end
    new_v = tl.load(u_ptr + cv) - _dot(w, S, PREC)
    if OUTPUT_IN_WALK:
        q = _load_rows(q_ptr, t, live, head, HK, K) * tl.load(query_rows_ptr + at * C + rc)[:, None]
        scores = tl.load(scores_ptr + (at * C + rc[:, None]) * C + rc[None, :])           # [C, C]
        o = _dot(q, S, PREC) + _dot(scores, new_v, PREC)
        tl.store(o_ptr + (t[:, None] * HV + hv) * V + rv[None, :], o.to(o_ptr.dtype.element_ty), mask=live[:, None])
    else:
        tl.store(states_ptr + (at * K + rk[:, None]) * V + rv[None, :], S)
        tl.store(new_v_ptr + cv, new_v)
    scaled = new_v * tl.load(key_rows_ptr + at * C + rc)[:, None]
    return S * tl.load(decay_ptr + at) + _dot(tl.trans(k), scaled, PREC)


@triton.jit
def walk_kernel(q_ptr, k_ptr, w_ptr, u_ptr, key_rows_ptr, decay_ptr, scores_ptr, query_rows_ptr, s0_ptr, states_ptr,
                new_v_ptr, o_ptr, s_end_ptr, starts_ptr, stops_ptr, seq_chunks_ptr, T, HK, HV, n_per, n_chunks,
                C: tl.constexpr, K: tl.constexpr, V: tl.constexpr, BV: tl.constexpr, GROUP: tl.constexpr,
                VARLEN: tl.constexpr, PREC: tl.constexpr, OUTPUT_IN_WALK: tl.constexpr, INTERPRET: tl.constexpr):
    """Sequence s, value head hv (program 0 = s * HV + hv), state columns of block pid 1: the states
    entering each of the sequence's chunks, in order, from its initial state to its final one."""
    sh = tl.program_id(0)
    s, hv = sh // HV, sh % HV
    head = hv // GROUP
    rv = tl.program_id(1) * BV + tl.arange(0, BV)
    s_at = sh.to(tl.int64) * K * V + tl.arange(0, K)[:, None] * V + rv[None, :]        # [K, BV]
    S = tl.load(s0_ptr + s_at)
    if VARLEN:
        first, last = tl.load(seq_chunks_ptr + s), tl.load(seq_chunks_ptr + s + 1)
    else:
        first, last = s * n_per, s * n_per + n_per
    rows = hv.to(tl.int64) * n_chunks
    if INTERPRET:
        # Triton's CPU interpreter (the tests) cannot take a runtime bound through range() (it int()s a
        # one-element array, which NumPy 2 refuses); a while loop is the same walk
        i = first
        while i < last:
            S = _walk_step(S, i, rows + i, q_ptr, k_ptr, w_ptr, u_ptr, key_rows_ptr, decay_ptr, scores_ptr,
                           query_rows_ptr, states_ptr, new_v_ptr, o_ptr, starts_ptr, stops_ptr, rv, T, HK, HV, hv,
                           head, n_per, C, K, V, VARLEN, PREC, OUTPUT_IN_WALK)
            i += 1
    else:                                 # range(): the compiler can prefetch chunk i + 1's factors
        for i in range(first, last):
            S = _walk_step(S, i, rows + i, q_ptr, k_ptr, w_ptr, u_ptr, key_rows_ptr, decay_ptr, scores_ptr,
                           query_rows_ptr, states_ptr, new_v_ptr, o_ptr, starts_ptr, stops_ptr, rv, T, HK, HV, hv,
                           head, n_per, C, K, V, VARLEN, PREC, OUTPUT_IN_WALK)
    tl.store(s_end_ptr + s_at, S)


@triton.jit
def output_kernel(q_ptr, k_ptr, g_ptr, states_ptr, new_v_ptr, o_ptr, starts_ptr, stops_ptr, scale, T, HK, HV, n_per,
                  n_chunks, C: tl.constexpr, K: tl.constexpr, V: tl.constexpr, BV: tl.constexpr, GROUP: tl.constexpr,
                  VARLEN: tl.constexpr, L2NORM: tl.constexpr, PREC: tl.constexpr):
    """Chunk i of value head hv, columns of block pid 2: O = diag(e^gamma) Q S_i + (Q K^T * Gamma) N, written
    straight into o [B, T, HV, V]."""
    i, hv = tl.program_id(0), tl.program_id(1)
    rc, rk = tl.arange(0, C), tl.arange(0, K)
    rv = tl.program_id(2) * BV + tl.arange(0, BV)
    t, live = _chunk_rows(i, starts_ptr, stops_ptr, T, n_per, C, VARLEN)
    q = _normalised(_load_rows(q_ptr, t, live, hv // GROUP, HK, K), L2NORM) * scale
    k = _normalised(_load_rows(k_ptr, t, live, hv // GROUP, HK, K), L2NORM)
    g = tl.load(g_ptr + t * HV + hv, mask=live, other=0.0).to(tl.float32)
    Gamma, decay, _ = _chunk_decays(g, C)
    scores = _dot(q, tl.trans(k), PREC) * Gamma                                         # [C, C]  lower
    at = hv.to(tl.int64) * n_chunks + i
    S = tl.load(states_ptr + (at * K + rk[:, None]) * V + rv[None, :])                 # [K, BV]
    new_v = tl.load(new_v_ptr + (at * C + rc[:, None]) * V + rv[None, :])              # [C, BV]
    o = _dot(q * decay[:, None], S, PREC) + _dot(scores, new_v, PREC)
    o_at = (t[:, None] * HV + hv) * V + rv[None, :]
    tl.store(o_ptr + o_at, o.to(o_ptr.dtype.element_ty), mask=live[:, None])
