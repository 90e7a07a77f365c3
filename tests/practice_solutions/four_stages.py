import torch


def step(S, k, v, alpha, beta):
    decayed = alpha * S
    prediction = decayed.T @ k
    error = v - prediction
    S_new = decayed + torch.outer(k, beta * error)
    return decayed, prediction, error, S_new
