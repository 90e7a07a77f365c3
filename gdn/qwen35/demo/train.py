"""Train the shipped demo model: the Qwen3.5 text decoder (3 GDN layers + 1 attention layer) on the
synthetic tasks of gdn.qwen35.demo.tasks, saved in the exact Qwen3.5 checkpoint format.

    python -m gdn.qwen35.demo.train --device cuda --steps 1300 --out assets/models/qwen35-demo-trained
    python -m gdn.qwen35.demo.train --device cpu --steps 300 --out /tmp/tiny      # same code, fewer steps

Deterministic for a given device, seed and step count: data come from random.Random(seed + step),
weights from torch.manual_seed(seed). Only the predictable tokens (answers, copied tokens) are trained on.
The training forward is gdn.qwen35.demo.evidence.forward: our own modules and chunked kernel, autograd
through the torch code. Writes config.json, model.safetensors, tokenizer.json, tokenizer_config.json
and train_log.json into --out.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from safetensors.torch import save_file

from gdn.qwen35.checkpoint import keeps_fp32
from gdn.qwen35.config import parse_config
from gdn.qwen35.demo.bpe import write_tokenizer_config
from gdn.qwen35.demo.evidence import EVAL_SEED, accuracy, batch, examples, forward, word_ids
from gdn.qwen35.demo.tasks import build_tokenizer
from gdn.qwen35.model import TextModel
from gdn.qwen35.synth import config_json, text_config

SEED = 0


# Full attention FIRST, then three Gated DeltaNet layers. With attention last (Qwen3.5's own order) a
# first, GPU-trained version of this model solved every task in the attention layer, which can look a key
# up directly, and used its GDN layers only as short mixers (alpha ~ 0): 100 % recall, but the gates showed
# nothing and no gate intervention changed an answer. Attention on raw single-token embeddings cannot
# bind a key to its value, so here the memory has to live in the GDN states: the gates do the work.
LAYER_TYPES = "FLLL"    # F: full_attention, L: linear_attention (Gated DeltaNet)


def model_text_config(vocab_size: int, layer_types: str = LAYER_TYPES) -> dict:
    """4 layers (1 attention + 3 GDN, Qwen3.5's 1:3 ratio), D = 256, 4 GDN heads of d_k = d_v = 64,
    conv 4: about 3 M parameters (6 MB in bf16). d_k = 64 leaves room for a dozen facts in one head's
    memory without the keys interfering."""
    kinds = {"F": "full_attention", "L": "linear_attention"}
    return text_config(
        vocab_size=vocab_size, hidden_size=256, intermediate_size=512, num_hidden_layers=len(layer_types),
        layer_types=[kinds[c] for c in layer_types],
        num_attention_heads=4, num_key_value_heads=1, head_dim=64,
        linear_num_key_heads=4, linear_num_value_heads=4, linear_key_head_dim=64, linear_value_head_dim=64,
        tie_word_embeddings=True, eos_token_id=0)


def init_weights(model: TextModel) -> None:
    """Qwen3.5's training init (docs/qwen35.md, Training from scratch): normal(0.02) matrices, zero-centred norms at 0,
    the GDN gated norm at 1, dt_bias 1, A_log = log(U(1, 16)), conv weights as PyTorch's default."""
    for name, p in model.named_parameters():
        if name.endswith("A_log"):
            p.data = torch.empty_like(p).uniform_(1.0, 16.0).log()
        elif name.endswith("dt_bias") or name.endswith("linear_attn.norm.weight"):
            p.data = torch.ones_like(p)
        elif name.endswith("norm.weight") or name.endswith("layernorm.weight"):
            p.data = torch.zeros_like(p)
        elif name.endswith("conv1d.weight"):
            p.data = torch.empty_like(p).uniform_(-0.5, 0.5)
        else:
            p.data = torch.randn_like(p) * 0.02


def lr_at(step: int, steps: int, peak: float) -> float:
    warmup = min(200, steps // 10)
    if step < warmup:
        return peak * (step + 1) / warmup
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, steps - warmup))))


def save(model: TextModel, cfg_json: dict, tok, out: Path) -> None:
    """Exact Qwen3.5 layout: tensors under model.language_model.*, bf16 except float32 A_log and
    linear_attn.norm.weight; tied embeddings (no lm_head.weight)."""
    out.mkdir(parents=True, exist_ok=True)
    tensors = {"model.language_model." + n: p.detach().cpu().to(torch.float32 if keeps_fp32(n) else torch.bfloat16)
               .contiguous() for n, p in model.named_parameters()}
    save_file(tensors, str(out / "model.safetensors"), metadata={"format": "pt"})
    (out / "config.json").write_text(json.dumps(cfg_json, indent=2, ensure_ascii=False) + "\n")
    (out / "tokenizer.json").write_text(tok.to_str(pretty=True), encoding="utf-8")
    write_tokenizer_config(out)


