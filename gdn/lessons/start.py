"""The start page's math: from softmax attention to one table, and the shapes of a Gated DeltaNet block.

1. Softmax attention reads the past through weights softmax(q·k_j / sqrt(K)) over every stored k_j, v_j.
2. Drop the softmax and the read is linear in the past:
       o = sum_j (q·k_j) v_j = (sum_j k_j v_j^T)^T q = S^T q,   S: [K, V]
   so the past fits in one K x V table S that does not grow with the sequence (the KV cache does).
3. block_shapes(cfg) lists every box of Qwen3.5's Gated DeltaNet layer with the tensor it outputs and
   the checkpoint weights it reads, from a config (anything with the Hugging Face text_config field
   names as attributes: gdn.qwen35.config.Qwen35Config). token_values picks one token and head of a
   traced layer for the diagram's live view.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gdn.lessons import cost
from gdn.units import half_life

# ---- 1-2. attention -> linear attention -> a table ------------------------------------------

@dataclass(frozen=True)
class Example:
    """A small stream: keys k_1..k_T [T, K], values v_1..v_T [T, V], and the query q [K] of the last token."""
    k: np.ndarray
    v: np.ndarray
    q: np.ndarray


def example(T: int = 6, K: int = 3, V: int = 3, seed: int = 0) -> Example:
    """Random keys, values and query (float64), rounded to one decimal so the numbers read on a slide."""
    rng = np.random.default_rng(seed)
    k, v, q = (np.round(rng.normal(size=s), 1) for s in ((T, K), (T, V), (K,)))
    return Example(k=k, v=v, q=q)


def softmax_read(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Softmax attention of one query over the past: q [K], k [T, K], v [T, V] ->
    (weights [T] summing to 1, output [V]). Scores are scaled by K^-0.5 as in a transformer."""
    scores = k @ q / np.sqrt(q.shape[0])                       # [T]
    w = np.exp(scores - scores.max())
    w /= w.sum()
    return w, w @ v                                            # [T], [V]


