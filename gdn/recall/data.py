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
