import torch


def read(S, q):
    return torch.einsum("bhkv,bhk->bhv", S, q)
