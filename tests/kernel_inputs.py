"""Random kernel inputs shared by the kernel tests."""
import torch


def make_inputs(B, T, HK, HV, K, V, *, seed=0, dtype=torch.float64, per_channel_beta=False, state=True):
    gen = torch.Generator().manual_seed(seed)
    rand = lambda *shape: torch.randn(*shape, generator=gen, dtype=dtype)
    q, k, v = rand(B, T, HK, K), rand(B, T, HK, K), rand(B, T, HV, V)
    g = -torch.rand(B, T, HV, generator=gen, dtype=dtype) * 3          # alpha in (0.05, 1]
    beta_shape = (B, T, HV, V) if per_channel_beta else (B, T, HV)
    beta = torch.rand(*beta_shape, generator=gen, dtype=dtype)
    S0 = rand(B, HV, K, V) if state else None
    return q, k, v, g, beta, S0
