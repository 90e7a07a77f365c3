import torch
import torch.nn.functional as F


def delta_rule(q, k, v, g, beta, S=None):
    B, T, H, K = k.shape
    V = v.shape[-1]
    work = torch.promote_types(v.dtype, torch.float32)
    q, k, v, g, beta = (x.to(work) for x in (q, k, v, g, beta))
    q = F.normalize(q, dim=-1) * K ** -0.5
    k = F.normalize(k, dim=-1)
    S = torch.zeros(B, H, K, V, dtype=work) if S is None else S.to(work)
    outputs = []
    for t in range(T):
        S = S * g[:, t].exp()[..., None, None]
        prediction = torch.einsum("bhkv,bhk->bhv", S, k[:, t])
        error = beta[:, t, :, None] * (v[:, t] - prediction)
        S = S + torch.einsum("bhk,bhv->bhkv", k[:, t], error)
        outputs.append(torch.einsum("bhkv,bhk->bhv", S, q[:, t]))
    return torch.stack(outputs, dim=1).to(v.dtype), S
