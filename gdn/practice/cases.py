"""Each exercise's tests: the inputs, the calls the child makes on them, and the check of what came back.

A Case is visible (its inputs are the worked examples the statement shows) or hidden (random shapes and
values from the judge's seed; its name gives its shapes). check(got) returns the lines that say why it
failed, none when it passed; got(call) is what that call returned (a list of float64 tensors or None),
got.kinds(call) what type each value had, and a call that raised stops the check (judge.py says why).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from gdn.practice import reference as ref
from gdn.practice.compare import SEQUENCE, close, first_wrong_token, token_lines, value_lines
from gdn.practice.verdict import Line, stage_word

F64 = torch.float64
HEAD_ARGS = (*SEQUENCE, "S")                   # the chunk exercise's arguments: one head's inputs and its table
O_AXES, S_AXES = ("B", "T", "H", "V"), ("B", "H", "K", "V")


class CallFailed(Exception):
    """A call of the learner's raised (or was never made): its report says why (judge.error_lines)."""

    def __init__(self, report: dict):
        super().__init__(report.get("error"))
        self.report = report


@dataclass
class Case:
    name: Line
    hidden: bool
    inputs: dict[str, torch.Tensor]
    calls: list[dict]              # {"id", "kind": "call" | "stream", "fn", "args": [input names or plain values]}
    check: Callable                # (got) -> list[Line]


def call(id_: str, fn: str, *args, kind: str = "call", width: int = 0) -> dict:
    return {"id": id_, "kind": kind, "fn": fn, "args": list(args), "width": width}


def unit(x: torch.Tensor) -> torch.Tensor:
    return x / x.norm(dim=-1, keepdim=True)


def shapes(**dims) -> str:
    return " ".join(f"{k}={v}" for k, v in dims.items())


def random_dims(gen: torch.Generator, K_is_V: bool = False) -> tuple[int, int, int, int, int]:
    pick = lambda lo, hi: int(torch.randint(lo, hi + 1, (1,), generator=gen))
    B, T, H, K = pick(1, 2), pick(5, 9), pick(1, 3), pick(2, 5)
    V = K if K_is_V else next(v for v in (K + 1, K + 2, K - 1) if v >= 2 and v != K)
    return B, T, H, K, V


def sequence(gen: torch.Generator, B, T, H, K, V, with_state: bool, dtype=F64) -> dict[str, torch.Tensor]:
    """Random inputs of the rule: q, k in random directions, Gaussian v; alpha in (0.5, 1), beta in (0.1, 0.9); maybe a start table."""
    r = lambda *shape: torch.randn(*shape, generator=gen, dtype=F64)
    # q and k of norm 0.5-2: far from zero, where the eps inside an L2 normalisation (1e-6 in fla, 1e-12 in
    # torch's normalize) would move the answer by more than the tolerance
    sized = lambda: unit(r(B, T, H, K)) * (0.5 + 1.5 * torch.rand(B, T, H, 1, generator=gen, dtype=F64))
    x = {"q": sized(), "k": sized(), "v": r(B, T, H, V),
         "g": torch.log(0.5 + 0.5 * torch.rand(B, T, H, generator=gen, dtype=F64)),
         "beta": 0.1 + 0.8 * torch.rand(B, T, H, generator=gen, dtype=F64)}
    if with_state:
        x["S"] = 0.5 * r(B, H, K, V)
    return {k: v.to(dtype) for k, v in x.items()}


# -- 1. the query read ---------------------------------------------------------------------------------------