def linear_read(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """No softmax: o = sum_j (q·k_j) v_j, token by token over the stored past. q [K], k [T, K], v [T, V] -> [V]."""
    return sum((q @ k[j]) * v[j] for j in range(k.shape[0]))


def table(k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The accumulated table S = sum_j k_j v_j^T: k [T, K], v [T, V] -> [K, V]."""
    return sum(np.outer(k[j], v[j]) for j in range(k.shape[0]))


def table_read(S: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Read the table with a query: S^T q. S [K, V], q [K] -> [V]."""
    return S.T @ q


def linear_terms(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sum's parts, token by token: (scores q·k_j [T], terms (q·k_j) v_j [T, V]); terms sum to linear_read."""
    scores = k @ q                                             # [T]
    return scores, scores[:, None] * v


def outer_products(k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Each token's share of the table, k_j v_j^T: k [T, K], v [T, V] -> [T, K, V]; they sum to table(k, v)."""
    return k[:, :, None] * v[:, None, :]


@dataclass(frozen=True)
class Reads:
    """Everything the start page's first figure shows for one example (shapes as in the functions above)."""
    weights: np.ndarray      # [T] softmax weights
    scores: np.ndarray       # [T] q·k_j
    terms: np.ndarray        # [T, V] (q·k_j) v_j
    o_sum: np.ndarray        # [V] sum of the terms
    o_table: np.ndarray      # [V] S^T q
    S: np.ndarray            # [K, V]
    outer: np.ndarray        # [T, K, V] k_j v_j^T


def reads(ex: Example) -> Reads:
    weights, _ = softmax_read(ex.q, ex.k, ex.v)
    scores, terms = linear_terms(ex.q, ex.k, ex.v)
    S = table(ex.k, ex.v)
    return Reads(weights=weights, scores=scores, terms=terms, o_sum=linear_read(ex.q, ex.k, ex.v),
                 o_table=table_read(S, ex.q), S=S, outer=outer_products(ex.k, ex.v))


def numbers_kept(T: int, K: int, V: int) -> dict[str, int]:
    """How many numbers each form keeps after T tokens (one head): the KV cache grows, the table does not."""
    return {"kv_cache": T * (K + V), "table": K * V}


# ---- 3. the Gated DeltaNet block of Qwen3.5, box by box -------------------------------------

@dataclass(frozen=True)
class Box:
    """One box of the block diagram: its output tensor ("T" is the token count) and the checkpoint
    tensors it reads (names relative to layers.<i>.linear_attn., with their shapes)."""
    id: str
    output: tuple            # e.g. ("T", 6144)
    weights: dict            # name -> shape tuple


def block_shapes(cfg) -> dict[str, Box]:
    """Every box of one Gated DeltaNet layer, in the order data flows through it, for config `cfg`."""
    D, HK, HV = cfg.hidden_size, cfg.linear_num_key_heads, cfg.linear_num_value_heads
    K, V, W = cfg.linear_key_head_dim, cfg.linear_value_head_dim, cfg.linear_conv_kernel_dim
    conv_dim = 2 * HK * K + HV * V                              # q | k | v channels
    boxes = [
        Box("x", ("T", D), {}),                                 # residual stream after input_layernorm
        Box("in_qkv", ("T", conv_dim), {"in_proj_qkv.weight": (conv_dim, D)}),
        Box("in_z", ("T", HV * V), {"in_proj_z.weight": (HV * V, D)}),
        Box("in_a", ("T", HV), {"in_proj_a.weight": (HV, D)}),
        Box("in_b", ("T", HV), {"in_proj_b.weight": (HV, D)}),
        Box("conv", ("T", conv_dim), {"conv1d.weight": (conv_dim, 1, W)}),
        Box("l2", ("T", HK, K), {}),                            # q and k each; v passes as [T, HV, V]
        Box("alpha", ("T", HV), {"A_log": (HV,), "dt_bias": (HV,)}),   # g = -exp(A_log) softplus(a + dt_bias), alpha = exp(g)
        Box("beta", ("T", HV), {}),
        Box("delta", ("T", HV, V), {}),                         # output o; the state S is [HV, K, V]
        Box("chunk", ("T", HV, V), {}),                         # the same o, 64 tokens at a time
        Box("norm", ("T", HV, V), {"norm.weight": (V,)}),
        Box("out", ("T", D), {"out_proj.weight": (D, HV * V)}),
        Box("residual", ("T", D), {}),
    ]
    return {b.id: b for b in boxes}


def state_shape(cfg) -> tuple[int, int, int]:
    """The recurrent state S of one layer: [HV, K, V]."""
    return (cfg.linear_num_value_heads, cfg.linear_key_head_dim, cfg.linear_value_head_dim)


def shape_text(shape: tuple) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def token_values(q: np.ndarray, k: np.ndarray, v: np.ndarray, g: np.ndarray, beta: np.ndarray,
                 state_norm: np.ndarray, t: int, head: int) -> dict[str, float]:
    """The live numbers of value head `head` at token t of one traced GDN layer.

    q, k: [T, HK, K] after conv + SiLU, before the L2 norm; v: [T, HV, V]; g, beta: [T, HV];
    state_norm: [T, HV] ||S_t||_F. Value head h reads key head h // (HV / HK)."""
    kh = head // (v.shape[1] // k.shape[1])
    qn, kn = np.linalg.norm(q[t, kh]), np.linalg.norm(k[t, kh])
    q_hat, k_hat = q[t, kh] / np.sqrt(qn ** 2 + 1e-6), k[t, kh] / np.sqrt(kn ** 2 + 1e-6)   # the kernels' l2norm
    alpha = float(np.exp(g[t, head]))
    return {"q_norm": float(qn), "k_norm": float(kn), "q_hat_norm": float(np.linalg.norm(q_hat)),
            "k_hat_norm": float(np.linalg.norm(k_hat)), "cos_qk": float(q_hat @ k_hat),
            "v_norm": float(np.linalg.norm(v[t, head])), "g": float(g[t, head]), "alpha": alpha,
            "beta": float(beta[t, head]), "half_life": half_life(alpha), "state_norm": float(state_norm[t, head]), "key_head": int(kh)}



def memory_per_kind(cfg, dtype: str = "bf16") -> dict[str, tuple[int, int]]:
    """Per layer of each kind: (bytes it keeps whatever the length, bytes it adds per token).
    A GDN layer keeps its state S [HV, K, V] and adds nothing; a full-attention layer keeps nothing
    fixed and adds K and V of every token, [Hkv, head_dim] each (gdn.lessons.cost's formulas)."""
    sizes = {name: getattr(cfg, name) for name in ("linear_num_value_heads", "linear_key_head_dim",
                                                      "linear_value_head_dim", "num_key_value_heads", "head_dim")}
    return {"linear_attention": (cost.state_bytes(sizes, dtype=dtype), 0),
            "full_attention": (0, cost.kv_bytes_per_token(sizes, dtype=dtype))}
