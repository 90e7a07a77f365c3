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
from gdn.recall.train import RunConfig, drawn, lr_at, test_seed

SHARED = ("d", "seq_len", "steps", "batch", "keys", "values", "weight_decay", "test_sequences", "eval_every",
          "layers", "task")
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
    """Each member's batch at a step: drawn once per distinct (pairs, updates, seed) with train.drawn."""

    def __init__(self, cfgs, device):
        self.cfgs, self.device, self.P = cfgs, device, max(c.pairs for c in cfgs)

    def _stack(self, draw, with_rewrites=False):
        cache = {}
        for c in self.cfgs:
            if (c.pairs, c.updates, c.seed) not in cache:
                cache[(c.pairs, c.updates, c.seed)] = draw(c)
        got = [cache[(c.pairs, c.updates, c.seed)] for c in self.cfgs]
        tokens, targets = torch.stack([g[0] for g in got]), torch.stack([g[1] for g in got])   # [M, B, T]
        where = questions(targets, self.P)                                                   # [M, B, P]
        put = lambda x: x.to(self.device, non_blocking=True)
        out = put(tokens), put(where), put(targets.gather(-1, where))
        if not with_rewrites:
            return out
        return out + (put(rewrites_at(got, where)),)

    def train(self, step):
        return self._stack(lambda c: drawn(c, c.batch, c.seed * 1_000_003 + step, "cpu"))

    def test(self, with_rewrites=False):
        return self._stack(lambda c: drawn(c, c.test_sequences, test_seed(c), "cpu"), with_rewrites)


def rewrites_at(got: list, where: torch.Tensor) -> torch.Tensor:
    """Each member's superseded values at its questions: [M, B, P, R] (-1: none; R the most rewrites)."""
    R = max(g[2].old.shape[-1] if g[2] is not None else 1 for g in got)
    out = torch.full((*where.shape, R), -1, dtype=torch.long)
    for m, (_, _, rewrites) in enumerate(got):
        if rewrites is not None:
            old = rewrites.old.gather(1, where[m][..., None].expand(-1, -1, rewrites.old.shape[-1]))
            out[m, ..., :old.shape[-1]] = old
    return out


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
        # A weight no member reads (the gates, in a stack of linear attention alone) has no gradient: as zeros
        # it stays where it is, as torch's AdamW leaves it (no member decays it: self.decays masks those).
        grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in self.params]
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
    models = [build_model(c.vocab.size, c.d, c.rule, seed=c.seed, layers=c.layers) for c in cfgs]
    return StackedRecall(c0.vocab.size, c0.d, [c.rule for c in cfgs], c0.layers).load_models(models).to(device)


@torch.no_grad()
def stack_scores(model: StackedRecall, data: _Data, chunk: int = 64) -> list[dict]:
    """Each member's test-set score: {"accuracy"} over every question; the update task adds "kept" (keys never
    rewritten), "updated" (rewritten keys: their latest value) and "old" (rewritten keys answered with a
    value they held before), each None when no such question was asked."""
    tokens, where, answers, old = data.test(with_rewrites=True)
    sums = torch.zeros(6, tokens.shape[0], dtype=torch.float64)     # right, asked, kept right/asked, updated right, old
    for i in range(0, tokens.shape[1], chunk):
        part = slice(i, i + chunk)
        logits = model.logits_at(model.hidden(tokens[:, part]), where[:, part])              # [M, b, P, vocab]
        said, want, held = logits.argmax(-1), answers[:, part], old[:, part]
        asked = want != IGNORE
        updated = asked & (held[..., 0] >= 0)
        kept, right = asked & ~updated, said == want
        named_old = (said[..., None] == held).any(-1) & updated
        for row, x in enumerate((right & asked, asked, right & kept, kept, right & updated, named_old)):
            sums[row] += x.sum((1, 2)).double().cpu()
    n_updated = sums[1] - sums[3]
    share = lambda num, den: [float(a / b) if b else None for a, b in zip(num.tolist(), den.tolist())]
    rows = [{"accuracy": a} for a in share(sums[0], sums[1])]
    if any(c.task == "update" for c in data.cfgs):
        for row, k, u, o in zip(rows, share(sums[2], sums[3]), share(sums[4], n_updated), share(sums[5], n_updated)):
            row.update(kept=k, updated=u, old=o)
    return rows


def stack_accuracy(model: StackedRecall, data: _Data) -> list[float]:
    return [row["accuracy"] for row in stack_scores(model, data)]


def train_stack(cfgs: list[RunConfig], *, device="cpu", on_step=None, on_eval=None, on_scores=None,
                should_stop=None):
    """Train the members together; cfgs must share SHARED and come in stack order (in_stack_order).
    on_step(step, losses [M] tensor) after every step; on_eval(step, accuracies [M] list) at every
    eval_every (on_scores(step, stack_scores rows) with them: the update task's three numbers); should_stop()
    ends every member at the same step. Returns the stack and one result row per
    member, as train.train's: the config plus accuracy, steps_done, seconds, final_loss, curve [(step,
    test accuracy)], loss_curve [(step, mean training loss since the eval before)]; the update task adds
    kept, updated, old (final) and score_curve [(step, kept, updated, old)]."""
    if cfgs != in_stack_order(cfgs):
        raise ValueError("members must come in stack order (in_stack_order)")
    c0 = cfgs[0]
    if any(getattr(c, k) != getattr(c0, k) for c in cfgs for k in SHARED):
        raise ValueError(f"members of one stack must share {SHARED}")
    model, data = build_stack(cfgs, device), _Data(cfgs, device)
    opt = StackAdamW(model, c0.weight_decay)
    peaks = torch.tensor([c.lr for c in cfgs], device=device)
    start, losses, done = time.perf_counter(), None, 0
    curves, loss_curves, score_curves = ([[] for _ in cfgs] for _ in range(3))
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
            scores = stack_scores(model, data)
            for curve, loss_curve, score_curve, row, loss in zip(curves, loss_curves, score_curves, scores,
                                                                 (window / c0.eval_every).tolist()):
                curve.append((done, row["accuracy"]))
                loss_curve.append((done, loss))
                if "old" in row:
                    score_curve.append((done, row["kept"], row["updated"], row["old"]))
            window.zero_()
            if on_eval is not None:
                on_eval(done, [row["accuracy"] for row in scores])
            if on_scores is not None:
                on_scores(done, scores)
    final = stack_scores(model, data)
    seconds = round(time.perf_counter() - start, 2)
    last = losses.tolist() if losses is not None else [None] * len(cfgs)
    rows = [{**asdict(c), **score, "steps_done": done, "seconds": seconds, "final_loss": loss, "curve": curve,
             "loss_curve": loss_curve} | ({"score_curve": sc} if "old" in score else {})
            for c, score, loss, curve, loss_curve, sc in zip(cfgs, final, last, curves, loss_curves, score_curves)]
    return model, rows

