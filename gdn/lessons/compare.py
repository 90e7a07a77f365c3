"""Linear attention, DeltaNet and Gated DeltaNet on the same stream, for side-by-side comparison.

Each rule is data (Rule: does it decay, does it use the delta rule, its colour; RULES lists them), and all
fill the same StepRecords (gdn.lessons.stream), so one figure draws any of them:
    linear attention  S_t = S_{t-1} + k_t (beta_t v_t)^T            (no read, no forgetting)
    DeltaNet          S_t = S_{t-1} + k_t (beta_t (v_t - S_{t-1}^T k_t))^T     (alpha ignored)
    Gated DeltaNet    S_t = a_t S_{t-1} + k_t (beta_t (v_t - a_t S_{t-1}^T k_t))^T
For linear attention the "prediction" is zero (the rule never reads before writing) and the
"error" it writes is the value itself. Plus the transpose-bug variant of the write (teaching §6),
and the compare page's presets (teaching §3): the k1 update and the city-update story.

Variants (teaching §6-7): beta per value channel, alpha per key dim (Kimi's KDA), and one stream fed in
two calls with the state carried or reset.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import torch

from gdn.lessons.memory import k1_update
from gdn.lessons.stream import StepRecords, Stream, check_stream, kernel_args, step_records
from gdn.ops import chunk_gated_delta_rule
from gdn.rules import RULE_COLORS


@dataclass(frozen=True)
class Rule:
    """One update rule of the page, as data: the page steps every rule of RULES side by side, and the
    playground's closed forms and the figures' colours read these properties, never the name.
    Its strings: compare.rule_short_<name> (what it is called) and compare.rule_<name> (its update as a
    formula), in assets/i18n/{zh,en}/compare.json."""
    name: str
    decays: bool        # S <- alpha S before each token; otherwise alpha is ignored (alpha = 1)
    delta: bool         # reads S^T k first and writes only the error beta (v - S^T k); otherwise writes beta v
    colour: str         # its lines and marks wherever rules are coloured
    dash: str = ""      # an SVG dash pattern, for a line that can lie on another rule's (gdn on deltanet at alpha = 1)

    def records(self, s: Stream) -> StepRecords:
        """This rule's update on stream s, token by token:
        S_t = a_t S_{t-1} + k_t (beta_t (v_t - [delta] a_t S_{t-1}^T k_t))^T, a_t = alpha_t if it decays, else 1."""
        s = s if self.decays else replace(s, alpha=np.ones_like(s.alpha))
        return step_records(s) if self.delta else additive_records(s)


def additive_records(s: Stream) -> StepRecords:
    """S_t = alpha_t S_{t-1} + k_t (beta_t v_t)^T as step records: the rule never reads before writing,
    so its prediction is 0 and the "error" it writes is the value itself."""
    check_stream(s)
    T, K, V = s.shape
    beta = s.beta if s.beta.ndim == 2 else s.beta[:, None] * np.ones(V)      # [T, V]
    alpha = s.alpha if s.alpha.ndim == 2 else s.alpha[:, None] * np.ones(K)  # [T, K]
    S, rows = s.S0.astype(np.float64), []
    for t in range(T):
        decayed = alpha[t][:, None] * S                                       # [K, V]
        write = np.outer(s.k[t], beta[t] * s.v[t])                           # [K, V]
        new = decayed + write
        rows.append((S, decayed, np.zeros(V), s.v[t].astype(float), write, new, new.T @ s.q[t]))
        S = new
    names = ("S_prev", "S_decayed", "prediction", "error", "write", "S_new", "output")
    arrays = {n: np.array([r[i] for r in rows]) for i, n in enumerate(names)}
    return StepRecords(stream=s, **arrays)


# The page's rules, in its order (name -> Rule). A new rule is one line here and its two strings.
RULES: dict[str, Rule] = {r.name: r for r in (
    Rule("linear", decays=False, delta=False, colour=RULE_COLORS["linear"]),
    Rule("deltanet", decays=False, delta=True, colour=RULE_COLORS["deltanet"]),
    Rule("gdn", decays=True, delta=True, colour=RULE_COLORS["gdn"], dash="7 5"),
)}


def rule_of(name: str) -> Rule:
    """The Rule called name; an unknown name is a ValueError that lists the known ones."""
    if name not in RULES:
        raise ValueError(f"rule must be one of {tuple(RULES)}, got {name!r}")
    return RULES[name]


def run_rule(rule: str, s: Stream) -> StepRecords:
    """The step records of one rule on stream s (alpha only matters for rules that decay)."""
    return rule_of(rule).records(s)


def run_all(s: Stream) -> dict[str, StepRecords]:
    return {rule: run_rule(rule, s) for rule in RULES}


def readout_error(rec: StepRecords, target: np.ndarray) -> np.ndarray:
    """[T] distance ||o_t - target_t|| between what the memory answers and what it should."""
    return np.linalg.norm(rec.output - target, axis=1)


def disagreements(errors: dict[str, np.ndarray], tol: float = 0.05) -> np.ndarray:
    """[T] bool: the tokens at which the rules' readout errors (readout_error, one [T] array per rule)
    differ by more than tol, i.e. where the choice of rule changes what the memory answers."""
    stacked = np.stack(list(errors.values()))                       # [rules, T]
    return stacked.max(axis=0) - stacked.min(axis=0) > tol


def gated_final_state(s: Stream, *, transpose_bug: bool = False) -> np.ndarray:
    """Final S of the gated delta rule written the way kernel code writes it, with broadcasting.

    The correct write is k[:, None] * e[None, :]  ->  [K, 1] * [1, V] = [K, V].
    The bug swaps the two unsqueezes: k[None, :] * e[:, None] -> [V, K]. With K == V the sum
    S + [V, K] still has the right shape and silently stores the transpose; with K != V numpy
    raises ValueError ("operands could not be broadcast together"), which callers may show.
    """
    check_stream(s)
    S = s.S0.astype(np.float64)                                        # [K, V]
    for t in range(s.shape[0]):
        S = (s.alpha[t][:, None] if np.ndim(s.alpha[t]) else s.alpha[t]) * S   # per head, or per key dim (KDA)
        e = s.beta[t] * (s.v[t] - S.T @ s.k[t])                         # [V]
        write = (s.k[t][None, :] * e[:, None]) if transpose_bug else (s.k[t][:, None] * e[None, :])
        S = S + write                                                   # [K, V], or fails
        if S.shape != s.S0.shape:                                       # K or V == 1 broadcasts silently
            raise ValueError(f"the state changed shape from {s.S0.shape} to {S.shape}")
    return S


# ---- compare-page presets -------------------------------------------------------------------

@dataclass(frozen=True)
class ComparePreset:
    """A stream plus what a correct memory should return at each token.

    target: [T, V] the value the query should retrieve (the latest value written under that key);
    values, value_labels: labelled value vectors [L, V] and their names (i18n keys compare.label_<name>),
    empty for presets whose values are plain numbers. Token captions are i18n keys compare.tok_<preset>_<t>."""
    stream: Stream
    target: np.ndarray
    values: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    value_labels: tuple[str, ...] = ()


def k1_compare() -> ComparePreset:
    """teaching §3: k1->(3,1), k2->(-1,2), then k1->(5,0) with alpha = 0.5; token 3 reads k2.
    Reading k1 at token 2 gives (8,1) / (5,0) / (5,0); k2 reads (-1,2) / (-1,2) / (-0.5,1)."""
    s = k1_update()
    return ComparePreset(stream=s, target=np.array([[3, 1], [-1, 2], [5, 0], [-1, 2]], dtype=float))


CITY_LABELS = ("hangzhou", "shanghai", "teacher", "doctor")


def city_story() -> ComparePreset:
    """"user's city" = Hangzhou, "user's job" = teacher, then the city changes to Shanghai
    (alpha = 0.7 on that token: the gate fades stale facts), then both keys are asked."""
    values = np.eye(4)                                                  # one unit vector per label
    k_city, k_job = np.array([1.0, 0, 0]), np.array([0, 1.0, 0])
    k = np.stack([k_city, k_job, k_city, k_city, k_job])                # [T=5, K=3]
    v = np.stack([values[0], values[2], values[1], np.zeros(4), np.zeros(4)])
    s = Stream(k=k, v=v, q=k.copy(), alpha=np.array([1, 1, 0.7, 1, 1.0]),
               beta=np.array([1, 1, 1, 0, 0.0]), S0=np.zeros((3, 4)))
    target = np.stack([values[0], values[2], values[1], values[1], values[2]])
    return ComparePreset(stream=s, target=target, values=values, value_labels=CITY_LABELS)


COMPARE_PRESETS = {"k1_update": k1_compare, "city": city_story}


def nearest_labels(x: np.ndarray, values: np.ndarray, n: int = 2) -> list[tuple[int, float]]:
    """The n labelled vectors most similar to readout x, as (index, cosine similarity), best first.
    x: [V]; values: [L, V]. A zero readout is similar to nothing: []."""
    norm = np.linalg.norm(x)
    if norm < 1e-12:
        return []
    sims = values @ x / (np.linalg.norm(values, axis=1) * norm)        # [L]
    order = np.argsort(-np.round(sims, 12), kind="stable")[:n]
    return [(int(i), float(sims[i])) for i in order]


def bug_stream(K: int, V: int, T: int = 4, seed: int = 0) -> Stream:
    """A small random gated stream for the transpose-bug demo (unit keys, alpha 0.9, beta 0.8)."""
    rng = np.random.default_rng(seed)
    k = rng.normal(size=(T, K))
    k /= np.linalg.norm(k, axis=1, keepdims=True)                      # [T, K]
    return Stream(k=np.round(k, 2), v=np.round(rng.normal(size=(T, V)), 1), q=np.round(k, 2),
                  alpha=np.full(T, 0.9), beta=np.full(T, 0.8), S0=np.zeros((K, V)))


# ---- variants (docs/teaching-content.md §6): the same stream, one rule changed --------------------------

VARIANTS = ("rules", "beta_channel", "kda", "stream")


@dataclass(frozen=True)
class VariantPreset:
    """Versions of one stream that differ in one gate, run side by side (column titles: i18n keys
    compare.col_<name>; token captions: compare.tok_<variant>_<t>). target: [T, V] what the story wants read."""
    streams: dict[str, Stream]
    target: np.ndarray


def beta_channel_story() -> VariantPreset:
    """Key k1's value has two channels, (city, job). The user moves: token 2 brings city 5 and says nothing
    about the job. One beta per head (1) overwrites both channels, so the job is lost: k1 reads (5, 0).
    One beta per value channel, (1, 0), writes only the city channel: k1 reads (5, 1)."""
    k = np.array([[1.0, 0], [0, 1], [1, 0], [1, 0]])                     # [T=4, K=2]: k1, k2, k1, k1
    v = np.array([[3.0, 1], [-1, 2], [5, 0], [0, 0]])                    # [T, V=2]
    beta_head = np.array([1.0, 1, 1, 0])                                 # [T]
    beta_channel = np.array([[1.0, 1], [1, 1], [1, 0], [0, 0]])          # [T, V]: token 2 writes channel 0 only
    base = dict(k=k, v=v, q=k.copy(), alpha=np.ones(4), S0=np.zeros((2, 2)))
    return VariantPreset(streams={"beta_head": Stream(beta=beta_head, **base),
                                  "beta_channel": Stream(beta=beta_channel, **base)},
                         target=np.array([[3.0, 1], [-1, 2], [5, 1], [5, 1]]))


def kda_story() -> VariantPreset:
    """Two facts in one head, k1 -> (3, 1) and k2 -> (-1, 2); then a token that writes nothing but
    should keep k1 and drop k2. One alpha per head (Qwen3.5) can only fade both rows alike (0.5: k1 reads
    (1.5, 0.5), k2 (-0.5, 1)); one alpha per key dim (Kimi's KDA), (1, 0), keeps row k1 and clears row k2."""
    k = np.array([[1.0, 0], [0, 1], [1, 0], [0, 1]])                     # [T=4, K=2]
    v = np.array([[3.0, 1], [-1, 2], [0, 0], [0, 0]])                    # [T, V=2]
    base = dict(k=k, v=v, q=k.copy(), beta=np.array([1.0, 1, 0, 0]), S0=np.zeros((2, 2)))
    per_head = np.array([1.0, 1, 0.5, 1])                                # [T]
    per_dim = np.array([[1.0, 1], [1, 1], [1, 0], [1, 1]])               # [T, K]: token 2 keeps row k1, clears k2
    return VariantPreset(streams={"alpha_head": Stream(alpha=per_head, **base), "alpha_dim": Stream(alpha=per_dim, **base)},
                         target=np.array([[3.0, 1], [-1, 2], [3, 1], [0, 0]]))


VARIANT_PRESETS = {"beta_channel": beta_channel_story, "kda": kda_story}


@dataclass(frozen=True)
class TwoCalls:
    """One stream fed as one call, and as two calls split before token `cut`, through the real kernel.
    Outputs are [T, V] (call 1's tokens, then call 2's); states are the final tables [K, V]."""
    cut: int
    one_call: np.ndarray
    carried: np.ndarray       # call 2 starts from call 1's final state (output_final_state -> initial_state)
    reset: np.ndarray         # call 2 starts from a zero state: everything before `cut` is gone
    S_one: np.ndarray
    S_carried: np.ndarray
    S_reset: np.ndarray

    @property
    def max_diff(self) -> float:
        """max |carried - one call| over outputs and final state (float64: ~1e-16)."""
        return float(max(np.abs(self.carried - self.one_call).max(), np.abs(self.S_carried - self.S_one).max()))


def two_calls(s: Stream, cut: int) -> TwoCalls:
    """Feed s in one call, then in two calls split before token cut (1 <= cut < T), carrying or resetting
    the state between them (gdn.ops.chunk_gated_delta_rule: initial_state / output_final_state)."""
    T = s.shape[0]
    if not 1 <= cut < T:
        raise ValueError(f"cut must split the stream: 1 <= cut < {T}, got {cut}")
    (q, k, v), kw = kernel_args(s)
    S0 = kw.pop("initial_state")
    part = lambda sl, state: chunk_gated_delta_rule(q[:, sl], k[:, sl], v[:, sl], g=kw["g"][:, sl],
                                                    beta=kw["beta"][:, sl], scale=1.0, initial_state=state,
                                                    output_final_state=True)
    o_one, S_one = part(slice(0, T), S0)
    o_1, S_1 = part(slice(0, cut), S0)
    o_carry, S_carry = part(slice(cut, T), S_1)
    o_reset, S_reset = part(slice(cut, T), torch.zeros_like(S_1))
    cat = lambda a, b: np.concatenate([a[0, :, 0].numpy(), b[0, :, 0].numpy()])    # [T, V]
    return TwoCalls(cut=cut, one_call=o_one[0, :, 0].numpy(), carried=cat(o_1, o_carry), reset=cat(o_1, o_reset),
                    S_one=S_one[0, 0].numpy(), S_carried=S_carry[0, 0].numpy(), S_reset=S_reset[0, 0].numpy())
