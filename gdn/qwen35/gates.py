"""What the real-model page computes from a model's gates: half-lives, head summaries, a readable
corner of a 128 x 128 table, export payloads, the kernel check, and the "replay in the toy" payload.

Pure numpy/torch functions (no streamlit, no I/O). Shapes: T tokens, H (= HV) value heads, K key dim,
V value dim, L number of GDN layers.
"""
from __future__ import annotations

import csv
import io
import json
import time

import numpy as np
import torch

from gdn.ops import chunk_gated_delta_rule, recurrent_gated_delta_rule
from gdn.ops.fla import fla_here
from gdn.units import half_life, spreadsheet_cell

KERNEL_RTOL = 1e-4          # float32: max |Δ| / max |o| below this counts as "the kernels agree"
REPLAY_MAX_TOKENS = 32      # the memory-table page animates at most this many tokens
REPLAY_MAX_DIM = 8          # ... with key / value dims of at most 8


def head_summary(g: np.ndarray, beta: np.ndarray) -> dict[str, np.ndarray]:
    """g, beta: [..., T, H] -> mean α, mean β and half-life per head, each [..., H].

    The half-life uses the geometric mean of α over the tokens (exp of mean g): after n tokens a
    memory keeps exp(Σ g) ≈ exp(n · mean g), which is one half at n = ln 0.5 / mean g.
    """
    g = np.asarray(g, dtype=float)
    return {"alpha": np.exp(g).mean(-2), "beta": np.asarray(beta, dtype=float).mean(-2),
            "half_life": half_life(np.exp(g.mean(-2)))}


