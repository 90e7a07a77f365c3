"""Comparing what the learner's code returned with the reference, in words: a shape named by its axes, the
largest error against a stated tolerance, and for the token recurrences the first token and stage where
the learner's table or output leaves the reference (and, for a classic mistake, its name).
"""
from __future__ import annotations

import torch

from gdn.practice.reference import MISTAKES, token_step
from gdn.practice.verdict import Line, stage_word

SEQUENCE = ("q", "k", "v", "g", "beta")      # the rule's inputs per token, in its signature's order
ATOL = RTOL = 1e-5                 # |yours - reference| <= ATOL + RTOL * max|reference|: float32 work passes


def largest(x: torch.Tensor) -> float:
    return float(x.abs().max()) if x.numel() else 0.0


def tolerance(want: torch.Tensor) -> float:
    return ATOL + RTOL * largest(want)


def close(got: torch.Tensor | None, want: torch.Tensor) -> bool:
    return got is not None and got.shape == want.shape and bool(torch.isfinite(got).all()) \
        and largest(got - want) <= tolerance(want)


def shape_lines(name: str, got: torch.Tensor, want: torch.Tensor, axes: tuple[str, ...]) -> list[Line]:
    """Which axis differs, by name and size ("axis 2 (H) has 3 in yours, 4 expected"), or the whole shape."""
    if got.dim() != want.dim():
        return [Line("shape_rank", {"name": name, "got": list(got.shape), "want": list(want.shape),
                                    "axes": ", ".join(axes)})]
    lines = [Line("shape_axis", {"name": name, "axis": i, "axis_name": axes[i] if i < len(axes) else "?",
                                 "got": g, "want": w})
             for i, (g, w) in enumerate(zip(got.shape, want.shape)) if g != w]
    if sorted(got.shape) == sorted(want.shape) and list(got.shape) != list(want.shape):
        lines.append(Line("shape_transposed", {"name": name}))
    return lines


def value_lines(name: str, got: torch.Tensor | None, want: torch.Tensor, axes: tuple[str, ...]) -> list[Line]:
    """Nothing when got matches want, else what is wrong with it."""
    if got is None:
        return [Line("not_tensor", {"name": name})]
    if got.shape != want.shape:
        return shape_lines(name, got, want, axes)
    if not torch.isfinite(got).all():
        return [Line("not_finite", {"name": name})]
    err = largest(got - want)
    return [] if err <= tolerance(want) else [Line("largest_error", {"name": name, "err": f"{err:.3g}",
                                                                      "tol": f"{tolerance(want):.1g}"})]


def first_wrong_token(prefixes: list[tuple], reference: list[tuple]) -> int | None:
    """The first t whose prefix run (the learner's o [B, t+1, H, V], S) leaves the reference's, or None."""
    for t, ((o, S), (o_ref, S_ref)) in enumerate(zip(prefixes, reference)):
        if not (close(o, o_ref) and close(S, S_ref)):
            return t
    return None


def token_lines(t: int, S_prev, inputs: dict, got_S, got_o) -> list[Line]:
    """Why token t went wrong: the stage, and the classic mistake that gives exactly the learner's numbers.
    S_prev [B, H, K, V]: the reference table before t (the learner's matched it); inputs hold q, k, v, g,
    beta [B, T, H, ...]; got_S [B, H, K, V] and got_o [B, H, V] the learner's after token t (either None)."""
    at = {name: x[:, t] for name, x in inputs.items() if name in SEQUENCE}
    S_ref, o_ref = token_step(S_prev, **at)
    for mistake, where in MISTAKES.items():
        made = token_step(S_prev, **at, mistake=mistake)
        if made is None or (got_S is None and got_o is None):
            continue                              # a shape the mistake cannot have, or nothing to compare
        S_m, o_m = made
        if close(S_m, S_ref) and close(o_m, o_ref):
            continue                              # this token cannot tell the mistake from the rule
        if (got_S is None or close(got_S, S_m)) and (got_o is None or close(got_o, o_m)):
            return [Line("where", {"t": t + 1, "stage": stage_word(where)}), Line(f"mistake_{mistake}")]
    if got_S is not None and not close(got_S, S_ref):
        return [Line("where", {"t": t + 1, "stage": stage_word(table_stage(S_prev, at, got_S))})]
    return [Line("where", {"t": t + 1, "stage": stage_word("query")})]


def table_stage(S_prev, at: dict, got_S) -> str:
    """Which stage a wrong table after one token points to. The write only adds along k, so the rows the
    write cannot reach (the part of S orthogonal to k) show the decay alone: when they are the old table
    scaled by some factor other than alpha, the decay; otherwise the write."""
    k = at["k"].double()
    k = k / torch.sqrt((k * k).sum(-1, keepdim=True) + 1e-6)                 # [B, H, K]
    away = torch.eye(k.shape[-1], dtype=k.dtype) - torch.einsum("bhk,bhj->bhkj", k, k)   # [B, H, K, K] off k
    old, new = away @ S_prev.double(), away @ got_S.double()                  # [B, H, K, V]
    if largest(old) < 1e-9:
        return "write"                                                        # an empty table shows no decay
    factor = (old * new).sum() / (old * old).sum()
    alpha = at["g"].double().exp()[..., None, None]
    scaled_right = close(new, alpha * old)
    return "decay" if not scaled_right and close(new, factor * old) else "write"
