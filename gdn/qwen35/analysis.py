"""What the real-model page asks of a Qwen3.5 checkpoint, built on the public API of gdn.qwen35.

    info = describe(folder)                 # sizes from config.json and the safetensors headers only
    run = gate_run(model, ids)              # every GDN layer's g and beta as numpy [L, T, HV]
    inputs = layer_inputs(model, ids, 4)    # one layer's kernel inputs (q, k, v, g, beta), on demand
    norms = layer_state_norms(inputs)       # that layer's ||S_t|| per token and head [T, HV]

Nothing here keeps per-token states: a run holds [L, T, HV] arrays, and one layer's q, k, v are
rebuilt when a page asks for a head's table, the kernel check or a replay.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from gdn.ops import state_norm_scan
from gdn.qwen35.checkpoint import DTYPE_BYTES, INDEX_FILE, read_header, read_index
from gdn.qwen35.config import Qwen35Config, load_config
from gdn.qwen35.errors import CheckpointError
from gdn.qwen35.filecaps import TOKENIZER_MAX_BYTES, read_json
from gdn.qwen35.interventions import gate_overrides
from gdn.qwen35.tokenizer import check_fits, json_id_count, script_keep


@dataclass(frozen=True)
class CheckpointInfo:
    config: Qwen35Config
    n_params: int           # text-decoder parameters (what load_model reads)
    read_bytes: int         # bytes of those tensors on disk
    disk_bytes: int         # size of every *.safetensors file (vision tower and MTP head included)
    n_tensors: int          # text-decoder tensors to read
    n_files: int

    @property
    def gdn_layers(self) -> list[int]:
        return list(self.config.gdn_layers)


def describe(folder: str | Path) -> CheckpointInfo:
    """Model size and what loading will read, from config.json, the headers and tokenizer.json (no tensor
    data). Everything the real-model page needs is checked here, so a folder that passes can be picked:
    ValueError (and only ValueError) for anything malformed, or for a model without a GDN layer."""
    folder = Path(folder)
    cfg = load_config(folder)
    last_gdn_layer(cfg)                                  # the page shows GDN layers: a model needs one
    files = sorted(folder.glob("*.safetensors"))
    if (folder / INDEX_FILE).is_file():
        files = sorted({*files, *(folder / n for n in set(read_index(folder).values()) if (folder / n).is_file())})
    n_params = read_bytes = n_tensors = 0
    for path in files:
        for _name, (shape, dtype, *_) in read_header(path).tensors.items():
            numel = math.prod(shape)
            n_params += numel
            read_bytes += numel * DTYPE_BYTES[dtype]
            n_tensors += 1
    if (folder / "tokenizer.json").is_file():
        # read as plain JSON under its cap, not built (the tokenizers library takes seconds for a large one;
        # json, a fraction of one, once per folder change: compute caches describe), so that a tokenizer of
        # another model is listed unusable with its reason instead of failing once picked
        raw = read_json(folder / "tokenizer.json", TOKENIZER_MAX_BYTES, "tokenizer.json", "tokenizer")
        check_fits(json_id_count(raw), cfg.vocab_size)
    return CheckpointInfo(cfg, n_params, read_bytes, sum(p.stat().st_size for p in files), n_tensors, len(files))


def last_gdn_layer(cfg: Qwen35Config) -> int:
    gdn = cfg.gdn_layers
    if not gdn:
        raise CheckpointError("no_gdn", "this checkpoint has no Gated DeltaNet (linear_attention) layer")
    return gdn[-1]


@dataclass
class GateRun:
    """Every GDN layer's gates for one prompt (numpy, small: L x T x HV floats each). The state norms
    are left out: they cost a scan per layer, and a page shows one layer's (layer_state_norms)."""
    layers: list[int]       # decoder-layer index of each GDN layer
    g: np.ndarray           # [L, T, HV] log decay <= 0 (alpha = exp g)
    beta: np.ndarray        # [L, T, HV] write strength in (0, 1)
    A: np.ndarray           # [L, HV] exp(A_log): each head's fixed forgetting speed
    dt_bias: np.ndarray     # [L, HV]


def gate_run(model, ids, kernel: str = "chunk") -> GateRun:
    """Trace the prompt up to the last GDN layer (the head and later layers are skipped: no logits)."""
    trace = model.trace(ids, kernel=kernel, upto_layer=last_gdn_layer(model.cfg))
    gdn = [lt for lt in trace.layers if lt.kind == "linear_attention"]
    attn = [model.model.layers[lt.index].linear_attn for lt in gdn]
    stack = lambda xs: np.stack([x.detach().float().numpy() for x in xs])
    return GateRun(layers=[lt.index for lt in gdn], g=stack(lt.g for lt in gdn), beta=stack(lt.beta for lt in gdn),
                   A=stack(a.A_log.float().exp() for a in attn), dt_bias=stack(a.dt_bias.float() for a in attn))