def top_block(S: np.ndarray, n: int = 16) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The n rows and n columns of S [K, V] with the largest L2 norm, kept in their original order.

    Returns (row indices [n], column indices [n], S[rows][:, cols] [n, n]): a readable corner of a
    128 x 128 table that still holds its largest entries.
    """
    S = np.asarray(S, dtype=float)
    rows = np.sort(np.argsort(-np.linalg.norm(S, axis=1), kind="stable")[:n])
    cols = np.sort(np.argsort(-np.linalg.norm(S, axis=0), kind="stable")[:n])
    return rows, cols, S[np.ix_(rows, cols)]


# -- export --------------------------------------------------------------------------------------
CSV_COLUMNS = ("model", "layer", "kernel", "t", "token_id", "token", "head", "alpha", "beta", "g", "state_norm")


def gates_csv(*, model: str, layer: int, kernel: str, ids, tokens, g: np.ndarray, beta: np.ndarray,
              state_norms: np.ndarray) -> str:
    """One GDN layer's gates in long form: one row per (token, head). g, beta, state_norms: [T, H].
    Text cells (the model's folder name, the tokens) are made safe to open in a spreadsheet."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\r\n")     # RFC 4180; with "\n" a token holding "\r" went unquoted
    w.writerow(CSV_COLUMNS)
    T, H = g.shape
    for t in range(T):
        for h in range(H):
            w.writerow([spreadsheet_cell(model), layer, kernel, t, int(ids[t]), spreadsheet_cell(tokens[t]), h, f"{np.exp(g[t, h]):.6g}",
                        f"{beta[t, h]:.6g}", f"{g[t, h]:.6g}", f"{state_norms[t, h]:.6g}"])
    return out.getvalue()


def gates_json(*, prompt: str, model: str, layer: int, head: int, kernel: str, ids, tokens,
               g: np.ndarray, beta: np.ndarray, state_norms: np.ndarray) -> str:
    """The same layer as JSON, with the prompt and the chosen head. g, beta, state_norms: [T, H]."""
    summary = head_summary(g, beta)
    finite = lambda x: [None if not np.isfinite(v) else round(float(v), 4) for v in x]
    payload = {"model": model, "layer": layer, "head": head, "kernel": kernel, "prompt": prompt,
               "token_ids": [int(i) for i in ids], "tokens": list(tokens),
               "alpha": np.round(np.exp(g), 6).tolist(), "beta": np.round(beta, 6).tolist(),
               "state_norm": np.round(state_norms, 6).tolist(),
               "head_alpha": np.round(np.exp(g[:, head]), 6).tolist(),
               "head_beta": np.round(beta[:, head], 6).tolist(),
               "half_life_per_head": finite(summary["half_life"]),
               "layout": "alpha, beta, state_norm: [token][head]; alpha = exp(g)"}
    return json.dumps(payload, ensure_ascii=False, indent=1)


# -- kernel check --------------------------------------------------------------------------------
def kernels_side_by_side(q, k, v, g, beta, *, head: int) -> dict:
    """One layer through the recurrent and the chunked kernel (and fla's, on CUDA when importable):
    the chosen value head's outputs [T, V] per kernel, max |Δ| of outputs and final states against the
    recurrent one, the larger of the two relative to the recurrent layer's scale ("rel"), and seconds per
    kernel (the whole layer)."""
    kernels = {"recurrent": recurrent_gated_delta_rule, "chunk": chunk_gated_delta_rule}
    if (fla := fla_here()) is not None:              # the one fla hook: it moves every input to the GPU itself
        kernels["fla"] = fla
    out = {"outputs": {}, "seconds": {}, "max_diff_output": {}, "max_diff_state": {}, "rel": {}}
    for name, fn in kernels.items():
        fn(q[:, :4], k[:, :4], v[:, :4], g=g[:, :4], beta=beta[:, :4])   # untimed warm-up
        start = time.perf_counter()
        o, S = fn(q, k, v, g=g, beta=beta, output_final_state=True, use_qk_l2norm_in_kernel=True)
        if o.is_cuda:
            torch.cuda.synchronize()
        out["seconds"][name] = time.perf_counter() - start
        o, S = o.float().cpu(), S.float().cpu()                           # [1, T, HV, V], [1, HV, K, V]
        out["outputs"][name] = o[0, :, head].numpy()                       # [T, V]
        if name == "recurrent":
            o_ref, S_ref = o, S
        else:
            out["max_diff_output"][name] = float((o - o_ref).abs().max())
            out["max_diff_state"][name] = float((S - S_ref).abs().max())
            # relative to the recurrent layer's own scale, outputs and state alike
            out["rel"][name] = max(out["max_diff_output"][name] / max(float(o_ref.abs().max()), 1e-30),
                                   out["max_diff_state"][name] / max(float(S_ref.abs().max()), 1e-30))
    return out


def head_state(q, k, v, g, beta, *, head: int, t: int) -> np.ndarray:
    """S_t [K, V] of one value head after token t (0-based), through the chunked kernel.

    Inputs as in kernels_side_by_side; value head h reads key head h // (HV / HK) (grouped heads).
    """
    HV, HK = v.shape[2], k.shape[2]
    kh, n = head // (HV // HK), t + 1
    _, S = chunk_gated_delta_rule(q[:, :n, kh:kh + 1], k[:, :n, kh:kh + 1], v[:, :n, head:head + 1],
                                  g=g[:, :n, head:head + 1], beta=beta[:, :n, head:head + 1],
                                  output_final_state=True, use_qk_l2norm_in_kernel=True)  # [1, 1, K, V]
    return S[0, 0].float().numpy()


# -- replay in the toy ----------------------------------------------------------------------------
def _top_directions(X: np.ndarray, d: int) -> np.ndarray:
    """[D, d]: the d right singular vectors of X [N, D] with the largest singular values (zero-padded
    when X has fewer than d of them), so X @ P keeps as much of X's energy as d numbers can."""
    _, _, Vt = np.linalg.svd(X, full_matrices=False)                      # Vt [min(N, D), D]
    P = np.zeros((X.shape[1], d))
    m = min(d, Vt.shape[0])
    P[:, :m] = Vt[:m].T
    return P


def _unit(x: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.where(n > 1e-12, n, 1.0)


def replay_payload(*, title: str, tokens, q: np.ndarray, k: np.ndarray, v: np.ndarray, g: np.ndarray,
                   beta: np.ndarray, start: int, length: int, dims: int = 4) -> dict:
    """One head's window of tokens, shrunk to the toy's size, for the memory-table page.

    q, k: [T, K] and v: [T, V] of ONE head (raw kernel inputs); g, beta: [T]. The window is
    start .. start + length - 1 (length <= 32). k and q are L2-normalised (as the kernel does),
    projected onto the `dims` directions that carry most of the window's keys and queries, and
    renormalised to unit length; v is projected onto its own top directions and scaled so its largest
    entry is 1 (the toy reads numbers near 1). α = exp(g) and β are the head's real gates.
    """
    length = max(1, min(int(length), REPLAY_MAX_TOKENS))
    d = max(2, min(int(dims), REPLAY_MAX_DIM))
    w = slice(start, start + length)
    kn, qn = _unit(np.asarray(k[w], float)), _unit(np.asarray(q[w], float))   # [W, K]
    P = _top_directions(np.concatenate([kn, qn]), d)                       # [K, d]
    vw = np.asarray(v[w], float)                                           # [W, V]
    v_small = vw @ _top_directions(vw, d)                                  # [W, d]
    v_small = v_small / max(float(np.abs(v_small).max()), 1e-12)
    r = lambda x: np.round(x, 4).tolist()
    return {"title": title, "tokens": list(tokens[w]), "K": k.shape[-1], "V": vw.shape[-1],
            "k": r(_unit(kn @ P)), "q": r(_unit(qn @ P)),
            "v": r(v_small), "alpha": r(np.exp(np.asarray(g[w], float))), "beta": r(np.asarray(beta[w], float))}
