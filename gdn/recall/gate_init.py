"""Why the gates start where they do: the forgetting gate's initial half-lives under two init recipes,
for the heads of a Qwen3.5 config, and the values a trained checkpoint ended with.

alpha_t = exp(-A softplus(a_t + dt_bias)) with A = exp(A_log). Before training the input term a_t is
small, so alpha starts near exp(-A softplus(dt_bias)), whose half-life is ln 2 / (A softplus(dt_bias))
tokens. The recipes:
    qwen35   A ~ U(1, 16), dt_bias = 1   (the released modelling code's init, used for the shipped demo)
    mamba2   A ~ U(1, 16), softplus(dt_bias) = dt ~ log-uniform(0.001, 0.1)   (Mamba2; fla's Gated DeltaNet)
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from safetensors import safe_open

from gdn.lessons.cost import layer_counts

RECIPES = ("qwen35", "mamba2")


def softplus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, x)


def half_lives(A_log: np.ndarray, dt_bias: np.ndarray) -> np.ndarray:
    """Tokens until alpha^n = 1/2 at a zero input: ln 2 / (exp(A_log) softplus(dt_bias)), per head."""
    return math.log(2.0) / (np.exp(np.asarray(A_log, float)) * softplus(np.asarray(dt_bias, float)))


def sample_init(recipe: str, heads: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A_log and dt_bias [heads] as the recipe draws them."""
    if recipe not in RECIPES:
        raise ValueError(f"recipe must be one of {RECIPES}, got {recipe!r}")
    rng = np.random.default_rng(seed)
    A_log = np.log(rng.uniform(1.0, 16.0, heads))
    if recipe == "qwen35":
        return A_log, np.ones(heads)
    dt = np.exp(rng.uniform(math.log(1e-3), math.log(1e-1), heads))
    return A_log, dt + np.log(-np.expm1(-dt))                       # inverse softplus: softplus(dt_bias) = dt


def config_heads(cfg: dict) -> int:
    """Gated DeltaNet heads in a Qwen3.5 text config (HF keys): GDN layers x linear_num_value_heads."""
    n_gdn, _ = layer_counts(cfg)
    return n_gdn * int(cfg["linear_num_value_heads"])


def checkpoint_gates(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """Every GDN head's A_log and dt_bias in a safetensors file (all layers, concatenated)."""
    A_log, dt_bias = [], []
    read = lambda f, name: f.get_tensor(name).double().numpy().ravel()       # bf16 has no numpy dtype
    with safe_open(str(path), framework="pt") as f:
        for name in sorted(f.keys()):
            if name.endswith(".A_log"):
                A_log.append(read(f, name))
                dt_bias.append(read(f, name[:-len("A_log")] + "dt_bias"))
    if not A_log:
        raise ValueError(f"{path} holds no A_log tensors (not a Gated DeltaNet checkpoint)")
    return np.concatenate(A_log), np.concatenate(dt_bias)
