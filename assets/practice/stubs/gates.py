import math

import torch
import torch.nn.functional as F


def gates(a, b, A_log, dt_bias):
    """Qwen3.5's gates for every token and head.

    a, b: [B, T, H] the two small projections of the input
    A_log, dt_bias: [H] per-head weights from the checkpoint
    returns (g [B, T, H], the log decay, <= 0; beta [B, T, H], the write strength in (0, 1))
    """
    raise NotImplementedError("write gates(a, b, A_log, dt_bias)")


def half_life(alpha):
    """How many tokens until alpha ** n == 1/2 (a float, not rounded)."""
    raise NotImplementedError("write half_life(alpha)")
