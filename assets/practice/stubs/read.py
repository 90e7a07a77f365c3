import torch


def read(S, q):
    """What a query reads from every head's memory table.

    S: [B, H, K, V]  one table per batch and head (rows are key dims)
    q: [B, H, K]     one query per batch and head
    returns o: [B, H, V] = S^T q
    """
    raise NotImplementedError("write read(S, q)")
