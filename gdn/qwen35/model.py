"""The Qwen3.5 text decoder (embeddings -> L hybrid layers -> final norm -> head) and its trace.

    model = load_model("assets/models/qwen35-demo-random")
    trace = model.trace(ids, kernel="chunk", upto_layer=None)

Modules are built on the meta device without random init and filled tensor by tensor from the
checkpoint, as views of its machine-wide read-only copy (gdn.qwen35.checkpoint, snapshot): every process
of a machine that loads a model shares one copy of its weights; layers are read on first use, so tracing the
first layers of a big model reads only those layers, and the embedding matrix is read whole only when
the tied head needs it (otherwise only the prompt's rows are read, per trace).
"""
from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

from gdn.ops import state_norm_scan
from gdn.qwen35.checkpoint import Checkpoint
from gdn.qwen35.config import Qwen35Config, load_config
from gdn.qwen35.interventions import gate_overrides
from gdn.qwen35.layers import KERNELS, RULES, DecoderLayer, GateOverride, GDNRecord, RMSNorm
from gdn.qwen35.sources import check_folder
from gdn.qwen35.tokenizer import load_tokenizer
from gdn.qwen35.trace import LayerTrace, Trace

SMALL_MODEL_BYTES = 1 << 30


@dataclass
class ModelCache:
    """Per-layer caches (GDNCache or KVCache) after `length` tokens; lets a later trace continue."""
    layers: list
    length: int


@dataclass
class LayerStep:
    """What one decoder layer did in TextModel.forward."""
    x_in: torch.Tensor          # [B, T, D] residual stream before the layer
    output: torch.Tensor        # [B, T, D] residual stream after it
    cache: object               # GDNCache or KVCache: continues the sequence
    record: GDNRecord | None    # g, beta (and k, v) of a GDN layer; None for full attention


class TextModel(nn.Module):
    """Embeddings -> decoder layers -> final norm. The one forward of the project: model.trace, the
    demo's training and its evidence (with the "linear" ablation) all run it."""

    def __init__(self, cfg: Qwen35Config, *, init: bool = True):
        """init=False leaves the embedding uninitialised (for a checkpoint to fill): its random normal_
        init, even on the meta device, imports torch._dynamo on first use (~1 s of a cold load)."""
        super().__init__()
        empty = None if init else torch.empty(cfg.vocab_size, cfg.hidden_size)
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size, _weight=empty)  # no scaling, no padding idx
        self.layers = nn.ModuleList(DecoderLayer(cfg, i) for i in range(cfg.num_hidden_layers))
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)

    def forward(self, ids: torch.Tensor, *, kernel: str = "chunk", rule: str = "gdn", caches=None,
                upto_layer: int | None = None, embeds: torch.Tensor | None = None,
                overrides: dict | None = None) -> tuple[torch.Tensor, list[LayerStep]]:
        """ids: [B, T] token ids. Runs layers 0..upto_layer (all when None), each continuing from
        caches[i] when given. Returns the residual stream after the last layer run [B, T, D] (not
        normed) and one LayerStep per layer. rule="linear" is the ablation of gdn.qwen35.layers.RULES.
        embeds: [B, T, D] the ids' embedding rows when the caller read them (then embed_tokens is unused).
        overrides: {layer index: GateOverride}, interventions on GDN layers' gates (see gate_overrides)."""
        if rule not in RULES:
            raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
        last = len(self.layers) - 1 if upto_layer is None else upto_layer
        x, steps = self.embed_tokens(ids) if embeds is None else embeds, []    # [B, T, D]
        for i in range(last + 1):
            x_in = x
            x, cache, record = self.layers[i](x, None if caches is None else caches[i], kernel, rule,
                                              (overrides or {}).get(i))
            steps.append(LayerStep(x_in=x_in, output=x, cache=cache, record=record))
        return x, steps


