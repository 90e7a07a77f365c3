import torch


def recurrence(q, k, v, g, beta, S):
    outputs = []
    for t in range(k.shape[0]):
        S = S * g[t].exp()
        error = beta[t] * (v[t] - S.T @ k[t])
        S = S + torch.outer(k[t], error)
        outputs.append(S.T @ q[t])
    return torch.stack(outputs), S


def chunk(q, k, v, g, beta, S):
    C = k.shape[0]
    gamma = g.cumsum(0)
    Gamma = (gamma[:, None] - gamma[None, :]).exp()
    A = torch.tril(beta[:, None] * (k @ k.T) * Gamma, diagonal=-1)
    I = torch.eye(C, dtype=k.dtype)
    right = beta[:, None] * v - (beta[:, None] * gamma.exp()[:, None] * k) @ S
    U = torch.linalg.solve_triangular(I + A, right, upper=False)
    o = gamma.exp()[:, None] * (q @ S) + torch.tril(q @ k.T * Gamma) @ U
    S_after = gamma[-1].exp() * S + (k * (gamma[-1] - gamma).exp()[:, None]).T @ U
    return o, S_after
