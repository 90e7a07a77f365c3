"""Interventions on the gates, as trace and the page's replays take them: set_alpha / set_beta,
{(layer, head or None): value in [0, 1]}, checked against the config and grouped by layer.

Its own module (not model.py's): the analysis of a checkpoint replays a layer under them, and the model
reaches the analysis through sources; with the check in model.py that was an import cycle.
"""
from __future__ import annotations

import numbers

from gdn.qwen35.config import Qwen35Config
from gdn.qwen35.layers import GateOverride


def gate_overrides(cfg: Qwen35Config, set_alpha: dict | None = None, set_beta: dict | None = None,
                   last: int | None = None) -> dict[int, GateOverride]:
    """Check trace's set_alpha / set_beta and group them by layer: {layer: GateOverride}. last: the
    last layer that runs (None: all). Raises ValueError naming the bad entry and what would be accepted."""
    last = cfg.num_hidden_layers - 1 if last is None else last
    tables: dict[int, tuple[dict, dict]] = {}
    for name, given in (("set_alpha", set_alpha), ("set_beta", set_beta)):
        if given is None:
            continue
        if not isinstance(given, dict):
            raise ValueError(f"{name} must be a dict {{(layer, head or None): value}}, got {type(given).__name__}")
        for key, value in given.items():
            layer, head = _check_gate_key(cfg, name, key, last)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= float(value) <= 1.0:
                raise ValueError(f"{name}[{key!r}] must be a number in [0, 1], got {value!r}")
            tables.setdefault(layer, ({}, {}))[name == "set_beta"][head] = float(value)
    return {layer: GateOverride(alpha=a, beta=b) for layer, (a, b) in tables.items()}


def _check_gate_key(cfg: Qwen35Config, name: str, key, last: int) -> tuple[int, int | None]:
    gdn = list(cfg.gdn_layers)
    if not (isinstance(key, tuple) and len(key) == 2):
        raise ValueError(f"{name} keys must be (layer, head) pairs (head None = all heads), got {key!r}")
    layer, head = key
    if isinstance(layer, bool) or not isinstance(layer, numbers.Integral) or int(layer) not in gdn:
        raise ValueError(f"{name}: layer {layer!r} is not a Gated DeltaNet layer; α and β exist in layers {gdn}")
    layer = int(layer)
    if layer > last:
        raise ValueError(f"{name}: layer {layer} is not run (upto_layer={last})")
    HV = cfg.linear_num_value_heads
    if head is not None and (isinstance(head, bool) or not isinstance(head, numbers.Integral) or not 0 <= head < HV):
        raise ValueError(f"{name}: head must be a value-head index in 0..{HV - 1} or None (all heads), got {head!r}")
    return layer, None if head is None else int(head)