class Qwen35ForCausalLM(nn.Module):
    """Text decoder with lazily loaded weights. Use `load_model(path)` to build one."""

    def __init__(self, cfg: Qwen35Config, checkpoint: Checkpoint, dtype: torch.dtype):
        super().__init__()
        self.cfg, self.checkpoint, self.dtype = cfg, checkpoint, dtype
        with torch.device("meta"):                  # no memory until the checkpoint fills it
            self.model = TextModel(cfg, init=False)
            self.lm_head = None if cfg.tie_word_embeddings else nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)
        self.tokenizer = None
        self._loaded: set = set()
        self._lock = threading.Lock()               # a cached model is shared by all app sessions

    # -- weights ---------------------------------------------------------------------------------
    def _fill(self, module: nn.Module, prefix: str, key) -> None:
        if key in self._loaded:
            return
        names = [prefix + n for n, _ in module.named_parameters()]
        tensors = self.checkpoint.load_many(names, self.dtype)
        module.load_state_dict({n[len(prefix):]: t for n, t in tensors.items()}, assign=True, strict=True)
        module.requires_grad_(False)
        self._loaded.add(key)

    def load_layers(self, upto_layer: int | None = None) -> None:
        """Read layers 0..upto_layer (all, plus norm, head and the whole embedding, when None). Partial
        loads leave the embedding matrix unread: `embed` reads the prompt's rows from the checkpoint."""
        self.checkpoint.check_unchanged()                # a file rewritten since open: refuse to mix old and new
        last = self.cfg.num_hidden_layers - 1 if upto_layer is None else upto_layer
        everything = last == self.cfg.num_hidden_layers - 1
        self.checkpoint.require(n for n in self.checkpoint.shapes if everything or n == "embed_tokens.weight"
                                or n.startswith("layers.") and int(n.split(".")[1]) <= last)
        with self._lock:
            for i in range(last + 1):
                self._fill(self.model.layers[i], f"layers.{i}.", i)
            if last == self.cfg.num_hidden_layers - 1:
                self._fill(self.model.embed_tokens, "embed_tokens.", "embed")   # the tied head needs all rows
                self._fill(self.model.norm, "norm.", "norm")
                if self.lm_head is not None:
                    self._fill(self.lm_head, "lm_head.", "head")

    def stale(self) -> bool:
        """True when a file of the checkpoint changed on disk since it was opened: load it anew (a cached
        model would otherwise answer every later trace with the "changed" error)."""
        return self.checkpoint.changed_file() is not None

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        """ids: [T] -> [T, D] embedding rows: from the loaded matrix, else only these rows from the checkpoint."""
        if "embed" in self._loaded:
            return self.model.embed_tokens(ids)
        return self.checkpoint.rows("embed_tokens.weight", ids, self.dtype)

    def head_weight(self) -> torch.Tensor:
        """[vocab, D]: lm_head.weight, or the embedding matrix when the checkpoint ties them."""
        return self.model.embed_tokens.weight if self.lm_head is None else self.lm_head.weight

    # -- trace -----------------------------------------------------------------------------------
    @torch.inference_mode()
    def trace(self, input_ids, kernel: str = "chunk", upto_layer: int | None = None,
              cache: ModelCache | None = None, state_norms: bool = False,
              set_alpha: dict | None = None, set_beta: dict | None = None) -> Trace:
        """Run one sequence through layers 0..upto_layer (all when None) and record every layer.

        input_ids: [T] or [1, T] token ids. kernel: "chunk" | "recurrent" (the GDN kernel used).
        cache: `previous_trace.cache` to continue that sequence (same or larger upto_layer).
        state_norms: compute ||S_t|| per token and head of every GDN layer now; by default each layer's
        norms are computed when `trace.layers[i].state_norms` is first read (one layer at a time).
        set_alpha / set_beta: interventions, {(layer, head or None): value in [0, 1]}: layer is the
        decoder-layer index of a GDN layer, head a value-head index (None = every head of the layer).
        The chosen heads use the constant instead of their computed gate at every token (alpha = 0
        means g = -inf: forget everything; beta = 0: never write); the trace records the gates used.
        """
        ids, last = self._check_call(input_ids, kernel, upto_layer, cache)
        overrides = gate_overrides(self.cfg, set_alpha, set_beta, last)
        self.load_layers(None if last == self.cfg.num_hidden_layers - 1 else last)
        x, steps = self.model(ids[None], kernel=kernel, caches=None if cache is None else cache.layers,
                              upto_layer=last, embeds=self.embed(ids)[None], overrides=overrides)  # x: [1, T, D]
        layers = []
        for i, step in enumerate(steps):
            lt = LayerTrace(index=i, kind=self.model.layers[i].kind, output=step.output[0])
            if step.record is not None:
                rec, c_in = step.record, None if cache is None else cache.layers[i]
                lt.g, lt.beta, lt.final_state = rec.g[0], rec.beta[0], step.cache.state[0]  # [T, HV], [T, HV], [HV, K, V]
                if state_norms:   # else computed on first access of lt.state_norms
                    lt._norms = state_norm_scan(rec.k, rec.v, rec.g, rec.beta,
                                                None if c_in is None else c_in.state)[0][0]  # [T, HV]
                lt._recompute = _recompute_fn(self.model.layers[i], step.x_in, c_in, overrides.get(i))
            layers.append(lt)
        logits = None
        if last == self.cfg.num_hidden_layers - 1:
            logits = F.linear(self.model.norm(x[0]), self.head_weight())        # [T, vocab] in the model dtype
        start = 0 if cache is None else cache.length
        return Trace(input_ids=ids, start=start, kernel=kernel, embeddings=steps[0].x_in[0], layers=layers,
                     logits=logits, cache=ModelCache([st.cache for st in steps], start + ids.shape[0]))

    def _check_call(self, input_ids, kernel, upto_layer, cache):
        if kernel not in KERNELS:
            raise ValueError(f"kernel must be one of {sorted(KERNELS)}, got {kernel!r}")
        ids = torch.as_tensor(input_ids, dtype=torch.long)
        if ids.dim() == 2 and ids.shape[0] == 1:
            ids = ids[0]
        if ids.dim() != 1 or ids.numel() == 0:
            raise ValueError(f"input_ids must be a non-empty [T] or [1, T] list of token ids, got shape {tuple(ids.shape)}")
        if int(ids.min()) < 0 or int(ids.max()) >= self.cfg.vocab_size:
            raise ValueError(f"token ids must be in 0..{self.cfg.vocab_size - 1}; got {int(ids.min())}..{int(ids.max())}")
        L = self.cfg.num_hidden_layers
        last = L - 1 if upto_layer is None else int(upto_layer)
        if not 0 <= last < L:
            raise ValueError(f"upto_layer must be in 0..{L - 1} (or None for all layers), got {upto_layer}")
        if cache is not None and len(cache.layers) <= last:
            raise ValueError(f"the carried cache covers layers 0..{len(cache.layers) - 1} only; trace the first "
                             f"part with upto_layer >= {last} to continue up to layer {last}")
        return ids, last