def read_cases(gen: torch.Generator) -> list[Case]:
    memory_S = torch.tensor([[[[3.0, 1.0], [-1.0, 2.0]]]], dtype=F64)        # the memory page's table
    wide_S = torch.tensor([[[[1.0, 0.0, 2.0], [0.0, -1.0, 1.0]]]], dtype=F64)
    B, _, H, K, V = random_dims(gen)
    examples = [(Line("case_read_memory"), False, memory_S, torch.tensor([[[0.6, 0.8]]], dtype=F64)),
                (Line("case_read_wide"), False, wide_S, torch.tensor([[[0.6, 0.8]]], dtype=F64)),
                (Line("case_random", {"shapes": shapes(B=B, H=H, K=K, V=V)}), True,
                 torch.randn(B, H, K, V, generator=gen, dtype=F64), unit(torch.randn(B, H, K, generator=gen, dtype=F64)))]
    out = []
    for name, hidden, S, q in examples:
        def check(got, S=S, q=q):
            values = got("read")
            if len(values) != 1:
                return [Line("count", {"got": len(values), "want": 1, "names": "o"})]
            want, o = ref.read(S, q), values[0]
            lines = value_lines("o", o, want, ("B", "H", "V"))
            if lines and o is not None and S.shape[-1] == S.shape[-2] and close(o, torch.einsum("bhkv,bhv->bhk", S, q)):
                return [Line("mistake_transposed_read"), *lines]
            return lines
        out.append(Case(name, hidden, {"S": S, "q": q}, [call("read", "read", "S", "q")], check))
    return out


# -- 2. one token's four stages ------------------------------------------------------------------------------

STAGES = (("decayed", "decay", ("K", "V")), ("prediction", "read", ("V",)), ("error", "error", ("V",)),
          ("S_new", "write", ("K", "V")))


def four_stage_cases(gen: torch.Generator) -> list[Case]:
    t = lambda x: torch.tensor(x, dtype=F64)
    K = int(torch.randint(2, 5, (1,), generator=gen))
    V = K + 1
    rand = lambda *s: torch.randn(*s, generator=gen, dtype=F64)
    examples = [
        (Line("case_stages_memory"), False, t([[3, 1], [-1, 2]]), t([1, 0]), t([5, 0]), 0.5, 1.0),
        (Line("case_stages_half"), False, t([[3, 1], [-1, 2]]), t([0.6, 0.8]), t([2, 0]), 0.9, 0.5),
        (Line("case_random", {"shapes": shapes(K=K, V=V)}), True, rand(K, V), unit(rand(K)), rand(V),
         float(0.5 + 0.5 * torch.rand(1, generator=gen)), float(0.2 + 0.6 * torch.rand(1, generator=gen))),
        (Line("case_random", {"shapes": shapes(K=3, V=3)}), True, rand(3, 3), unit(rand(3)), rand(3), 0.8, 0.6)]
    out = []
    for name, hidden, S, k, v, alpha, beta in examples:
        def check(got, S=S, k=k, v=v, alpha=alpha, beta=beta):
            values, wants = got("step"), ref.four_stages(S, k, v, alpha, beta)
            if len(values) != 4:
                return [Line("count", {"got": len(values), "want": 4, "names": "decayed, prediction, error, S_new"})]
            for (label, stage, axes), mine, want in zip(STAGES, values, wants):
                lines = value_lines(label, mine, want, axes)
                if lines:
                    named = stage_mistakes(label, mine, S, k, v, alpha, beta, wants)
                    return [Line("where_stage", {"stage": stage_word(stage)}), *named, *lines]
            return []
        out.append(Case(name, hidden, {"S": S, "k": k, "v": v}, [call("step", "step", "S", "k", "v", alpha, beta)], check))
    return out


def stage_mistakes(label: str, mine, S, k, v, alpha, beta, wants) -> list[Line]:
    decayed, prediction, error, _ = wants
    if label == "prediction" and close(mine, S.T @ k):
        return [Line("mistake_read_before_decay")]
    if label == "error" and close(mine, -error):
        return [Line("mistake_error_sign")]
    if label == "error" and close(mine, beta * error):
        return [Line("mistake_beta_in_error")]
    if label == "S_new" and close(mine, decayed + torch.outer(k, beta * v - prediction)):
        return [Line("mistake_beta_on_v")]
    if label == "S_new" and S.shape[0] == S.shape[1] and close(mine, decayed + beta * torch.outer(error, k)):
        return [Line("mistake_transposed_write")]
    return []


# -- 3. the gates ---------------------------------------------------------------------------------------------

