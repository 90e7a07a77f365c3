import torch


def recurrence(q, k, v, g, beta, S):
    """One head, token by token, no normalisation or scaling (q and k come ready).

    q, k: [C, K]; v: [C, V]; g, beta: [C]; S: [K, V] the table before the chunk
    returns (o [C, V], S after the chunk [K, V])
    """
    raise NotImplementedError("write the token loop")


def chunk(q, k, v, g, beta, S):
    """The same result with no loop over tokens: the UT / WY form of one chunk."""
    gamma = g.cumsum(0)                                   # [C] log decay from the chunk's start
    Gamma = (gamma[:, None] - gamma[None, :]).exp()       # [C, C] decay from token j to token i
    raise NotImplementedError("write the chunked form")
