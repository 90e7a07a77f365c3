import torch


def step(S, k, v, alpha, beta):
    """One token on one head, stage by stage.

    S: [K, V] the memory table before the token; k: [K]; v: [V]; alpha, beta: numbers.
    returns (decayed [K, V], prediction [V], error [V], S_new [K, V])
    """
    decayed = ...        # 1. decay the whole table by alpha
    prediction = ...     # 2. read what the decayed table holds for k
    error = ...          # 3. v minus the prediction
    S_new = ...          # 4. write beta * error along k
    return decayed, prediction, error, S_new
