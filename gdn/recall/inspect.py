"""Inside a trained MQAR model: per layer, the gates alpha_t and beta_t on one sequence, the memory's
size ||S_t||, and how well the memory holds each stored pair once all pairs are written.

For pair i the model writes at its value token (position 2i + 1, where the short convolution lets the
key token just before it shape k): recall_i = cos(S^T k_i, v_i), S the state after the last pair and
k_i, v_i the (L2-normalised) key and the value the layer itself wrote there. 1 means the memory gives
back exactly the direction it stored; a rule that overwrote or blurred the pair scores lower.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from safetensors import safe_open
from safetensors.torch import load_file

from gdn.ops import state_norm_scan
from gdn.ops.inputs import l2_normalize
from gdn.recall.data import Vocab, mqar_batch
from gdn.recall.models import RecallModel

SHIPPED = Path(__file__).resolve().parents[2] / "assets" / "recall" / "gdn_d64_pairs16.safetensors"
SHIPPED_WIDTH = 64


@dataclass(frozen=True)
class LayerTrace:
    alpha: np.ndarray      # [T]
    beta: np.ndarray       # [T]
    norms: np.ndarray      # [T]  ||S_t|| after token t
    recall: np.ndarray     # [N]  cos(S^T k_i, v_i) after the last pair


def load_shipped(path: Path = SHIPPED, d: int = SHIPPED_WIDTH) -> RecallModel:
    """The Gated DeltaNet model the sweep saved (safetensors only), in eval mode on the CPU."""
    model = RecallModel(Vocab().size, d, "gdn")
    model.load_state_dict(load_file(str(path)))
    return model.eval()


def shipped_metadata(path: Path = SHIPPED) -> dict[str, str]:
    """What the sweep wrote beside the weights: lr, seed, steps and test accuracy (strings)."""
    with safe_open(str(path), "pt") as f:
        return dict(f.metadata() or {})


def example(pairs: int = 8, seq_len: int = 40, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """One MQAR sequence: tokens [1, seq_len] and targets [1, seq_len]."""
    return mqar_batch(1, pairs, seq_len, generator=torch.Generator().manual_seed(seed))


@torch.no_grad()
def trace(model: RecallModel, tokens: torch.Tensor, pairs: int) -> tuple[list[LayerTrace], np.ndarray]:
    """tokens: [1, T] -> one LayerTrace per layer, and the model's answer (argmax) at every position [T]."""
    if model.rule != "gdn":
        raise ValueError(f"trace reads the gates of a Gated DeltaNet model, got rule {model.rule!r}")
    x = model.embed(tokens)                                               # [1, T, d]
    layers = []
    for i, (mixer, mlp) in enumerate(zip(model.mixers, model.mlps)):
        h = model.norms[2 * i](x)
        q, k, v = mixer.qkv_of(h)                                         # [1, T, d]
        g, beta = mixer.gates(h)                                          # [1, T, 1]
        k = l2_normalize(k)
        norms, _ = state_norm_scan(k[:, :, None].double(), v[:, :, None].double(), g.double(), beta.double())
        _, S = state_norm_scan(k[:, :2 * pairs, None].double(), v[:, :2 * pairs, None].double(),
                               g[:, :2 * pairs].double(), beta[:, :2 * pairs].double())   # S [1, 1, d, d]
        keys, values = k[0, 1:2 * pairs:2].double(), v[0, 1:2 * pairs:2].double()  # [N, d] at the value tokens
        read = keys @ S[0, 0]                                             # [N, d]  S^T k_i
        recall = torch.nn.functional.cosine_similarity(read, values, dim=-1)
        layers.append(LayerTrace(alpha=g[0, :, 0].exp().numpy(), beta=beta[0, :, 0].numpy(),
                                 norms=norms[0, :, 0].float().numpy(), recall=recall.numpy()))
        x = x + mixer(h)
        x = x + mlp(model.norms[2 * i + 1](x))
    answers = model.head(model.norms[-1](x))[0].argmax(-1).numpy()
    return layers, answers


def value_over_key_beta(layer: LayerTrace, pairs: int) -> float:
    """Mean beta on the pairs' value tokens over its mean on their key tokens (the pairs fill the first
    2 * pairs tokens, key first): how much harder a layer writes once the value has arrived."""
    beta = layer.beta[:2 * pairs]
    return float(beta[1::2].mean() / beta[0::2].mean())


def token_names(tokens: torch.Tensor, vocab: Vocab = Vocab()) -> list[str]:
    """k12, v7, · (filler): how the page labels the tokens."""
    out = []
    for t in tokens.tolist():
        out.append("·" if t == 0 else f"k{t}" if t < vocab.first_value else f"v{t - vocab.first_value}")
    return out
