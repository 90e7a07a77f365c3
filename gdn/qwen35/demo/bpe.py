"""One Qwen3.5-style byte-level BPE trainer for both shipped demo tokenizers (random and trained model).

Qwen3.5's real tokenizer has 248k tokens; the demos need about a thousand, trained on their own text,
but split and normalised the same way, so the app's tokenizer code path is the one a real checkpoint takes.
"""
from __future__ import annotations

import json
from pathlib import Path

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

# Qwen3.5's pre-tokenizer split (docs/qwen35.md, Tokenizer): \p{M} is kept with letters, digits one by one.
SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*"
         r"|\s*[\r\n]+|\s+(?!\S)|\s+")
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]

def train_bpe(lines: list[str], vocab_size: int) -> Tokenizer:
    """A byte-level BPE tokenizer like Qwen3.5's (its split regex, NFC, no byte fallback), trained on lines."""
    tok = Tokenizer(models.BPE(unk_token=None, byte_fallback=False))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(SPLIT), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=2, special_tokens=SPECIAL,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(lines, trainer=trainer)
    return tok


def write_tokenizer_config(folder: Path) -> None:
    """tokenizer_config.json as the releases ship it (the app reads only tokenizer.json)."""
    (folder / "tokenizer_config.json").write_text(json.dumps(
        {"tokenizer_class": "Qwen2Tokenizer", "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>",
         "bos_token": None, "model_max_length": 4096}, indent=2) + "\n")
