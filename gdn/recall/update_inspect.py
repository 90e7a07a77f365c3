"""Inside a model trained on the update task (the sweep's saved models, assets/recall_update/):

- answer_path: on one sequence, what the whole model would answer if a rewritten key were asked right after
  token t, for every t from its first write to its question: the probability of each value the key has
  held. A memory that overwrites moves from the old value to the new one at the rewrite; one that adds
  ends up between them.
- gates_at_writes: over many sequences, each layer's mean beta and alpha at the value tokens of first writes,
  of rewrites, and at the filler: does beta rise when a key comes back, does alpha drop (forget) there? And
  the size of each layer's read there: a first layer of linear attention that reads something only when a
  key comes back (the old value) hands the second layer what the delta rule computes in one.

The model writes a pair at its value token (the short convolution lets the key just before it shape k), so
the gates are read there.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from safetensors import safe_open
from safetensors.torch import load_file

from gdn.recall.data import FILLER, Vocab, update_batch
from gdn.recall.models import GATED, RecallModel, memory_read
from gdn.recall.update_results import FOLDER

GATE_SEQUENCES = 256        # sequences the gates' means are taken over


def model_file(rule: str, layers: int, pairs: int, updates: int, folder: Path = FOLDER) -> Path:
    return Path(folder) / f"{rule}_layers{layers}_pairs{pairs}_updates{updates}.safetensors"


def load(path: Path, vocab: Vocab, d: int) -> RecallModel:
    """A saved model (safetensors only; rule and depth from its file name and weights), eval mode, CPU."""
    state = load_file(str(path))
    layers = 1 + max(int(k.split(".")[1]) for k in state if k.startswith("mixers."))
    model = RecallModel(vocab.size, d, Path(path).name.split("_layers")[0], layers)
    model.load_state_dict(state)
    return model.eval()


def metadata(path: Path) -> dict[str, str]:
    with safe_open(str(path), "pt") as f:
        return dict(f.metadata() or {})


def example(pairs: int, updates: int, seq_len: int, vocab: Vocab, seed: int = 0):
    """One update-task sequence: tokens [1, T], targets [1, T] and its Rewrites."""
    return update_batch(1, pairs, updates, seq_len, vocab=vocab, generator=torch.Generator().manual_seed(seed))


@dataclass(frozen=True)
class AnswerPath:
    key: int                    # the rewritten key's token
    values: list[int]           # the values it held, oldest first (the last is the answer)
    written_at: list[int]       # the positions of the value tokens that wrote each of them
    asked_at: int               # the position of the question (the key token)
    steps: list[int]            # t: the key asked right after token t
    probs: np.ndarray           # [len(steps), len(values)] the model's probability of each value


def rewritten_keys(tokens: torch.Tensor, vocab: Vocab) -> list[int]:
    """The keys written more than once before their question, in order of their first write."""
    row, seen, out = tokens[0].tolist(), {}, []
    for t in range(0, len(row) - 1):
        if 0 < row[t] < vocab.first_value and row[t + 1] >= vocab.first_value:
            seen[row[t]] = seen.get(row[t], 0) + 1
    for t in range(0, len(row) - 1, 2):
        if seen.get(row[t], 0) > 2 and row[t] not in out:      # written more than once (and asked once)
            out.append(row[t])
    return out


@torch.no_grad()
def answer_path(model: RecallModel, tokens: torch.Tensor, key: int, vocab: Vocab) -> AnswerPath:
    """tokens [1, T]: the model's answer for `key` if asked right after each token from its first write on."""
    row = tokens[0]
    at = [t for t in range(len(row) - 1) if int(row[t]) == key]                    # writes, then the question
    written, asked = [t + 1 for t in at[:-1]], at[-1]
    values = [int(row[t]) for t in written]
    steps = list(range(written[0], asked))
    probes = row.repeat(len(steps), 1)                                            # [S, T]
    for i, t in enumerate(steps):                # the prefix up to t, then the key asked; filler after it
        probes[i, t + 1] = key
        probes[i, t + 2:] = FILLER
    logits = model(probes)[torch.arange(len(steps)), torch.tensor(steps) + 1]      # [S, vocab]
    probs = logits.softmax(-1)[:, values].numpy()
    return AnswerPath(key, values, written, asked, steps, probs)


@dataclass(frozen=True)
class GatesAtWrites:
    beta: np.ndarray            # [layers, 3] mean beta at first writes, rewrites, filler
    alpha: np.ndarray | None    # [layers, 3] the same for alpha (rules with a forgetting gate), else None
    read: np.ndarray            # [layers, 3] mean norm of the layer's memory output (its read, o_t = S_t^T q_t)


def written_where(tokens, targets, pairs: int, vocab: Vocab) -> list[torch.Tensor]:
    """[first writes, rewrites, filler] as [B, T] masks: the value tokens of the pairs, the value tokens
    written again (neither a pair's nor a question's answer), and the filler."""
    is_value = tokens >= vocab.first_value
    answer = torch.zeros_like(is_value)
    answer[:, 1:] = targets[:, :-1] != -100
    first = torch.zeros_like(is_value)
    first[:, 1:2 * pairs:2] = True
    return [first, is_value & ~first & ~answer, tokens == FILLER]


@torch.no_grad()
def gates_at_writes(model: RecallModel, pairs: int, updates: int, seq_len: int, vocab: Vocab,
                    sequences: int = GATE_SEQUENCES, seed: int = 1) -> GatesAtWrites:
    """Each layer's mean beta (and alpha) and the norm of its read at the value tokens of first writes and of
    rewrites, and at filler."""
    tokens, targets, _ = update_batch(sequences, pairs, updates, seq_len, vocab=vocab,
                                      generator=torch.Generator().manual_seed(seed))
    where = written_where(tokens, targets, pairs, vocab)
    betas, alphas, reads = [], [], []
    x = model.embed(tokens)
    for i, (mixer, mlp) in enumerate(zip(model.mixers, model.mlps)):
        h = model.norms[2 * i](x)
        g, beta = mixer.gates(h)                                                  # [B, T, 1]
        q, k, v = mixer.qkv_of(h)
        read = memory_read(model.rule, q, k, v, g, beta).norm(dim=-1)            # [B, T] ||o_t||
        betas.append([float(beta[..., 0][m].mean()) for m in where])
        alphas.append([float(g[..., 0].exp()[m].mean()) for m in where])
        reads.append([float(read[m].mean()) for m in where])
        x = x + mixer(h)
        x = x + mlp(model.norms[2 * i + 1](x))
    return GatesAtWrites(np.array(betas), np.array(alphas) if model.rule in GATED else None, np.array(reads))
