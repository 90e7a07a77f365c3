"""Training a stack of MQAR models at once (gdn/recall/stacked.py): every member follows exactly the recipe
of train.train (same weights from its seed, same batches from its seed and step, AdamW, warm-up then
cosine, gradient clipping at 1, the same test set), but one set of kernel launches steps them all.

What differs per member: rule, pairs, learning rate, seed. What the stack shares: width, vocabulary,
sequence length, batch, steps. Each member's loss is its own mean over its questions; the stack's loss is
their sum, so each member's gradient is the one it would get alone. AdamW and clipping are applied per
member (norms and learning rates carry the model axis). A weight a rule never reads (the gate projection
of linear attention, A_log of DeltaNet) gets no gradient alone, so torch's AdamW leaves it untouched;
here it is masked out of the weight decay for the same result.
"""
from __future__ import annotations

import math
import time
from dataclasses import asdict

import torch
import torch.nn.functional as F

from gdn.recall.data import IGNORE
from gdn.recall.models import RULES, build_model
from gdn.recall.stacked import StackedRecall
from gdn.recall.train import TEST_SEED, RunConfig, batch_of, lr_at

SHARED = ("d", "seq_len", "steps", "batch", "keys", "values", "weight_decay", "test_sequences", "eval_every")
BETAS, EPS, CLIP = (0.9, 0.98), 1e-8, 1.0


def in_stack_order(cfgs: list[RunConfig]) -> list[RunConfig]:
    """The members sorted into the stack's rule blocks (stable: the given order within a rule)."""
    return sorted(cfgs, key=lambda c: RULES.index(c.rule))


def questions(targets: torch.Tensor, P: int) -> torch.Tensor:
    """targets [.., B, T] -> [.., B, P] the positions of each sequence's questions, in order, then padding
    positions that ask nothing (their target is IGNORE, so the loss and the score skip them)."""
    unasked = (targets == IGNORE).to(torch.int16)
    return torch.sort(unasked, dim=-1, stable=True).indices[..., :P]


class _Data:
    """Each member's batch at a step: drawn once per distinct (pairs, seed) with train.batch_of."""

    def __init__(self, cfgs, device):
        self.cfgs, self.device, self.P = cfgs, device, max(c.pairs for c in cfgs)

    def _stack(self, draw):
        cache = {}
        for c in self.cfgs:
            if (c.pairs, c.seed) not in cache:
                cache[(c.pairs, c.seed)] = draw(c)
        tokens = torch.stack([cache[(c.pairs, c.seed)][0] for c in self.cfgs])                # [M, B, T]
        targets = torch.stack([cache[(c.pairs, c.seed)][1] for c in self.cfgs])
        where = questions(targets, self.P)                                                   # [M, B, P]
        put = lambda x: x.to(self.device, non_blocking=True)
        return put(tokens), put(where), put(targets.gather(-1, where))

    def train(self, step):
        return self._stack(lambda c: batch_of(c, c.batch, c.seed * 1_000_003 + step, "cpu"))

    def test(self):
        return self._stack(lambda c: batch_of(c, c.test_sequences, TEST_SEED + c.pairs, "cpu"))


def member_losses(model: StackedRecall, tokens, where, answers) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per member [M]: mean cross-entropy over its questions, questions answered right, questions asked."""
    logits = model.logits_at(model.hidden(tokens), where)                                    # [M, B, P, vocab]
    M, B, P, V = logits.shape
    ce = F.cross_entropy(logits.reshape(-1, V).float(), answers.reshape(-1), ignore_index=IGNORE, reduction="none")
    asked = answers != IGNORE                                                                # [M, B, P]
    counts = asked.sum((1, 2))
    right = ((logits.argmax(-1) == answers) & asked).sum((1, 2))
    return ce.view(M, B, P).sum((1, 2)) / counts, right, counts


class StackAdamW:
    """torch.optim.AdamW's update (decoupled weight decay, bias correction) with a learning rate per member."""

    def __init__(self, model: StackedRecall, weight_decay: float):
        self.params = list(model.parameters())
        self.wd, self.t = weight_decay, 0
        self.m = [torch.zeros_like(p) for p in self.params]
        self.v = [torch.zeros_like(p) for p in self.params]
        gated, writes = model.gated.float(), model.writes.float()
        read_by = {id(p): gated for p in (*model.A_log, *model.dt_bias)} | {id(p): torch.maximum(gated, writes)
                                                                            for p in model.gate}
        self.decays = [read_by.get(id(p)) for p in self.params]      # [M] where a rule may not read p, else None

    @torch.no_grad()
    def step(self, lrs: torch.Tensor) -> None:
        """lrs: [M] this step's learning rate of each member. Clips each member's gradient norm to CLIP first."""
        grads = [p.grad for p in self.params]
        sq = sum(g.pow(2).sum(tuple(range(1, g.dim()))) for g in grads)                     # [M]
        coef = (CLIP / (sq.sqrt() + 1e-6)).clamp(max=1.0)
        self.t += 1
        b1, b2 = BETAS
        bc1, bc2_sqrt = 1 - b1 ** self.t, math.sqrt(1 - b2 ** self.t)
        for p, g, m, v, read in zip(self.params, grads, self.m, self.v, self.decays):
            shape = (-1,) + (1,) * (p.dim() - 1)
            g.mul_(coef.view(shape))
            decay = lrs * self.wd if read is None else lrs * self.wd * read
            p.mul_((1 - decay).view(shape))
            m.lerp_(g, 1 - b1)
            v.mul_(b2).addcmul_(g, g, value=1 - b2)
            denom = (v.sqrt() / bc2_sqrt).add_(EPS)
            p.addcdiv_(m * (lrs / bc1).view(shape), denom, value=-1.0)


