"""Multi-query associative recall (MQAR, Arora et al. 2023, "Zoology"): the task every model here learns.

A sequence first lists N key-value pairs, then asks for the keys again, each followed by its value:

    k3 v3  k1 v1  k4 v4  k2 v2 | 0 0 k1 v1 0 k4 v4 0 k2 v2 0 0 k3 v3 0 ...
    \\------- N pairs ------/     the same N keys, shuffled, at random places among filler tokens 0

The model reads left to right and, at every key of the second half, must predict the next token: that
key's value. Only those positions are scored (target -100 elsewhere, cross-entropy's ignore index), so
chance is 1 / VALUES. Keys and values come from disjoint token ranges and no key repeats within a
sequence, so each question has exactly one answer, held only in the first half of this sequence: the
model can only succeed by writing the pairs into its memory and reading them back.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

IGNORE = -100          # target of positions that are not scored (torch's cross-entropy default)
FILLER = 0             # the token between questions


@dataclass(frozen=True)
class Vocab:
    """Token ids: 0 the filler, then `keys` key tokens, then `values` value tokens."""
    keys: int = 127
    values: int = 128

    @property
    def size(self) -> int:
        return 1 + self.keys + self.values

    @property
    def first_value(self) -> int:
        return 1 + self.keys


def mqar_batch(batch: int, pairs: int, seq_len: int, *, vocab: Vocab = Vocab(), generator: torch.Generator,
               device: str | torch.device = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
    """`batch` MQAR sequences of `seq_len` tokens with `pairs` key-value pairs each.
    Returns tokens [batch, seq_len] (int64) and targets [batch, seq_len]: the value at each question's
    key position, IGNORE elsewhere. Needs 4 * pairs <= seq_len (pairs, then as many questions) and
    pairs <= vocab.keys. Drawn on the CPU from `generator` (the same numbers on every device)."""
    if pairs < 1 or 4 * pairs > seq_len:
        raise ValueError(f"need 1 <= pairs and 4 * pairs <= seq_len, got pairs={pairs}, seq_len={seq_len}")
    if pairs > vocab.keys:
        raise ValueError(f"{pairs} distinct keys need a vocabulary of at least {pairs} keys, got {vocab.keys}")
    gen = generator
    keys = torch.rand(batch, vocab.keys, generator=gen).argsort(-1)[:, :pairs] + 1                  # [b, N] distinct
    values = torch.randint(vocab.first_value, vocab.size, (batch, pairs), generator=gen)          # [b, N]
    tokens = torch.full((batch, seq_len), FILLER, dtype=torch.long)
    targets = torch.full((batch, seq_len), IGNORE, dtype=torch.long)
    tokens[:, 0:2 * pairs:2], tokens[:, 1:2 * pairs:2] = keys, values                            # the pairs
    # The questions: the keys in a fresh order, each in one of the (seq_len - 2N) // 2 two-token slots
    # of the second part, slots picked at random and kept in order.
    slots = (seq_len - 2 * pairs) // 2
    where = torch.rand(batch, slots, generator=gen).argsort(-1)[:, :pairs].sort(-1).values * 2 + 2 * pairs  # [b, N]
    order = torch.rand(batch, pairs, generator=gen).argsort(-1)                                   # [b, N]
    asked, answers = keys.gather(1, order), values.gather(1, order)                               # [b, N]
    tokens.scatter_(1, where, asked)
    tokens.scatter_(1, where + 1, answers)
    targets.scatter_(1, where, answers)                       # at the key, predict the next token: its value
    return tokens.to(device), targets.to(device)


@dataclass(frozen=True)
class Rewrites:
    """What the update task's score needs at each question (IGNORE-free positions only matter): whether
    the asked key was rewritten, and the values it held before its latest one."""
    updated: torch.Tensor      # [batch, seq_len] bool: a question about a key that was written again
    old: torch.Tensor          # [batch, seq_len, max(updates, 1)] its superseded values, -1 where none

    def to(self, device) -> Rewrites:
        return Rewrites(self.updated.to(device), self.old.to(device))


def update_batch(batch: int, pairs: int, updates: int, seq_len: int, *, vocab: Vocab = Vocab(),
                 generator: torch.Generator, device: str | torch.device = "cpu",
                 ) -> tuple[torch.Tensor, torch.Tensor, Rewrites]:
    """The update task: MQAR where half of the keys change their value before they are asked.

        k3 v3  k1 v1  k4 v4  k2 v2 | 0 k1 v1' 0 0 k4 v4' k1 v1'' 0 | 0 k2 v2 k1 v1'' 0 k4 v4' 0 k3 v3 ...
        \\------- N pairs ------/   pairs // 2 keys written again,   every key asked once: its latest
                                    `updates` times each, in a        value is the answer
                                    random order among filler

    Every value a key holds is different from its others, so an answer that names a superseded value is
    the old value read back (the blur of a memory that adds writes instead of replacing them), not luck
    with a repeated token. updates = 0 is plain MQAR in this layout (nothing rewritten).
    Returns tokens and targets [batch, seq_len] as mqar_batch's, and the Rewrites at the questions."""
    U = pairs // 2 if updates else 0
    writes = U * updates
    if pairs < 1 or 4 * pairs + 2 * writes > seq_len:
        raise ValueError(f"need 1 <= pairs and 4 * pairs + 2 * (pairs // 2) * updates <= seq_len, got "
                         f"pairs={pairs}, updates={updates}, seq_len={seq_len}")
    if pairs > vocab.keys or updates + 1 > vocab.values:
        raise ValueError(f"{pairs} keys with {updates + 1} values each need at least {pairs} keys and "
                         f"{updates + 1} values in the vocabulary, got {vocab.keys} and {vocab.values}")
    gen, rows = generator, torch.arange(batch)[:, None]
    keys = torch.rand(batch, vocab.keys, generator=gen).argsort(-1)[:, :pairs] + 1                  # [b, N]
    history = (torch.rand(batch, pairs, vocab.values, generator=gen).argsort(-1)[..., :updates + 1]
               + vocab.first_value)                                                # [b, N, 1+u] distinct per key
    rewritten = torch.rand(batch, pairs, generator=gen).argsort(-1)[:, :U]          # [b, U] indices into the pairs
    tokens = torch.full((batch, seq_len), FILLER, dtype=torch.long)
    targets = torch.full((batch, seq_len), IGNORE, dtype=torch.long)
    tokens[:, 0:2 * pairs:2], tokens[:, 1:2 * pairs:2] = keys, history[..., 0]
    # Slots after the pairs: `writes` rewrites first, then the N questions, at random slots kept in order.
    slots = (seq_len - 2 * pairs) // 2
    where = torch.rand(batch, slots, generator=gen).argsort(-1)[:, :writes + pairs].sort(-1).values * 2 + 2 * pairs
    # The rewrites: each rewritten key `updates` times, shuffled; a key's n-th rewrite writes its value n.
    events = rewritten.repeat_interleave(updates, dim=1)                                          # [b, W]
    events = events.gather(1, torch.rand(batch, writes, generator=gen).argsort(-1))
    version = (events[:, :, None] == events[:, None, :]).tril(-1).sum(-1) + 1                     # [b, W]
    tokens[rows, where[:, :writes]] = keys.gather(1, events)
    tokens[rows, where[:, :writes] + 1] = history[rows, events, version]
    # The questions: every key once, in a fresh order; the answer is its latest value.
    order = torch.rand(batch, pairs, generator=gen).argsort(-1)                                   # [b, N]
    is_updated = torch.zeros(batch, pairs, dtype=torch.bool)
    is_updated[rows, rewritten] = True
    latest = history[rows, order, is_updated.gather(1, order).long() * updates]                    # [b, N]
    asked_at = where[:, writes:]
    tokens[rows, asked_at], tokens[rows, asked_at + 1] = keys.gather(1, order), latest
    targets[rows, asked_at] = latest
    updated = torch.zeros(batch, seq_len, dtype=torch.bool)
    updated[rows, asked_at] = is_updated.gather(1, order)
    old = torch.full((batch, seq_len, max(updates, 1)), -1, dtype=torch.long)
    superseded = history[rows, order, :updates]                                                   # [b, N, u]
    old[rows, asked_at, :updates] = torch.where(updated[rows, asked_at][..., None], superseded, -1)
    return tokens.to(device), targets.to(device), Rewrites(updated, old).to(device)
