import torch
import torch.nn.functional as F


def delta_rule(q, k, v, g, beta, S=None):
    """The gated delta rule, one token at a time.

    q, k: [B, T, H, K]; v: [B, T, H, V]
    g: [B, T, H] log decay (<= 0), alpha = exp(g); beta: [B, T, H] write strength in [0, 1]
    S: [B, H, K, V] the memory table to start from, or None for zeros
    returns o: [B, T, H, V] in v's dtype, and the final S: [B, H, K, V]
    """
    B, T, H, K = k.shape
    V = v.shape[-1]
    # 1. work in float32 (or float64 if given); L2-normalise q and k; scale q by 1/sqrt(K)
    # 2. start from S, or zeros
    # 3. for each token t: decay, read the prediction with k_t, write beta_t * error along k_t,
    #    then read the output with q_t from the updated table
    raise NotImplementedError("write delta_rule")
