"""Random-weight checkpoints in the exact Qwen3.5 on-disk format (for tests, the bench and the demo).

The layout copies the released multimodal checkpoints: config.json with text_config, tensors under
model.language_model.*, bfloat16 weights with float32 A_log and linear_attn.norm.weight, optional
sharding with model.safetensors.index.json, plus a few model.visual.* / mtp.* tensors that a text
loader must skip. Deterministic for a given seed.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import torch
from safetensors.torch import save_file

from gdn.qwen35.checkpoint import keeps_fp32, model_shapes
from gdn.qwen35.config import parse_config

SMALL_TEXT_CONFIG = dict(
    vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=4, num_attention_heads=4,
    num_key_value_heads=2, head_dim=32, rms_norm_eps=1e-6, hidden_act="silu",
    linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=16, linear_value_head_dim=16,
    linear_conv_kernel_dim=4, max_position_embeddings=4096, tie_word_embeddings=True,
    rope_parameters={"rope_type": "default", "rope_theta": 10000000.0, "partial_rotary_factor": 0.25,
                     "mrope_section": [1, 1, 2], "mrope_interleaved": True},
    attention_bias=False, eos_token_id=0)


def text_config(**overrides) -> dict:
    cfg = json.loads(json.dumps(SMALL_TEXT_CONFIG))
    cfg.update(overrides)
    if "layer_types" not in overrides:
        n = cfg["num_hidden_layers"]
        cfg["layer_types"] = ["full_attention" if (i + 1) % 4 == 0 else "linear_attention" for i in range(n)]
    return cfg


def config_json(text: dict, *, multimodal: bool = True, moe: bool = False) -> dict:
    """The config.json dict: multimodal nesting (as released) or a text-only top level."""
    text_type = "qwen3_5_moe_text" if moe else "qwen3_5_text"
    text = {**text, "model_type": text_type}
    if not multimodal:
        return text
    return {"architectures": ["Qwen3_5MoeForConditionalGeneration" if moe else "Qwen3_5ForConditionalGeneration"],
            "model_type": "qwen3_5_moe" if moe else "qwen3_5", "text_config": text,
            "vision_config": {"model_type": "qwen3_5_moe_vision" if moe else "qwen3_5_vision", "depth": 1,
                              "hidden_size": 16, "intermediate_size": 32, "num_heads": 2,
                              "out_hidden_size": text["hidden_size"]},
            "tie_word_embeddings": text["tie_word_embeddings"], "image_token_id": 248056}


def random_tensor(name: str, shape: tuple[int, ...], gen: torch.Generator) -> torch.Tensor:
    """A plausible random value for each kind of tensor (float32; cast to the disk dtype later)."""
    if name.endswith("A_log"):
        # A in [0.05, 2] (training init draws from [0.01, 16]): keeps random alphas = exp(g) spread over
        # (0, 1) instead of mostly ~0, so the demo's heatmaps have something to show.
        # log in float64: float32 log differs by an ulp between CPU vector units, and the demo's bytes
        # must not depend on the machine that regenerates it.
        return torch.empty(shape).uniform_(0.05, 2.0, generator=gen).double().log().float()
    if name.endswith("dt_bias"):
        return torch.empty(shape).uniform_(-1.0, 1.0, generator=gen)
    if name.endswith("linear_attn.norm.weight"):
        return 1.0 + 0.1 * torch.randn(shape, generator=gen)                     # plain weight, near 1
    if name.endswith("norm.weight") or name.endswith("layernorm.weight"):
        return 0.1 * torch.randn(shape, generator=gen)                           # zero-centred, used as 1 + w
    if name.endswith("conv1d.weight"):
        return 0.5 * torch.randn(shape, generator=gen)
    if name.endswith("embed_tokens.weight"):
        return torch.randn(shape, generator=gen)
    fan_in = shape[-1]
    return torch.randn(shape, generator=gen) / math.sqrt(fan_in)


def random_text_tensors(cfg_json: dict, *, seed: int = 0, dtype=torch.bfloat16, prefix="model.language_model."):
    """On-disk name -> tensor for every text-decoder tensor, in the release dtypes."""
    cfg = parse_config(cfg_json)
    gen = torch.Generator().manual_seed(seed)
    out = {}
    for name, shape in model_shapes(cfg).items():
        t = random_tensor(name, shape, gen)
        disk = name if name == "lm_head.weight" else prefix + name
        out[disk] = t.to(torch.float32 if keeps_fp32(name) else dtype).contiguous()
    return out


def write_checkpoint(folder: str | Path, text: dict | None = None, *, seed: int = 0, shards: int = 1,
                     multimodal: bool = True, moe: bool = False, dtype=torch.bfloat16,
                     tokenizer_json: str | None = None) -> Path:
    """Write config.json and the safetensors file(s) of a random checkpoint; returns the folder."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    cfg_json = config_json(text or text_config(), multimodal=multimodal, moe=moe)
    prefix = "model.language_model." if multimodal else "model."
    tensors = random_text_tensors(cfg_json, seed=seed, dtype=dtype, prefix=prefix)
    if multimodal:  # a sliver of vision tower and MTP head: present in releases, skipped by text loaders
        gen = torch.Generator().manual_seed(seed + 1)
        tensors["model.visual.patch_embed.proj.weight"] = torch.randn(16, 3, 2, 4, 4, generator=gen).to(dtype)
        tensors["mtp.fc.weight"] = torch.randn(8, 8, generator=gen).to(dtype)
    (folder / "config.json").write_text(json.dumps(cfg_json, indent=2, ensure_ascii=False) + "\n")
    names = sorted(tensors)
    if shards <= 1:
        save_file({n: tensors[n] for n in names}, str(folder / "model.safetensors"), metadata={"format": "pt"})
    else:
        per = math.ceil(len(names) / shards)
        weight_map = {}
        for s in range(shards):
            fname = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
            part = names[s * per:(s + 1) * per]
            save_file({n: tensors[n] for n in part}, str(folder / fname), metadata={"format": "pt"})
            weight_map.update({n: fname for n in part})
        total = sum(t.numel() * t.element_size() for t in tensors.values())
        index = {"metadata": {"total_size": total}, "weight_map": weight_map}
        (folder / "model.safetensors.index.json").write_text(json.dumps(index, indent=2) + "\n")
    if tokenizer_json is not None:
        (folder / "tokenizer.json").write_text(tokenizer_json, encoding="utf-8")
    return folder


