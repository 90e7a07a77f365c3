"""Tokenizer for Qwen3.5 checkpoints (tokenizer.json through `tokenizers`), with display pieces.

Byte-level BPE splits a Chinese character (3 UTF-8 bytes) across tokens, so decoding one token alone
gives "\ufffd". Display pieces merge consecutive tokens until their bytes form whole characters: the
first token of such a group shows the text, the following ones show "" (see `Encoded.group`). Bytes that
never form a character are shown as their values, ⟨e4 b8⟩, never as "\ufffd" (`show_bytes`).
"""
from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import torch
from tokenizers import Tokenizer

from gdn.qwen35.errors import CheckpointError
from gdn.qwen35.filecaps import TOKENIZER_MAX_BYTES, check_size

DEFAULT_MAX_TOKENS = 2048


def _bytes_to_unicode() -> dict[int, str]:
    """The GPT-2 byte-level alphabet: printable bytes map to themselves, the others to chr(256 + n)."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    table, n = {}, 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + n)
            n += 1
    return table


UNICODE_TO_BYTE = {c: b for b, c in _bytes_to_unicode().items()}


def _bytes_as_hex(err: UnicodeDecodeError) -> tuple[str, int]:
    return "⟨" + " ".join(f"{b:02x}" for b in err.object[err.start:err.end]) + "⟩", err.end


codecs.register_error("gdn_hex", _bytes_as_hex)


def show_bytes(data: bytes) -> str:
    """UTF-8 bytes as text, with any bytes that are no character written as their hex values:
    b"a\xe4\xb8" -> "a⟨e4 b8⟩" (a Chinese character cut after two of its three bytes)."""
    return data.decode("utf-8", errors="gdn_hex").replace("⟩⟨", " ")


# Letters by script, to keep a bilingual demo's guesses in the prompt's language (same_script_mask)
SCRIPTS = {"cjk": re.compile(r"[\u3400-\u9fff\uf900-\ufaff]"), "latin": re.compile(r"[A-Za-z\u00c0-\u024f]")}


def scripts_of(text: str) -> frozenset[str]:
    return frozenset(name for name, letters in SCRIPTS.items() if letters.search(text))


BLANK_KINDS = {"\n": "newline", " ": "space", "\t": "tab"}     # anything else blank counts as "other"


def trim_prompt(text: str) -> tuple[str, dict[str, dict[str, int]]]:
    """The prompt without the blank characters around it, and what went: {"start" | "end": {kind: count}}
    with kinds newline (a Windows \r\n counts once), space, tab, other. A trailing newline would otherwise
    be a token of its own, and the model's guess after it graded as the answer."""
    trimmed = text.strip()
    if not trimmed:
        return "", {}
    cut = {"start": text[:len(text) - len(text.lstrip())], "end": text[len(text.rstrip()):]}
    removed = {}
    for side, blank in cut.items():
        counts: dict[str, int] = {}
        for ch in blank.replace("\r\n", "\n"):
            kind = BLANK_KINDS.get(ch, "newline" if ch == "\r" else "other")
            counts[kind] = counts.get(kind, 0) + 1
        if counts:
            removed[side] = counts
    return trimmed, removed


@dataclass
class Encoded:
    ids: list[int]          # token ids after truncation
    pieces: list[str]       # display text per token; "" for continuation tokens of a merged group
    group: list[int]        # group[i] = index of the token whose piece shows token i's bytes
    truncated: bool         # True when the prompt had more than max_tokens tokens
    n_total: int            # token count before truncation