def build_stack(cfgs: list[RunConfig], device) -> StackedRecall:
    c0 = cfgs[0]
    models = [build_model(c.vocab.size, c.d, c.rule, seed=c.seed) for c in cfgs]
    return StackedRecall(c0.vocab.size, c0.d, [c.rule for c in cfgs]).load_models(models).to(device)


@torch.no_grad()
def stack_accuracy(model: StackedRecall, data: _Data, chunk: int = 64) -> list[float]:
    tokens, where, answers = data.test()
    right = asked = 0
    for i in range(0, tokens.shape[1], chunk):
        _, r, n = member_losses(model, tokens[:, i:i + chunk], where[:, i:i + chunk], answers[:, i:i + chunk])
        right, asked = right + r, asked + n
    return (right.double() / asked.double()).tolist()


def train_stack(cfgs: list[RunConfig], *, device="cpu", on_step=None, on_eval=None, should_stop=None):
    """Train the members together; cfgs must share SHARED and come in stack order (in_stack_order).
    on_step(step, losses [M] tensor) after every step; on_eval(step, accuracies [M] list) at every
    eval_every; should_stop() ends every member at the same step. Returns the stack and one result row per
    member, as train.train's: the config plus accuracy, steps_done, seconds, final_loss, curve [(step,
    test accuracy)], and loss_curve [(step, mean training loss since the eval before)]."""
    if cfgs != in_stack_order(cfgs):
        raise ValueError("members must come in stack order (in_stack_order)")
    c0 = cfgs[0]
    if any(getattr(c, k) != getattr(c0, k) for c in cfgs for k in SHARED):
        raise ValueError(f"members of one stack must share {SHARED}")
    model, data = build_stack(cfgs, device), _Data(cfgs, device)
    opt = StackAdamW(model, c0.weight_decay)
    peaks = torch.tensor([c.lr for c in cfgs], device=device)
    start, curves, loss_curves, losses, done = time.perf_counter(), [[] for _ in cfgs], [[] for _ in cfgs], None, 0
    window = torch.zeros(len(cfgs), device=device)                   # loss summed since the last eval
    for step in range(c0.steps):
        if should_stop is not None and should_stop():
            break
        tokens, where, answers = data.train(step)
        losses, _, _ = member_losses(model, tokens, where, answers)
        for p in model.parameters():
            p.grad = None
        losses.sum().backward()
        opt.step(peaks * lr_at(step, c0.steps, 1.0))
        done = step + 1
        window += losses.detach()
        if on_step is not None:
            on_step(done, losses.detach())
        if c0.eval_every and done % c0.eval_every == 0:
            accs = stack_accuracy(model, data)
            for curve, loss_curve, a, loss in zip(curves, loss_curves, accs, (window / c0.eval_every).tolist()):
                curve.append((done, a))
                loss_curve.append((done, loss))
            window.zero_()
            if on_eval is not None:
                on_eval(done, accs)
    final = stack_accuracy(model, data)
    seconds = round(time.perf_counter() - start, 2)
    last = losses.tolist() if losses is not None else [None] * len(cfgs)
    rows = [{**asdict(c), "accuracy": a, "steps_done": done, "seconds": seconds, "final_loss": loss, "curve": curve,
             "loss_curve": loss_curve} for c, a, loss, curve, loss_curve in zip(cfgs, final, last, curves, loss_curves)]
    return model, rows

