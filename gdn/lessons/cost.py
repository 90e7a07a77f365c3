"""Inference memory of a Qwen3.5 text decoder: fixed Gated DeltaNet state vs growing KV cache.

From a config dict with the Hugging Face text_config field names (assets/qwen35_sizes.json):
    GDN state per layer   B * HV * K * V * s             (independent of the context length T)
    KV cache per layer    2 * B * T * Hkv * head_dim * s (keys and values of every past token)
    hybrid model          n_gdn * state + n_attn * KV(T), with n_attn = L // full_attention_interval
s is bytes per element (4 for fp32, 2 for bf16). Every page quotes these sizes in SHIPPED_DTYPE, the format
Qwen3.5's released weights come in (bf16), unless the learner picks another on the cost page.
Left out on purpose (formula estimates only): the GDN conv cache, the weights,
activations and temporary buffers, training memory, vision and MTP heads.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from gdn.units import fmt_bytes

SIZES_FILE = Path(__file__).resolve().parents[2] / "assets" / "qwen35_sizes.json"
DTYPE_BYTES = {"fp32": 4, "bf16": 2}
SHIPPED_DTYPE = "bf16"                 # torch_dtype of the released Qwen3.5 checkpoints


def load_sizes(path: Path = SIZES_FILE) -> dict[str, dict]:
    """Model name -> config dict (HF text_config keys), in release order."""
    return json.loads(path.read_text(encoding="utf-8"))["sizes"]


def layer_counts(cfg: dict, interval: int | None = None) -> tuple[int, int]:
    """(GDN layers, full-attention layers). Layer i is full attention iff (i + 1) % interval == 0;
    interval 0 means no attention layer at all, 1 means every layer is full attention."""
    L = cfg["num_hidden_layers"]
    interval = cfg["full_attention_interval"] if interval is None else interval
    n_attn = 0 if interval == 0 else L // interval
    return L - n_attn, n_attn


def state_bytes(cfg: dict, *, batch: int = 1, dtype: str = SHIPPED_DTYPE) -> int:
    """One GDN layer's recurrent state S: [B, HV, K, V]."""
    return (batch * cfg["linear_num_value_heads"] * cfg["linear_key_head_dim"] * cfg["linear_value_head_dim"]
            * DTYPE_BYTES[dtype])


def kv_bytes_per_token(cfg: dict, *, batch: int = 1, dtype: str = SHIPPED_DTYPE) -> int:
    """One full-attention layer's KV cache per token: K and V, [B, Hkv, head_dim] each."""
    return 2 * batch * cfg["num_key_value_heads"] * cfg["head_dim"] * DTYPE_BYTES[dtype]


def conv_cache_bytes(cfg: dict, *, batch: int = 1, dtype: str = SHIPPED_DTYPE) -> int:
    """One GDN layer's causal-conv cache (not counted in the curves): the last kernel-1 inputs of
    q, k and v, [B, conv_dim, kernel - 1]."""
    conv_dim = (2 * cfg["linear_num_key_heads"] * cfg["linear_key_head_dim"]
                + cfg["linear_num_value_heads"] * cfg["linear_value_head_dim"])
    return batch * conv_dim * (cfg["linear_conv_kernel_dim"] - 1) * DTYPE_BYTES[dtype]


def memory_curves(cfg: dict, T: np.ndarray, *, batch: int = 1, dtype: str = SHIPPED_DTYPE,
                  interval: int | None = None) -> dict[str, np.ndarray]:
    """Bytes against context length T ([n] tokens), each [n] float64:
    state (all GDN layers), kv (the hybrid's attention layers), hybrid = state + kv, and
    full = the same L layers all full attention."""
    n_gdn, n_attn = layer_counts(cfg, interval)
    T = np.asarray(T, dtype=np.float64)
    per_token = kv_bytes_per_token(cfg, batch=batch, dtype=dtype)
    state = np.full_like(T, n_gdn * state_bytes(cfg, batch=batch, dtype=dtype))
    kv = n_attn * per_token * T
    return {"state": state, "kv": kv, "hybrid": state + kv, "full": cfg["num_hidden_layers"] * per_token * T}


