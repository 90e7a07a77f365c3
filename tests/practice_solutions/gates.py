import math

import torch
import torch.nn.functional as F


def gates(a, b, A_log, dt_bias):
    g = -torch.exp(A_log) * F.softplus(a + dt_bias)
    return g, torch.sigmoid(b)


def half_life(alpha):
    return math.log(0.5) / math.log(alpha)