SAFETENSORS_DTYPE = {torch.bfloat16: "BF16", torch.float16: "F16", torch.float32: "F32"}


def write_sparse_safetensors(path: Path, tensors: dict[str, tuple[tuple[int, ...], torch.dtype, torch.Tensor | None]]) -> None:
    """A safetensors file whose header declares every tensor with its full shape; tensors given as None
    (and the part of a tensor past the rows given) are holes in a sparse file: they take no disk and
    read as zeros. name -> (shape, dtype, leading rows or None)."""
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name in sorted(tensors):
        shape, dtype, _ = tensors[name]
        size = math.prod(shape) * torch.empty((), dtype=dtype).element_size()
        header[name] = {"dtype": SAFETENSORS_DTYPE[dtype], "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)                                   # data starts 8-byte aligned, as safetensors writes
    with open(path, "wb") as f:
        f.write(len(raw).to_bytes(8, "little") + raw)
        start = f.tell()
        for name in sorted(tensors):
            _, dtype, values = tensors[name]
            if values is not None:
                f.seek(start + header[name]["data_offsets"][0])
                f.write(values.to(dtype).contiguous().view(torch.uint8).numpy().tobytes())
        f.truncate(start + offset)                                  # the tail is a hole too


def write_partial_checkpoint(folder: str | Path, text: dict, *, upto_layer: int, shards: int, seed: int = 0,
                             dense_rows: int = 1024, dense_max: int = 1 << 20) -> Path:
    """A big model's sharded checkpoint of which only the first shard was downloaded.

    config.json and the index are complete (every text tensor, spread over `shards` files); the first
    shard holds exactly the embedding and layers 0..upto_layer, the other shards do not exist. Shapes and
    dtypes are the config's, nothing is shrunk; to stay small on disk, tensors of more than `dense_max`
    values are zeros stored as sparse-file holes, except the first `dense_rows` rows of the embedding
    (random, so prompts of ids below dense_rows have real embeddings). Small tensors (norms, gates'
    projections in_proj_a / in_proj_b, A_log, dt_bias, conv1d) are random, as in `write_checkpoint`."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    cfg_json = config_json(text)
    cfg = parse_config(cfg_json)
    gen = torch.Generator().manual_seed(seed)
    prefix = "model.language_model."
    disk = lambda n: n if n == "lm_head.weight" else prefix + n
    names = list(model_shapes(cfg))                                  # model order: embedding, layers, norm, head
    first = [n for n in names if n == "embed_tokens.weight" or
             (n.startswith("layers.") and int(n.split(".")[1]) <= upto_layer)]
    rest = [n for n in names if n not in first]
    fnames = [f"model-{s + 1:05d}-of-{shards:05d}.safetensors" for s in range(shards)]
    per = math.ceil(len(rest) / (shards - 1))
    weight_map = {disk(n): fnames[0] for n in first}
    weight_map.update({disk(n): fnames[1 + j // per] for j, n in enumerate(rest)})
    shapes = model_shapes(cfg)
    content = {}
    for n in first:
        shape, dtype = shapes[n], torch.float32 if keeps_fp32(n) else torch.bfloat16
        if n == "embed_tokens.weight":
            values = random_tensor(n, (dense_rows, shape[1]), gen)
        else:
            values = random_tensor(n, shape, gen) if math.prod(shape) <= dense_max else None
        content[disk(n)] = (shape, dtype, values)
    write_sparse_safetensors(folder / fnames[0], content)
    total = sum(math.prod(s) * (4 if keeps_fp32(n) else 2) for n, s in shapes.items())
    (folder / "config.json").write_text(json.dumps(cfg_json, indent=2, ensure_ascii=False) + "\n")
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index, indent=2) + "\n")
    return folder