def gate_cases(gen: torch.Generator) -> list[Case]:
    t = lambda x: torch.tensor(x, dtype=F64)
    B, T, H = 1 + int(torch.randint(0, 2, (1,), generator=gen)), 3 + int(torch.randint(0, 4, (1,), generator=gen)), 4
    examples = [(Line("case_gates_example"), False, t([[[0.0, 2.0], [-1.0, 0.5]]]), t([[[0.0, 3.0], [-2.0, 1.0]]]),
                 t([0.0, 1.0]), t([1.0, -0.5]), 0.5),
                (Line("case_random", {"shapes": shapes(B=B, T=T, H=H)}), True, torch.randn(B, T, H, generator=gen, dtype=F64),
                 torch.randn(B, T, H, generator=gen, dtype=F64), torch.log(1 + 15 * torch.rand(H, generator=gen, dtype=F64)),
                 torch.randn(H, generator=gen, dtype=F64), float(0.8 + 0.19 * torch.rand(1, generator=gen)))]
    out = []
    for name, hidden, a, b, A_log, dt_bias, alpha in examples:
        def check(got, a=a, b=b, A_log=A_log, dt_bias=dt_bias, alpha=alpha):
            g_want, beta_want = ref.gates(a, b, A_log, dt_bias)
            values = got("gates")
            if len(values) != 2:
                return [Line("count", {"got": len(values), "want": 2, "names": "g, beta"})]
            g, beta = values
            lines = value_lines("g", g, g_want, ("B", "T", "H")) + value_lines("beta", beta, beta_want, ("B", "T", "H"))
            lines = (gate_mistakes(g, beta, a, b, A_log, dt_bias) if lines else []) + lines
            lives = got("half_life")
            if len(lives) != 1:
                return lines + [Line("count", {"got": len(lives), "want": 1, "names": "half_life"})]
            life = lives[0]
            want = torch.tensor(ref.half_life(alpha), dtype=F64)
            one = life is not None and life.numel() == 1
            life_lines = value_lines("half_life", life.reshape(()) if one else life, want, ())
            if life_lines and one:
                life_lines = half_life_mistakes(float(life.reshape(-1)[0]), alpha) + life_lines
            return lines + life_lines
        out.append(Case(name, hidden, {"a": a, "b": b, "A_log": A_log, "dt_bias": dt_bias},
                        [call("gates", "gates", "a", "b", "A_log", "dt_bias"), call("half_life", "half_life", alpha)], check))
    return out


def gate_mistakes(g, beta, a, b, A_log, dt_bias) -> list[Line]:
    sp = torch.nn.functional.softplus(a + dt_bias)
    lines = []
    if g is not None and g.shape == a.shape:
        if (g > 0).any():
            lines.append(Line("mistake_g_sign"))
        elif close(g, -A_log * sp):
            lines.append(Line("mistake_no_exp"))
        elif close(g, -A_log.exp() * (a + dt_bias)):
            lines.append(Line("mistake_no_softplus"))
    if beta is not None and beta.shape == b.shape and close(beta, b):
        lines.append(Line("mistake_no_sigmoid"))
    return lines


def half_life_mistakes(mine: float, alpha: float) -> list[Line]:
    import math
    if abs(mine - 1 / (1 - alpha)) < 1e-6 * (1 + abs(mine)):
        return [Line("mistake_half_life_mean")]
    if abs(mine - (-1 / math.log(alpha))) < 1e-6 * (1 + abs(mine)):
        return [Line("mistake_half_life_efold")]
    return []


# -- 4. the whole recurrence (the chapter's exercise) -------------------------------------------------------

def recurrence_cases(gen: torch.Generator) -> list[Case]:
    small = sequence(gen, 1, 4, 1, 2, 2, with_state=False)
    wide = sequence(gen, 1, 5, 2, 3, 4, with_state=True)
    B, T, H, K, V = random_dims(gen)
    B2, T2, H2, K2, _ = random_dims(gen, K_is_V=True)
    B3, T3, H3, K3, V3 = random_dims(gen)
    plans = [(Line("case_rec_small"), False, small), (Line("case_rec_wide"), False, wide),
             (Line("case_random", {"shapes": shapes(B=B, T=T, H=H, K=K, V=V)}), True,
              sequence(gen, B, T, H, K, V, with_state=True)),
             (Line("case_random", {"shapes": shapes(B=B2, T=T2, H=H2, K=K2, V=K2)}), True,
              sequence(gen, B2, T2, H2, K2, K2, with_state=True)),
             (Line("case_random_f32", {"shapes": shapes(B=B3, T=T3, H=H3, K=K3, V=V3)}), True,
              sequence(gen, B3, T3, H3, K3, V3, with_state=True, dtype=torch.float32))]
    return [recurrence_case(name, hidden, x) for name, hidden, x in plans]