@dataclass
class LayerInputs:
    """One GDN layer's kernel inputs for a prompt, float32: q, k [1, T, HK, K], v [1, T, HV, V],
    g, beta [1, T, HV]; q and k before the kernel's L2 normalisation."""
    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    g: torch.Tensor
    beta: torch.Tensor

    def tensors(self) -> tuple[torch.Tensor, ...]:
        return self.q, self.k, self.v, self.g, self.beta

    def head(self, h: int) -> dict[str, np.ndarray]:
        """Value head h as numpy: q, k [T, K] (its key head), v [T, V], g, beta [T]."""
        kh = h // (self.v.shape[2] // self.k.shape[2])
        n = lambda x: x[0].float().numpy()
        return {"q": n(self.q[:, :, kh]), "k": n(self.k[:, :, kh]), "v": n(self.v[:, :, h]),
                "g": n(self.g[:, :, h]), "beta": n(self.beta[:, :, h])}


@torch.inference_mode()
def layer_inputs(model, ids, layer: int, *, set_alpha: dict | None = None, set_beta: dict | None = None) -> LayerInputs:
    """Rebuild layer `layer`'s q, k, v, g, beta: trace the layers before it, then the layer's projections.
    set_alpha / set_beta: interventions as trace takes them, {(layer, head or None): value}. Those on earlier
    layers change what reaches this one; those on this layer replace its gates (so a replay of an
    intervened run shows the constants it ran with); those on later layers cannot touch it and are left out."""
    if model.cfg.layer_types[layer] != "linear_attention":
        raise ValueError(f"layer {layer} is full attention: it has no gates")
    here = gate_overrides(model.cfg, *(_upto(given, layer) for given in (set_alpha, set_beta)), last=layer)
    if layer == 0:
        model.load_layers(0)
        x = model.embed(torch.as_tensor(list(ids), dtype=torch.long))                       # [T, D]
    else:
        before = {name: _upto(given, layer - 1) for name, given in (("set_alpha", set_alpha), ("set_beta", set_beta))}
        x = model.trace(ids, upto_layer=layer - 1, state_norms=False, **before).layers[-1].output   # [T, D]
    block = model.model.layers[layer]
    q, k, v, g, beta, _ = block.linear_attn.kernel_inputs(block.input_layernorm(x[None]), None,
                                                          here.get(layer))                  # [1, T, ...]
    return LayerInputs(q.float(), k.float(), v.float(), g.float(), beta.float())


def _upto(given: dict | None, last: int) -> dict | None:
    """The interventions of `given` on layers up to `last` (None when there are none)."""
    kept = {key: value for key, value in (given or {}).items() if isinstance(key, tuple) and key and key[0] <= last}
    return kept or None


def layer_state_norms(x: LayerInputs) -> np.ndarray:
    """||S_t||_F after every token, per value head: [T, HV] (one layer, without building S_t)."""
    norms, _ = state_norm_scan(x.k, x.v, x.g, x.beta)                   # [1, T, HV]
    return norms[0].numpy()


@dataclass
class StreamingRun:
    """One prompt through the model as one call, and as two calls split before token `cut`, with the
    state (every layer's GDN state, conv cache and KV cache) carried or reset between the calls.
    The next-token predictions are at the last token; probabilities in [0, 1]."""
    cut: int
    top_one: list[tuple[int, float]]        # top-3 (token id, probability) of the one-call run
    top_carried: list[tuple[int, float]]
    top_reset: list[tuple[int, float]]
    max_logit_diff: float                   # max |carried - one call| over call 2's logits, / max |logits|
    max_state_diff: float                   # max |carried - one call| over every GDN layer's final state


@torch.inference_mode()
def two_call_run(model, ids, cut: int, kernel: str = "chunk", same_script: bool = False) -> StreamingRun:
    """Feed ids in one call and in two (split before token cut), carrying the cache or starting over.
    same_script: the top-3 only among the tokens in the prompt's script (gdn.qwen35.predict.script_keep)."""
    ids = [int(i) for i in ids]
    if not 1 <= cut < len(ids):
        raise ValueError(f"cut must split the prompt: 1 <= cut < {len(ids)}, got {cut}")
    one = model.trace(ids, kernel=kernel)
    first = model.trace(ids[:cut], kernel=kernel)
    carried = model.trace(ids[cut:], kernel=kernel, cache=first.cache)
    reset = model.trace(ids[cut:], kernel=kernel)
    keep = script_keep(model, ids, one.logits.shape[-1]) if same_script else None
    ranked = lambda p: p if keep is None else p * keep
    top = lambda logits: [(int(i), float(p)) for p, i in
                          zip(*ranked(logits[-1].float().softmax(-1)).topk(min(3, logits.shape[-1])))]
    scale = max(float(one.logits.float().abs().max()), 1e-30)
    states = [(a.final_state - b.final_state).abs().max() for a, b in zip(one.layers, carried.layers)
              if a.kind == "linear_attention"]
    return StreamingRun(cut=cut, top_one=top(one.logits), top_carried=top(carried.logits), top_reset=top(reset.logits),
                        max_logit_diff=float((carried.logits.float() - one.logits[cut:].float()).abs().max()) / scale,
                        max_state_diff=float(max(states)))
