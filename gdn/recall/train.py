"""Training and scoring one MQAR model: AdamW, linear warm-up then cosine decay, fresh sequences every
step (drawn from a generator seeded by the run's seed), cross-entropy on the questions only.

Deterministic for a given config on a given device: the weights come from the seed (models.build_model),
the training data from seed * 1_000_003 + step, the test set from TEST_SEED (one set for every run of a
setting, never trained on: its first pair lists differ from all training sequences').
"""
from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, replace

import torch
import torch.nn.functional as F

from gdn.recall.data import IGNORE, Rewrites, Vocab, mqar_batch, update_batch
from gdn.recall.models import LAYERS, RecallModel, build_model

TEST_SEED = 2_000_003
WARMUP = 0.1               # fraction of the steps spent warming the learning rate up


@dataclass(frozen=True)
class RunConfig:
    rule: str
    d: int = 64            # model width = the memory's key and value size (state d x d per layer)
    pairs: int = 16
    seq_len: int = 128
    steps: int = 1000
    batch: int = 64
    lr: float = 3e-3
    seed: int = 0
    weight_decay: float = 0.1
    test_sequences: int = 256
    eval_every: int = 0    # steps between test-set scores during training (0: only at the end)
    keys: int = 127        # key tokens in the vocabulary
    values: int = 128      # value tokens (chance = 1 / values)
    layers: int = LAYERS   # mixer + MLP blocks
    task: str = "mqar"     # "mqar" (data.mqar_batch) or "update" (data.update_batch: values change)
    updates: int = 0       # update task: how often each rewritten key is written again

    @property
    def vocab(self) -> Vocab:
        return Vocab(self.keys, self.values)


def lr_at(step: int, steps: int, peak: float) -> float:
    warmup = max(1, int(WARMUP * steps))
    if step < warmup:
        return peak * (step + 1) / warmup
    return peak * 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, steps - warmup)))


def batch_of(cfg: RunConfig, n: int, seed: int, device) -> tuple[torch.Tensor, torch.Tensor]:
    return drawn(cfg, n, seed, device)[:2]


def drawn(cfg: RunConfig, n: int, seed: int, device) -> tuple[torch.Tensor, torch.Tensor, Rewrites | None]:
    """n sequences of the run's task from `seed`: tokens, targets and (update task) the rewrites."""
    gen = torch.Generator().manual_seed(seed)
    if cfg.task == "update":
        return update_batch(n, cfg.pairs, cfg.updates, cfg.seq_len, vocab=cfg.vocab, generator=gen, device=device)
    if cfg.task != "mqar":
        raise ValueError(f"task must be 'mqar' or 'update', got {cfg.task!r}")
    return (*mqar_batch(n, cfg.pairs, cfg.seq_len, vocab=cfg.vocab, generator=gen, device=device), None)


def test_seed(cfg: RunConfig) -> int:
    """The test set's seed: one per setting (the update task's also per number of rewrites)."""
    return TEST_SEED + cfg.pairs + (1000 * (cfg.updates + 1) if cfg.task == "update" else 0)


def loss_and_correct(model: RecallModel, tokens, targets) -> tuple[torch.Tensor, torch.Tensor, int]:
    """Mean cross-entropy over the questions, the number answered right (argmax), and the number asked."""
    logits = model(tokens)                                              # [B, T, vocab]
    asked = targets != IGNORE                                           # [B, T]
    loss = F.cross_entropy(logits[asked].float(), targets[asked])
    return loss, (logits[asked].argmax(-1) == targets[asked]).sum(), int(asked.sum())


@torch.no_grad()
def accuracy(model: RecallModel, cfg: RunConfig, device, *, chunk: int = 256) -> float:
    """Fraction of the test set's questions answered right (argmax of the next-token logits)."""
    tokens, targets = batch_of(cfg, cfg.test_sequences, test_seed(cfg), device)
    right = asked = 0
    for i in range(0, len(tokens), chunk):
        _, r, n = loss_and_correct(model, tokens[i:i + chunk], targets[i:i + chunk])
        right, asked = right + int(r), asked + n
    return right / asked


def train(cfg: RunConfig, *, device="cpu", on_step=None, should_stop=None) -> tuple[RecallModel, dict]:
    """Train one model. on_step(step, loss, test_accuracy or None) is called after every step (the page's
    live curves); should_stop() ends training early (a time limit). Returns the model and a result row:
    the config plus accuracy (final, on the test set), steps done, seconds, and the loss curve."""
    model = build_model(cfg.vocab.size, cfg.d, cfg.rule, seed=cfg.seed, layers=cfg.layers).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay, betas=(0.9, 0.98))
    start, losses, curve, step = time.perf_counter(), [], [], 0
    for step in range(cfg.steps):
        if should_stop is not None and should_stop():
            break
        for group in opt.param_groups:
            group["lr"] = lr_at(step, cfg.steps, cfg.lr)
        tokens, targets = batch_of(cfg, cfg.batch, cfg.seed * 1_000_003 + step, device)
        loss, _, _ = loss_and_correct(model, tokens, targets)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
        scored = cfg.eval_every and (step + 1) % cfg.eval_every == 0
        acc = accuracy(model, cfg, device) if scored else None
        if acc is not None:
            curve.append((step + 1, acc))
        if on_step is not None:
            on_step(step + 1, losses[-1], acc)
    else:
        step = cfg.steps
    done = len(losses)
    model.eval()
    row = {**asdict(cfg), "accuracy": accuracy(model, cfg, device), "steps_done": done,
           "seconds": round(time.perf_counter() - start, 2), "final_loss": losses[-1] if losses else None,
           "curve": curve}
    return model, row


def with_steps(cfg: RunConfig, steps: int) -> RunConfig:
    return replace(cfg, steps=steps)