def layer_memory(cfg: dict, *, batch: int = 1, dtype: str = SHIPPED_DTYPE) -> dict[str, int]:
    """The two numbers every page quotes for a model: one GDN layer's fixed state ("state") and one
    full-attention layer's KV cache per token ("kv_per_token"), in bytes, and the format they assume."""
    return {"state": state_bytes(cfg, batch=batch, dtype=dtype),
            "kv_per_token": kv_bytes_per_token(cfg, batch=batch, dtype=dtype), "dtype": dtype,
            "element_bytes": DTYPE_BYTES[dtype]}


def crossover_tokens(cfg: dict) -> float:
    """T at which one attention layer's KV cache equals one GDN layer's state; batch and dtype cancel.
    It is also where the hybrid model and an all-attention model of the same depth cost the same."""
    return state_bytes(cfg) / kv_bytes_per_token(cfg)


def kv_passes_state_tokens(cfg: dict, interval: int | None = None) -> float:
    """T at which the attention layers' KV cache (all of them) exceeds all GDN layers' state; inf
    when there is no attention layer, 0 when there is no GDN layer."""
    n_gdn, n_attn = layer_counts(cfg, interval)
    if n_attn == 0:
        return float("inf")
    return n_gdn * state_bytes(cfg) / (n_attn * kv_bytes_per_token(cfg))


def summary(sizes: dict[str, dict], T: int, *, batch: int = 1, dtype: str = SHIPPED_DTYPE,
            interval: int | None = None) -> list[dict]:
    """One row of plain numbers per model: layer counts, per-layer bytes, crossover, totals at T."""
    rows = []
    for name, cfg in sizes.items():
        curves = memory_curves(cfg, np.array([T]), batch=batch, dtype=dtype, interval=interval)
        rows.append({"model": name, "layers": layer_counts(cfg, interval),
                     "state": state_bytes(cfg, batch=batch, dtype=dtype),
                     "kv": kv_bytes_per_token(cfg, batch=batch, dtype=dtype), "crossover": crossover_tokens(cfg),
                     "hybrid": float(curves["hybrid"][0]), "full": float(curves["full"][0])})
    return rows


def latex_bytes(n: float) -> str:
    """fmt_bytes as LaTeX: '1 MiB' -> '1\\,\\mathrm{MiB}'."""
    number, unit = fmt_bytes(n).split(" ")
    return rf"{number}\,\mathrm{{{unit}}}"


def formula_latex(cfg: dict, *, batch: int = 1, dtype: str = SHIPPED_DTYPE) -> dict[str, str]:
    """The two cost formulas with this config's numbers put in, as LaTeX (no words: the page adds them):
    state: one GDN layer's state; kv: one attention layer's KV cache per token; cross: T where they meet."""
    s = DTYPE_BYTES[dtype]
    dot = r" \cdot "
    state = dot.join(str(x) for x in (batch, cfg["linear_num_value_heads"], cfg["linear_key_head_dim"],
                                      cfg["linear_value_head_dim"], s))
    kv = dot.join(str(x) for x in (2, batch, cfg["num_key_value_heads"], cfg["head_dim"], s))
    return {
        "state": rf"B \cdot H_v \cdot d_k \cdot d_v \cdot s = {state}\,\mathrm{{B}} = "
                 rf"{latex_bytes(state_bytes(cfg, batch=batch, dtype=dtype))}",
        "kv": rf"2 \cdot B \cdot H_{{\mathrm{{kv}}}} \cdot d_{{\mathrm{{head}}}} \cdot s = {kv}\,\mathrm{{B}} = "
              rf"{latex_bytes(kv_bytes_per_token(cfg, batch=batch, dtype=dtype))}",
        "cross": rf"T^{{*}} = \frac{{H_v \cdot d_k \cdot d_v}}{{2 \cdot H_{{\mathrm{{kv}}}} \cdot d_{{\mathrm{{head}}}}}} = "
                 rf"{crossover_tokens(cfg):,.0f}".replace(",", "{,}"),
    }
