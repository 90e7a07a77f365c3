"""Classroom content as data: predict-then-reveal exercises (docs/teaching-content.md §10), the live demo
that proves each answer, the history timeline (§11 there) and the glossary. Words live in the i18n
tables under classroom.*; this module only says which option is right and where the demo is.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from gdn.lessons import cost


@dataclass(frozen=True)
class Demo:
    """A stop of the learning path and what it should show: `page` is the stop's name ("memory",
    "compare", "cost", "playground": the nav.<page> strings) and `settings` its controls by their own
    names (preset, t, stage, ...). The app resolves both to a page file and widget keys; this module
    knows neither."""
    page: str
    settings: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Exercise:
    id: str
    n_options: int
    answer: int          # index of the right option
    demo: Demo
    fields: Callable[[], dict] = dict   # the {fields} of its question, options and explanation


def crossover_fields(model: str = "Qwen3.5-0.8B") -> dict:
    """The crossover exercise's numbers, from the released config in assets/qwen35_sizes.json: the
    state and KV sizes it multiplies out, the answer n (tokens) and two wrong options (n / 4, 16 n)."""
    cfg = cost.load_sizes()[model]
    n = cost.crossover_tokens(cfg)
    tokens = lambda x: f"{x:,.0f}"
    per_layer = cost.layer_memory(cfg)
    return {"model": model, "HV": cfg["linear_num_value_heads"], "K": cfg["linear_key_head_dim"],
            "V": cfg["linear_value_head_dim"], "state": cost.fmt_bytes(per_layer["state"]),
            "s": per_layer["element_bytes"], "dtype": per_layer["dtype"],
            "Hkv": cfg["num_key_value_heads"], "hd": cfg["head_dim"], "kv": cost.fmt_bytes(per_layer["kv_per_token"]),
            "n": tokens(n), "quarter": tokens(n / 4), "times16": tokens(16 * n)}


# Hand-made one-head streams, not a real model's head: with no "K" (a real head's size) in the payload,
# the memory page labels them as classroom examples.
# The alpha = 0 question: two pairs stored, then a token with alpha = 0.
ALPHA_ZERO_STREAM = {"title": "α = 0", "tokens": ["k₁→(3,1)", "k₂→(−1,2)", "α=0: k₁→(5,0)"],
                     "k": [[1, 0], [0, 1], [1, 0]], "v": [[3, 1], [-1, 2], [5, 0]],
                     "q": [[1, 0], [0, 1], [0, 1]], "alpha": [1, 1, 0], "beta": [1, 1, 1]}
# beta = 0.5 on a unit key: the readout moves halfway from the old row to v.
HALF_BETA_STREAM = {"title": "β = 0.5", "tokens": ["k→(1,1)", "β=0.5: k→(3,4)"],
                    "k": [[1, 0], [1, 0]], "v": [[1, 1], [3, 4]], "q": [[1, 0], [1, 0]],
                    "alpha": [1, 1], "beta": [1, 0.5]}

EXERCISES = [
    Exercise("alpha_zero", 4, 2, Demo("memory", {
        "replay": ALPHA_ZERO_STREAM, "preset": "replay", "t": 3, "stage": "write"})),
    Exercise("beta_zero", 3, 1, Demo("memory", {"preset": "write_read_2d", "t": 3, "stage": "query"})),
    Exercise("no_error", 3, 0, Demo("compare", {"preset": "k1_update"})),
    Exercise("transpose", 3, 1, Demo("compare", {"bug_dk": 2, "bug_dv": 3})),
    Exercise("crossover", 4, 1, Demo("cost"), crossover_fields),
    Exercise("unit_key", 4, 0, Demo("memory", {"preset": "unit_overwrite", "t": 1, "stage": "query"})),
    Exercise("half_beta", 4, 2, Demo("memory", {
        "replay": HALF_BETA_STREAM, "preset": "replay", "t": 2, "stage": "query"})),
    Exercise("extreme_heads", 3, 2, Demo("playground", {"panel": "halflife"})),
]

# (year, event, the paper's arXiv id): shown as plain links, nothing is fetched.
TIMELINE = [("2021", "fwp", "2102.11174"),         # Schlag, Irie, Schmidhuber: linear transformers are fast weight programmers
            ("2024", "parallel", "2406.06484"),    # Yang et al.: parallelizing linear transformers with the delta rule
            ("2024-12", "gdn", "2412.06464"),      # Yang, Kautz, Hatamizadeh: Gated Delta Networks
            ("2025", "hybrid", "2510.26692")]      # Kimi Linear (KDA); Qwen3-Next / Qwen3.5 have no paper of their own


def arxiv_url(arxiv_id: str) -> str:
    return f"https://arxiv.org/abs/{arxiv_id}"
GLOSSARY = ["memory_table", "decay", "beta", "key_value_query", "outer_product", "delta_rule",
            "linear_attention", "half_life", "chunking", "wy", "kv_cache", "hybrid", "l2norm",
            "gated_norm", "conv"]
NOTES_PAGES = ["start", "memory", "playground", "compare", "cost", "chunking", "real_model"]   # the learning path
NOTES_FIELDS = {"cost": crossover_fields}      # page -> the {fields} its teacher notes state