def recurrence_case(name: Line, hidden: bool, x: dict) -> Case:
    T = x["v"].shape[1]
    S0 = "S" if "S" in x else None
    prefixes = {f"p{t}": {n: v[:, :t] for n, v in x.items() if n != "S"} for t in range(1, T)}   # tokens < t
    inputs = dict(x) | {f"{p}_{n}": v for p, part in prefixes.items() for n, v in part.items()}
    calls = [call("all", "delta_rule", "q", "k", "v", "g", "beta", S0)]
    calls += [call(p, "delta_rule", *(f"{p}_{n}" for n in SEQUENCE), S0) for p in prefixes]

    def check(got):
        values = got("all")
        if len(values) != 2:
            return [Line("count", {"got": len(values), "want": 2, "names": "o, S"})]
        o_want, S_want = ref.delta_rule(*(x[n] for n in SEQUENCE), x.get("S"))
        lines = value_lines("o", values[0], o_want, O_AXES) + value_lines("S", values[1], S_want, S_AXES)
        dtype = got.kinds("all")[0]
        want_dtype = "tensor:" + str(x["v"].dtype).removeprefix("torch.")
        if dtype.startswith("tensor:") and dtype != want_dtype:
            lines.append(Line("dtype", {"got": dtype[7:], "want": want_dtype[7:]}))
        if not lines or any(line.key.startswith("shape") for line in lines):
            return lines
        return locate(x, [returned(got, p) for p in prefixes] + [values], lines)

    return Case(name, hidden, inputs, calls, check)


def returned(got, call: str) -> list:
    """What a helper call returned (a prefix run, the chunk exercise's own recurrence), or nothing when it
    raised: the test's own numbers are still said."""
    try:
        return got(call)[:2]
    except CallFailed:
        return []


def locate(x: dict, runs: list[list], lines: list[Line]) -> list[Line]:
    """The first token where the learner's runs over growing prefixes leave the reference, and why."""
    T = x["v"].shape[1]
    seq = [x[n] for n in SEQUENCE]
    reference = [ref.delta_rule(*(s[:, :t] for s in seq), x.get("S")) for t in range(1, T + 1)]
    mine = [tuple(run) if len(run) == 2 else (None, None) for run in runs]
    t = first_wrong_token(mine, reference)
    if t is None:
        return lines
    S_prev = x["S"].to(F64) if t == 0 and "S" in x else (
        torch.zeros_like(reference[0][1]) if t == 0 else reference[t - 1][1])
    o_t = mine[t][0][:, t] if mine[t][0] is not None and mine[t][0].shape == reference[t][0].shape else None
    S_t = mine[t][1] if mine[t][1] is not None and mine[t][1].shape == reference[t][1].shape else None
    if t == 0 and "S" in x and S_t is not None and close(S_t, ref.delta_rule(*(s[:, :1] for s in seq))[1]):
        return [Line("where", {"t": 1, "stage": stage_word("carry")}), Line("mistake_state_ignored"), *lines]
    return token_lines(t, S_prev, {n: v.to(F64) for n, v in x.items()}, S_t, o_t) + lines


# -- 5. carrying the table across calls (streaming) ------------------------------------------------------

def stream_cases(gen: torch.Generator) -> list[Case]:
    B, _, H, K, V = random_dims(gen)
    sizes = [int(s) for s in torch.randint(1, 4, (3,), generator=gen)]
    plans = [(Line("case_stream_small", {"pieces": "3 + 3"}), False, sequence(gen, 1, 6, 1, 2, 2, False), [3, 3]),
             (Line("case_stream_random", {"shapes": shapes(B=B, H=H, K=K, V=V), "pieces": " + ".join(map(str, sizes))}),
              True, sequence(gen, B, sum(sizes), H, K, V, False), sizes)]
    return [stream_case(name, hidden, x, sizes) for name, hidden, x, sizes in plans]