def train(steps: int, device: str, out: Path, batch_size: int = 128, lr: float = 1e-3, log_every: int = 100,
          layer_types: str = LAYER_TYPES) -> dict:
    torch.manual_seed(SEED)
    tok = build_tokenizer()
    wid = word_ids(tok)
    vocab = -(-tok.get_vocab_size(with_added_tokens=True) // 64) * 64   # embedding rows padded, as released
    cfg_json = config_json(model_text_config(vocab, layer_types))
    model = TextModel(parse_config(cfg_json))
    init_weights(model)
    model.to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.1)
    eval_exs = examples(64, EVAL_SEED + 1)                  # held out: not the evidence batch, not training
    eval_ids, _ = batch(eval_exs, wid)
    log, t0 = [], time.time()
    for step in range(steps):
        ids, mask = batch(examples(batch_size, SEED + 1000 + step), wid)
        ids, mask = ids.to(device), mask.to(device)
        for group in opt.param_groups:
            group["lr"] = lr_at(step, steps, lr)
        logits, _ = forward(model, model.embed_tokens.weight, ids)  # [B, T, vocab]
        loss = F.cross_entropy(logits[:, :-1][mask[:, :-1]], ids[:, 1:][mask[:, :-1]])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % log_every == 0 or step == steps - 1:
            with torch.no_grad():
                ev_logits, _ = forward(model, model.embed_tokens.weight, eval_ids.to(device))
            acc = accuracy(ev_logits.cpu(), eval_exs, wid)
            log.append({"step": step, "loss": round(loss.item(), 4), "seconds": round(time.time() - t0, 1),
                        **{f"acc_{k}": round(v, 4) for k, v in acc.items()}})
            print(json.dumps(log[-1]), flush=True)
    model.cpu()
    save(model, cfg_json, tok, out)
    info = {"steps": steps, "device": device, "batch_size": batch_size, "lr": lr, "seed": SEED, "layer_types": layer_types,
            "torch": torch.__version__, "seconds": round(time.time() - t0, 1), "log": log}
    (out / "train_log.json").write_text(json.dumps(info, indent=1) + "\n")
    return info


def seconds_per_step(device: str, batch_size: int, n: int = 15) -> float:
    """Time n training steps of a throwaway model (its own generators: the real run is unaffected)."""
    tok = build_tokenizer()
    wid = word_ids(tok)
    model = TextModel(parse_config(config_json(model_text_config(640)))).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for i in range(n + 3):
        if i == 3:
            if device == "cuda":
                torch.cuda.synchronize()
            t0 = time.time()
        ids, mask = batch(examples(batch_size, i), wid)        # data generation is part of a step
        ids, mask = ids.to(device), mask.to(device)
        logits, _ = forward(model, model.embed_tokens.weight, ids)
        F.cross_entropy(logits[:, :-1][mask[:, :-1]], ids[:, 1:][mask[:, :-1]]).backward()
        opt.step()
        opt.zero_grad()
    if device == "cuda":
        torch.cuda.synchronize()
    return (time.time() - t0) / n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--budget", type=float, default=0.0,
                    help="if > 0: time a few steps and lower --steps (to a multiple of 50) to fit this many seconds")
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--layer-types", default=LAYER_TYPES, help="one letter per layer: F full attention, L Gated DeltaNet")
    ap.add_argument("--out", type=Path, default=Path("assets/models/qwen35-demo-trained"))
    args = ap.parse_args()
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(True, warn_only=True)
    # gdn.ops.chunk.FLUSH keeps the forward's decays out of float32's subnormal range, but products of
    # small decays (and their gradients) can still land there, where CPU math is 15-80x slower.
    torch.set_flush_denormal(True)
    steps = args.steps
    if args.budget > 0:
        t = seconds_per_step(args.device, args.batch_size)
        steps = max(50, min(steps, int(args.budget / (t * 1.15) // 50 * 50)))
        print(json.dumps({"seconds_per_step": round(t, 4), "steps": steps}), flush=True)
    train(steps, args.device, args.out, batch_size=args.batch_size, lr=args.lr, layer_types=args.layer_types)


if __name__ == "__main__":
    main()