def _recompute_fn(layer: DecoderLayer, x_in: torch.Tensor, cache_in, override: GateOverride | None):
    """Closure that recomputes this GDN layer's kernel inputs (one layer, cheap) when a page asks
    for per-token states of one head; the trace itself never stores q, k, v."""
    @torch.inference_mode()
    def recompute():
        q, k, v, g, beta, _ = layer.linear_attn.kernel_inputs(layer.input_layernorm(x_in), cache_in, override)
        return q, k, v, g, beta, None if cache_in is None else cache_in.state
    return recompute


def load_model(path: str | Path, *, dtype: torch.dtype | None = None, upto_layer: int | None = None,
               lazy: bool = False, allow_any_folder: bool = False) -> Qwen35ForCausalLM:
    """Open a Qwen3.5 checkpoint folder (config.json + *.safetensors [+ index], tokenizer.json).

    dtype: compute dtype of the weights; None means float32 when the float32 text weights fit in
    1 GiB (demo, toy models), else bfloat16 for bfloat16 checkpoints (float16 is computed in float32).
    A_log, the gated-norm weight and the GDN state stay float32.
    upto_layer / lazy: read only layers 0..upto_layer now (lazy: none); the rest are read on first use.
    allow_any_folder: skip the allowed-roots check (tests and scripts only, never the app).
    """
    folder = Path(path) if allow_any_folder else check_folder(path)
    cfg = load_config(folder)
    checkpoint = Checkpoint(folder, cfg)
    if dtype is None:
        # Small models (the demo) run in float32 so kernel comparisons show float32 agreement; real
        # sizes keep bfloat16 from disk: half the memory and ~5x faster matmuls on AVX512-BF16 CPUs.
        n_params = sum(math.prod(s) for s in checkpoint.shapes.values())
        disk = checkpoint.dtype_of("embed_tokens.weight")
        dtype = torch.bfloat16 if disk == torch.bfloat16 and n_params * 4 > SMALL_MODEL_BYTES else torch.float32
    model = Qwen35ForCausalLM(cfg, checkpoint, dtype)
    if (folder / "tokenizer.json").is_file():
        model.tokenizer = load_tokenizer(folder, cfg.vocab_size)
    if not lazy:
        model.load_layers(upto_layer)
    return model
