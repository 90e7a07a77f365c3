"""Size caps on a checkpoint folder's small files, checked before a byte of them is parsed.

A model folder comes from a disk an operator does not fully control (a shared Hugging Face cache, a
folder in GDN_MODEL_DIRS, a download): a 200 kB config.json nested 100,000 deep, or a 100 MB
tokenizer.json, must cost a stat() and a short message, not a RecursionError or seconds of parsing
and gigabytes of memory. The caps sit far above every Qwen3.5 release (its config.json: 5 kB; its
sharded index: under 100 kB; its tokenizer.json: about 12 MB).
"""
from __future__ import annotations

import json
from pathlib import Path

from gdn.qwen35.errors import CheckpointError

CONFIG_MAX_BYTES = 1_000_000        # config.json: 1 MB
INDEX_MAX_BYTES = 16_000_000        # model.safetensors.index.json: 16 MB
TOKENIZER_MAX_BYTES = 50_000_000    # tokenizer.json: 50 MB


def check_size(path: Path, cap: int, shown: str, kind: str) -> int:
    """The file's size in bytes; a CheckpointError if it cannot be looked at (of `kind`, the kind of a bad
    file of this sort) or is over `cap` ("file_too_big"). `shown` names the file in messages (a web user
    reads them: never a server path)."""
    try:
        size = path.stat().st_size
    except OSError as e:              # a symlink loop, a dangling link, permission denied
        raise CheckpointError(kind, f"{shown}: cannot be read ({e.strerror or type(e).__name__}); re-download the "
                              "checkpoint or ask the operator to fix the file") from None
    if size > cap:
        raise CheckpointError("file_too_big", f"{shown} is {size / 1e6:.1f} MB, over this app's cap of {cap / 1e6:.0f} MB for that file; "
                              "it is damaged or not from a Qwen3.5 release: re-download the checkpoint")
    return size


def read_json(path: Path, cap: int, shown: str, kind: str):
    """json.loads of a file at most `cap` bytes long. A CheckpointError (and only that) for a file over the
    cap ("file_too_big"), or of `kind` for one unreadable, not UTF-8, not JSON, or nested too deeply for
    the parser (a RecursionError)."""
    check_size(path, cap, shown, kind)
    try:
        return json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CheckpointError(kind, f"{shown}: not valid JSON ({e}); re-download the checkpoint") from None
    except RecursionError:
        raise CheckpointError(kind, f"{shown}: not valid JSON (nested too deeply); re-download the checkpoint") from None
    except OSError as e:
        raise CheckpointError(kind, f"{shown}: cannot be read ({e.strerror or type(e).__name__}); check its permissions") from None