def stream_case(name: Line, hidden: bool, x: dict, sizes: list[int]) -> Case:
    bounds = [sum(sizes[:i]) for i in range(len(sizes) + 1)]
    inputs = {f"{n}{i}": x[n][:, a:b] for i, (a, b) in enumerate(zip(bounds, bounds[1:])) for n in SEQUENCE}
    args = [f"{n}{i}" for i in range(len(sizes)) for n in SEQUENCE]

    def check(got):
        pieces = got("feed")
        if len(pieces) != len(sizes):
            return [Line("count", {"got": len(pieces), "want": len(sizes), "names": "o"})]
        o_want, _ = ref.delta_rule(*(x[n] for n in SEQUENCE))
        for i, (a, b) in enumerate(zip(bounds, bounds[1:])):
            lines = value_lines("o", pieces[i], o_want[:, a:b], O_AXES)
            if lines:
                return [Line("stream_piece", {"piece": i + 1}), *stream_why(x, pieces[i], a, b, o_want), *lines]
        return []

    return Case(name, hidden, inputs, [call("feed", "Stream", *args, kind="stream", width=len(SEQUENCE))], check)


def stream_why(x: dict, piece, a: int, b: int, o_want) -> list[Line]:
    """A piece after the first that equals a run from an empty table: the table was not carried."""
    if piece is None or piece.shape != o_want[:, a:b].shape:
        return []
    wrong = [t for t in range(b - a) if not close(piece[:, t], o_want[:, a + t])]
    fresh, _ = ref.delta_rule(*(x[n][:, a:b] for n in SEQUENCE))
    if a > 0 and close(piece, fresh):
        return [Line("where", {"t": a + 1, "stage": stage_word("carry")}), Line("mistake_state_not_carried")]
    return [Line("where_token", {"t": a + wrong[0] + 1})] if wrong else []


# -- 6. one chunk of the chunked form -----------------------------------------------------------------------

def chunk_cases(gen: torch.Generator) -> list[Case]:
    def head(C, K, V):
        r = lambda *s: torch.randn(*s, generator=gen, dtype=F64)
        return {"q": unit(r(C, K)) * K ** -0.5, "k": unit(r(C, K)), "v": r(C, V),
                "g": torch.log(0.6 + 0.4 * torch.rand(C, generator=gen, dtype=F64)),
                "beta": 0.2 + 0.7 * torch.rand(C, generator=gen, dtype=F64), "S": 0.5 * r(K, V)}
    plans = [(False, 4, 2, 2), (True, 8, 3, 4), (True, 16, 4, 2)]
    out = []
    for hidden, C, K, V in plans:
        x, args, dims = head(C, K, V), HEAD_ARGS, {"shapes": shapes(C=C, K=K, V=V)}
        want = ref.head_recurrence(*(x[n] for n in args))
        out.append(Case(Line("case_own_recurrence", dims), hidden, x, [call("rec", "recurrence", *args)],
                        lambda got, want=want: head_lines(got("rec"), want)))
        out.append(Case(Line("case_chunk", dims), hidden, x, [call("rec", "recurrence", *args), call("chunk", "chunk", *args)],
                        lambda got, x=x, want=want: chunk_lines(got, x, want)))
    return out


def head_lines(values: list, want: tuple) -> list[Line]:
    if len(values) != 2:
        return [Line("count", {"got": len(values), "want": 2, "names": "o, S"})]
    return value_lines("o", values[0], want[0], ("C", "V")) + value_lines("S", values[1], want[1], ("K", "V"))


def chunk_lines(got, x: dict, want: tuple) -> list[Line]:
    lines = head_lines(got("chunk"), want)
    if not lines or any(line.key.startswith(("shape", "count")) for line in lines):
        return lines
    o, S = got("chunk")[:2]
    for mistake in ref.CHUNK_MISTAKES:
        o_m, S_m = ref.head_chunk(*(x[n] for n in HEAD_ARGS), mistake=mistake)
        if close(o, o_m) and close(S, S_m):
            return [Line(f"mistake_{mistake}"), *lines]
    wrong = [t for t in range(o.shape[0]) if not close(o[t], want[0][t])]
    mine = returned(got, "rec")                     # the learner's own recurrence, if it ran
    where = [Line("where_token", {"t": wrong[0] + 1})] if wrong else []
    same = [Line("chunk_matches_yours")] if len(mine) == 2 and close(o, mine[0]) and close(S, mine[1]) else []
    return where + lines + same