class Qwen35Tokenizer:
    def __init__(self, tokenizer: Tokenizer):
        self.tok = tokenizer
        self.special = {t.content for t in tokenizer.get_added_tokens_decoder().values()}

    def token_bytes(self, i: int) -> bytes:
        token = self.tok.id_to_token(i)
        if token is None:
            return b""
        if token in self.special or any(c not in UNICODE_TO_BYTE for c in token):
            return token.encode("utf-8")
        return bytes(UNICODE_TO_BYTE[c] for c in token)

    def display_pieces(self, ids: list[int]) -> tuple[list[str], list[int]]:
        """Pieces for display: consecutive tokens are merged until their bytes decode as UTF-8."""
        pieces, group, pending, start = [], [], b"", 0
        for i, tid in enumerate(ids):
            if not pending:
                start = i
            pending += self.token_bytes(tid)
            pieces.append("")
            group.append(start)
            try:
                text = pending.decode("utf-8")
            except UnicodeDecodeError:
                if len(pending) < 4 and i + 1 < len(ids):
                    continue                 # an incomplete character: wait for the next token
                text = show_bytes(pending)           # truly invalid bytes: shown as their values, ⟨e4 b8⟩
            pieces[start], pending = text, b""
        return pieces, group

    def encode(self, text: str, max_tokens: int = DEFAULT_MAX_TOKENS) -> Encoded:
        """Tokenise a prompt (no special tokens added) and keep at most max_tokens tokens."""
        if not isinstance(text, str):
            raise ValueError(f"the prompt must be text, got {type(text).__name__}")
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
        ids = self.tok.encode(text, add_special_tokens=False).ids
        n_total = len(ids)
        ids = ids[:max_tokens]
        pieces, group = self.display_pieces(ids)
        return Encoded(ids=ids, pieces=pieces, group=group, truncated=n_total > max_tokens, n_total=n_total)

    def decode(self, ids: list[int]) -> str:
        return self.tok.decode(list(ids), skip_special_tokens=False)

    def piece(self, i: int) -> str:
        """One token as text for display; a token that holds part of a character shows its bytes, ⟨e4 b8⟩."""
        return show_bytes(self.token_bytes(int(i)))

    @cached_property
    def _piece_scripts(self) -> list[frozenset[str]]:
        return [scripts_of(self.token_bytes(i).decode("utf-8", errors="ignore")) for i in range(self.vocab_size)]

    def same_script_mask(self, ids: list[int]) -> np.ndarray | None:
        """[vocab] bool: False for the tokens written in a script the prompt does not use (a Chinese word
        after an English prompt); None when the prompt uses both scripts or neither (nothing to keep out)."""
        used = scripts_of(self.decode(ids))
        if len(used) != 1:
            return None
        return np.array([not (s - used) for s in self._piece_scripts])

    @property
    def vocab_size(self) -> int:
        return self.tok.get_vocab_size(with_added_tokens=True)


def script_keep(model, ids, n_logits: int) -> torch.Tensor | None:
    """[n_logits] 1.0 for the tokens in the prompt's script, 0.0 for the others and for the output head's
    padding rows past the tokenizer's vocabulary; None: keep every token."""
    mask = model.tokenizer.same_script_mask([int(i) for i in ids])
    if mask is None:
        return None
    keep = np.zeros(n_logits, dtype=np.float32)
    keep[:min(n_logits, mask.size)] = mask[:n_logits]
    return torch.from_numpy(keep)


def check_fits(n_ids: int | None, rows: int, shown: str = "tokenizer.json") -> None:
    """A tokenizer of another model produces ids past the embedding's last row (the first such token would
    fail the forward pass): a CheckpointError ("tokenizer_vocab") saying both sizes and what to do. n_ids
    None: not known, nothing to check."""
    if n_ids is not None and n_ids > rows:
        raise CheckpointError("tokenizer_vocab", f"{shown}: the tokenizer has {n_ids:,} token ids (0 to {n_ids - 1:,}) "
                              f"but the model's embedding only {rows:,} rows (config.json's vocab_size); this "
                              "tokenizer.json belongs to another model: copy the checkpoint's own tokenizer.json "
                              "into the folder, or download the checkpoint again")


def json_id_count(raw) -> int | None:
    """How many token ids a tokenizer.json (parsed as plain JSON) can produce, its highest id + 1: from its
    model's vocab (BPE, WordPiece, WordLevel: token -> id; Unigram: a list, an entry's id its place) and
    its added tokens. None for a layout not known here: loading parses it with `tokenizers` and checks."""
    model = raw.get("model") if isinstance(raw, dict) else None
    vocab = model.get("vocab") if isinstance(model, dict) else None
    if isinstance(vocab, dict):
        ids = [i for i in vocab.values() if isinstance(i, int) and not isinstance(i, bool)]
    elif isinstance(vocab, list):
        ids = [len(vocab) - 1]
    else:
        return None
    added = raw.get("added_tokens")
    ids += [t["id"] for t in (added if isinstance(added, list) else [])
            if isinstance(t, dict) and isinstance(t.get("id"), int) and not isinstance(t["id"], bool)]
    return max(ids, default=-1) + 1


def load_tokenizer(folder: str | Path, vocab_size: int | None = None) -> Qwen35Tokenizer:
    """tokenizer.json of a checkpoint folder; with vocab_size, every id it can produce must be a row of the
    embedding (check_fits: a tokenizer of another model would index past it)."""
    path = Path(folder) / "tokenizer.json"
    if not path.is_file():
        raise CheckpointError("tokenizer", f"{Path(folder).name}: no tokenizer.json; copy the checkpoint's tokenizer.json into this folder")
    check_size(path, TOKENIZER_MAX_BYTES, path.name, "tokenizer")   # before a parse that takes seconds per 10 MB
    try:
        tok = Qwen35Tokenizer(Tokenizer.from_file(str(path)))
    except Exception as e:  # tokenizers raises plain Exception subclasses
        raise CheckpointError("tokenizer", f"{path.name}: not a valid tokenizer.json ({e}); re-download it") from None
    if vocab_size is not None:
        check_fits(max(tok.tok.get_vocab(with_added_tokens=True).values(), default=-1) + 1, vocab_size, path.name)
    return tok
