"""Qwen3.5 text-decoder configuration, parsed from a checkpoint's config.json.

Released Qwen3.5 checkpoints are multimodal: the top level has model_type "qwen3_5" and the text
decoder's settings sit under "text_config" (model_type "qwen3_5_text"). Text-only exports put the same
keys at the top level. Field names below are the Hugging Face config keys (docs/qwen35.md, Configuration).
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path

from gdn.qwen35.errors import CheckpointError
from gdn.qwen35.filecaps import CONFIG_MAX_BYTES, read_json

TEXT_TYPES = ("qwen3_5", "qwen3_5_text")
MOE_TYPES = ("qwen3_5_moe", "qwen3_5_moe_text")
SUPPORTED_TYPES = TEXT_TYPES + MOE_TYPES
LAYER_KINDS = ("linear_attention", "full_attention")


@dataclass(frozen=True)
class Qwen35Config:
    vocab_size: int = 248320           # embedding rows (padded: the tokenizer has fewer real tokens)
    hidden_size: int = 4096            # D
    intermediate_size: int = 12288     # dense SwiGLU width
    num_hidden_layers: int = 32
    num_attention_heads: int = 16      # full attention: query heads
    num_key_value_heads: int = 4       # full attention: KV heads (GQA)
    head_dim: int = 256                # full attention head size, explicit (not D / heads)
    rms_norm_eps: float = 1e-6         # every RMSNorm, the gated one in GDN too
    linear_num_key_heads: int = 16     # HK: GDN q/k heads
    linear_num_value_heads: int = 32   # HV: GDN v heads, a multiple of HK
    linear_key_head_dim: int = 128     # K
    linear_value_head_dim: int = 128   # V
    linear_conv_kernel_dim: int = 4    # causal depthwise conv width
    layer_types: tuple[str, ...] = ()  # "linear_attention" | "full_attention" per layer
    rope_theta: float = 10000.0
    partial_rotary_factor: float = 0.25  # fraction of head_dim that RoPE rotates
    tie_word_embeddings: bool = False  # True: no lm_head.weight, the head reuses embed_tokens
    model_type: str = "qwen3_5_text"   # the top-level type the checkpoint declared
    eos_token_id: int | None = None
    # MoE family only (qwen3_5_moe): every layer's MLP is a routed sparse block plus a shared expert.
    num_experts: int = 0
    num_experts_per_tok: int = 0
    moe_intermediate_size: int = 0
    shared_expert_intermediate_size: int = 0

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 0

    @property
    def key_dim(self) -> int:          # HK * K: width of the q part (and of the k part) of in_proj_qkv
        return self.linear_num_key_heads * self.linear_key_head_dim

    @property
    def value_dim(self) -> int:        # HV * V
        return self.linear_num_value_heads * self.linear_value_head_dim

    @property
    def conv_dim(self) -> int:         # channels of the depthwise conv: q | k | v
        return 2 * self.key_dim + self.value_dim

    @property
    def rotary_dim(self) -> int:       # rotated dims per attention head (64 of 256 in the releases)
        return int(self.head_dim * self.partial_rotary_factor)

    def n_layers_of(self, kind: str) -> int:
        return sum(t == kind for t in self.layer_types)

    @property
    def gdn_layers(self) -> tuple[int, ...]:
        """Indices of the Gated DeltaNet (linear_attention) layers, in order."""
        return tuple(i for i, kind in enumerate(self.layer_types) if kind == "linear_attention")


def default_layer_types(n_layers: int, interval: int = 4) -> tuple[str, ...]:
    """Layer i is full attention iff (i + 1) % interval == 0: three GDN layers, then one attention layer."""
    return tuple("full_attention" if (i + 1) % interval == 0 else "linear_attention" for i in range(n_layers))


# Upper bounds far above every release (the 397B model has 60 layers, hidden 4096, vocab 248320): a
# config past them is hostile or broken, and building it would exhaust the server's memory.
LIMITS = dict(vocab_size=1 << 21, hidden_size=1 << 15, intermediate_size=1 << 18, num_hidden_layers=512,
              num_attention_heads=1024, num_key_value_heads=1024, head_dim=2048, linear_num_key_heads=1024,
              linear_num_value_heads=1024, linear_key_head_dim=2048, linear_value_head_dim=2048,
              linear_conv_kernel_dim=64, num_experts=4096, num_experts_per_tok=4096, moe_intermediate_size=1 << 18,
              shared_expert_intermediate_size=1 << 18, full_attention_interval=512)
MOE_FIELDS = ("num_experts", "num_experts_per_tok", "moe_intermediate_size", "shared_expert_intermediate_size")
# Every integer size of the dense model with the dataclass's default: what parse_config reads as integers.
DEFAULTS = {f.name: f.default for f in dataclasses.fields(Qwen35Config) if f.type == "int" and f.name not in MOE_FIELDS}
POSITIVE = ("hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim",
            "linear_num_key_heads", "linear_num_value_heads", "linear_key_head_dim", "linear_value_head_dim",
            "linear_conv_kernel_dim", "vocab_size")


def parse_config(raw: dict, *, source: str = "config.json") -> Qwen35Config:
    """Build a Qwen35Config from a parsed config.json (top-level multimodal or text-only). Any field of
    the wrong type or out of range raises ValueError naming it (never another exception)."""
    if not isinstance(raw, dict):
        raise ValueError(f"{source}: expected a JSON object at the top level")
    top_type = raw.get("model_type")
    if top_type not in SUPPORTED_TYPES:
        raise CheckpointError("model_type",
            f"{source}: model_type {top_type!r} is not a Qwen3.5 checkpoint; supported types are "
            f"{', '.join(SUPPORTED_TYPES)}. Pick a Qwen3.5 folder (e.g. Qwen/Qwen3.5-0.8B).")
    text = raw.get("text_config", raw) if top_type in ("qwen3_5", "qwen3_5_moe") else raw
    if not isinstance(text, dict):
        raise ValueError(f"{source}: text_config must be a JSON object, got {type(text).__name__}")
    act = text.get("hidden_act", "silu")
    if act != "silu":
        raise ValueError(f"{source}: hidden_act {act!r} is not supported (Qwen3.5 uses 'silu')")
    ints = {key: _int(text, key, default, source, minimum=1 if key in POSITIVE else 0)
            for key, default in DEFAULTS.items()}
    n_layers = ints["num_hidden_layers"]
    layer_types = text.get("layer_types")
    if layer_types is None:
        interval = _int(text, "full_attention_interval", 4, source, minimum=1)
        layer_types = default_layer_types(n_layers, interval)
    _check_layer_types(layer_types, n_layers, source)
    rope = text.get("rope_parameters") or {}
    if not isinstance(rope, dict):
        raise ValueError(f"{source}: rope_parameters must be a JSON object, got {type(rope).__name__}")
    rope_type = rope.get("rope_type", "default")
    if rope_type != "default":
        raise ValueError(f"{source}: rope_type {rope_type!r} is not supported; only 'default' (as released)")
    tie = text.get("tie_word_embeddings", raw.get("tie_word_embeddings", False))
    if not isinstance(tie, bool):
        raise ValueError(f"{source}: tie_word_embeddings must be true or false, got {tie!r}")
    eos = text.get("eos_token_id")
    eos = eos[0] if isinstance(eos, list) and eos else eos
    if eos is not None and (isinstance(eos, bool) or not isinstance(eos, int)):
        raise ValueError(f"{source}: eos_token_id must be a token id, got {eos!r}")
    fields = dict(
        **ints,
        rms_norm_eps=_float(text, "rms_norm_eps", Qwen35Config.rms_norm_eps, source, low=0.0, high=1.0),
        layer_types=tuple(layer_types),
        # rope_parameters is the current home of both keys; older exports keep them at the top.
        rope_theta=_float(rope if "rope_theta" in rope else text, "rope_theta", Qwen35Config.rope_theta, source, low=0.0, high=1e12),
        partial_rotary_factor=_float(rope if "partial_rotary_factor" in rope else text, "partial_rotary_factor",
                                     Qwen35Config.partial_rotary_factor,
                                     source, low=0.0, high=1.0, closed_high=True),
        tie_word_embeddings=tie,
        model_type=top_type,
        eos_token_id=eos,
    )
    if top_type in MOE_TYPES:
        moe_keys = ("num_experts", "num_experts_per_tok", "moe_intermediate_size")
        if not all(text.get(key) for key in moe_keys):
            raise ValueError(f"{source}: a {top_type} config needs num_experts, num_experts_per_tok and "
                             "moe_intermediate_size (all positive)")
        fields.update({key: _int(text, key, 0, source, minimum=1) for key in moe_keys})
        fields["shared_expert_intermediate_size"] = _int(text, "shared_expert_intermediate_size", 0, source)
        if fields["num_experts_per_tok"] > fields["num_experts"]:
            raise ValueError(f"{source}: num_experts_per_tok ({fields['num_experts_per_tok']}) exceeds num_experts "
                             f"({fields['num_experts']})")
    cfg = Qwen35Config(**fields)
    _check_heads(cfg, source)
    return cfg


def load_config(folder: str | Path) -> Qwen35Config:
    """Read and parse <folder>/config.json, with errors that say what to do."""
    path = Path(folder) / "config.json"
    shown = f"{Path(folder).name}/config.json"            # messages reach web users: no server path
    if not path.is_file():
        raise CheckpointError("no_config", f"{Path(folder).name}: no config.json in this folder; choose the folder of a Hugging Face "
                         "checkpoint (the one holding config.json and *.safetensors)")
    raw = read_json(path, CONFIG_MAX_BYTES, shown, "bad_config")    # size-capped; deep nesting is refused
    if not isinstance(raw, dict):
        raise ValueError(f"{shown}: expected a JSON object at the top level")
    return parse_config(raw, source=shown)


def _int(d: dict, key: str, default: int, source: str, minimum: int = 0) -> int:
    value = d.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        what = "a positive" if minimum > 0 else "a non-negative"
        raise ValueError(f"{source}: {key} must be {what} integer, got {value!r}")
    if value > LIMITS.get(key, value):
        raise CheckpointError("too_large", f"{source}: {key} = {value} is larger than this app accepts ({LIMITS[key]}); "
                         "the config is damaged or not a Qwen3.5 release")
    return value


def _float(d: dict, key: str, default: float, source: str, *, low: float, high: float,
           closed_high: bool = False) -> float:
    """A number strictly above `low` and below `high` (or equal to it when closed_high)."""
    value = d.get(key, default)
    try:                                                  # a JSON integer like 1e400 written out overflows float
        ok = (not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
              and low < value and (value <= high if closed_high else value < high))
    except OverflowError:
        ok = False
    if not ok:
        raise ValueError(f"{source}: {key} must be a number in ({low:g}, {high:g}{']' if closed_high else ')'}, "
                         f"got {value!r}")
    return float(value)


def _check_layer_types(layer_types, n_layers: int, source: str) -> None:
    if not isinstance(layer_types, (list, tuple)) or not all(isinstance(t, str) for t in layer_types):
        raise ValueError(f"{source}: layer_types must be a list of layer names, got {layer_types!r:.80}")
    if len(layer_types) != n_layers:
        raise ValueError(f"{source}: layer_types has {len(layer_types)} entries but num_hidden_layers is {n_layers}")
    bad = sorted(set(layer_types) - set(LAYER_KINDS))
    if bad:
        raise ValueError(f"{source}: unknown layer types {bad}; expected {LAYER_KINDS}")


def _check_heads(cfg: Qwen35Config, source: str) -> None:
    if cfg.linear_num_key_heads < 1 or cfg.linear_num_value_heads % cfg.linear_num_key_heads:
        raise ValueError(f"{source}: linear_num_value_heads ({cfg.linear_num_value_heads}) must be a multiple "
                         f"of linear_num_key_heads ({cfg.linear_num_key_heads})")
    if cfg.num_key_value_heads < 1 or cfg.num_attention_heads % cfg.num_key_value_heads:
        raise ValueError(f"{source}: num_attention_heads ({cfg.num_attention_heads}) must be a multiple of "
                         f"num_key_value_heads ({cfg.num_key_value_heads})")
    if cfg.rotary_dim % 2:
        raise ValueError(f"{source}: head_dim * partial_rotary_factor = {cfg.rotary_dim} must be even")
