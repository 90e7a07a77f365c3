"""Helpers for the Qwen3.5 tests: random checkpoints on disk and transformers as the outside oracle.

transformers is a dev-only dependency: it is imported here, never from gdn/.
"""
from __future__ import annotations

import contextlib
import math

import torch
from safetensors.torch import load_file, save_file

from gdn.qwen35.synth import text_config, write_checkpoint  # noqa: F401  (re-exported for the tests)


def rel_err(a: torch.Tensor, b: torch.Tensor) -> float:
    """max |a - b| / max |b|: one number per tensor, robust to entries near zero."""
    a, b = a.double(), b.double()
    return float((a - b).abs().max() / b.abs().max().clamp(min=1e-30))


@contextlib.contextmanager
def _capture_gates(module, store: list):
    """Wrap transformers' torch GDN kernels to record the g and beta each layer passes in."""
    saved = module.torch_chunk_gated_delta_rule, module.torch_recurrent_gated_delta_rule

    def wrap(fn):
        def inner(*args, **kwargs):
            store.append((kwargs["g"].detach().clone(), kwargs["beta"].detach().clone()))
            return fn(*args, **kwargs)
        return inner

    module.torch_chunk_gated_delta_rule, module.torch_recurrent_gated_delta_rule = map(wrap, saved)
    try:
        yield
    finally:
        module.torch_chunk_gated_delta_rule, module.torch_recurrent_gated_delta_rule = saved


@contextlib.contextmanager
def _override_gates(module, model, set_alpha: dict | None, set_beta: dict | None):
    """Inject gate interventions into transformers' own GDN layers: each layer's g and beta are replaced
    (per {(layer, head or None): value}, a whole-layer entry first) right before its kernel runs. With a
    g = -inf (alpha = 0) the recurrent torch kernel is used: the chunked one takes differences of
    cumulative sums and would turn -inf - (-inf) into NaN."""
    current = {}
    hooks = [layer.linear_attn.register_forward_pre_hook(lambda m, a, i=i: current.update(layer=i))
             for i, layer in enumerate(model.model.layers) if hasattr(layer, "linear_attn")]
    chunk, recurrent = module.torch_chunk_gated_delta_rule, module.torch_recurrent_gated_delta_rule

    def set_heads(x, table, to_x):
        for (layer, head), value in sorted((table or {}).items(), key=lambda kv: kv[0][1] is not None):
            if layer == current["layer"]:
                x[..., slice(None) if head is None else head] = to_x(value)
        return x

    def kernel(*args, g, beta, **kwargs):
        g = set_heads(g.clone(), set_alpha, lambda a: math.log(a) if a > 0 else -math.inf)
        beta = set_heads(beta.clone(), set_beta, float)
        return (recurrent if torch.isinf(g).any() else chunk)(*args, g=g, beta=beta, **kwargs)

    module.torch_chunk_gated_delta_rule = module.torch_recurrent_gated_delta_rule = kernel
    try:
        yield
    finally:
        module.torch_chunk_gated_delta_rule, module.torch_recurrent_gated_delta_rule = chunk, recurrent
        for h in hooks:
            h.remove()


def hf_reference(folder, ids: torch.Tensor, *, moe: bool = False, dtype=torch.float32, set_alpha=None,
                 set_beta=None) -> dict:
    """Run transformers' Qwen3.5 (or MoE) causal LM in `dtype` (float32 unless asked) on the checkpoint folder,
    with gate interventions (model.trace's set_alpha / set_beta) injected into its layers when given.

    Returns {"outputs": [L] of [T, D] residual streams, "g"/"beta": [n_gdn] of [T, HV] (the gates used),
    "logits": [T, vocab]}.
    """
    if moe:
        from transformers.models.qwen3_5_moe import modeling_qwen3_5_moe as mod
        cls = mod.Qwen3_5MoeForCausalLM
    else:
        from transformers.models.qwen3_5 import modeling_qwen3_5 as mod
        cls = mod.Qwen3_5ForCausalLM
    model = cls.from_pretrained(str(folder), dtype=dtype).eval()
    outputs, gates = [], []
    hooks = [layer.register_forward_hook(lambda m, i, o: outputs.append(o[0] if isinstance(o, tuple) else o))
             for layer in model.model.layers]
    try:
        with torch.no_grad(), _capture_gates(mod, gates), _override_gates(mod, model, set_alpha, set_beta):
            logits = model(ids[None], use_cache=False).logits[0]
    finally:
        for h in hooks:
            h.remove()
    return {"outputs": [o[0] for o in outputs], "g": [g[0] for g, _ in gates],
            "beta": [b[0].float() for _, b in gates], "logits": logits}


def rewrite(folder, edit) -> None:
    """Apply edit(dict of tensors) to the single-file checkpoint in folder (to build a broken one)."""
    path = folder / "model.safetensors"
    tensors = load_file(str(path))
    edit(tensors)
    save_file(tensors, str(path), metadata={"format": "pt"})
