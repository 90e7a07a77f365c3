"""Lazy, validated access to a Qwen3.5 safetensors checkpoint (single file or sharded).

Only safetensors are read (never pickle / torch.load): the headers parsed here (read_header, every
tensor's byte range checked against its shape and the file; read_index for sharded checkpoints, both
shared with gdn.qwen35.analysis.describe). Opening a checkpoint reads the headers only, and names and
shapes are checked against the config before any data is read. A file's tensors are first needed when a
layer is built: then the file is mapped, once per process, from its machine-wide read-only copy
(gdn.qwen35.snapshot, which says why a copy and not the file), and tensors stored in the model's dtype are
views of that map: every process of the machine shares one copy of the weights in the page cache, and
loading costs no copy. The checks on the data run once per machine, when the copy is made: its header
bytes equal to those checked at open, every tensor checked for NaN / Inf (one fused sum per tensor, a
full scan only when the sum is not finite). Tensors cast to another dtype are copied (and their cast
checked again: a float16 cast can overflow).

Partial downloads of big sharded checkpoints work: the headers of the shards present are read at open
(a few KB each, so an inconsistent index is refused before any weight is read), and a shard missing
from the folder is an error only when a layer that needs it is read. The embedding can be read row by
row (`rows`): the first layers of a model need only the prompt's rows, not the whole [vocab, D] matrix.

Names used here are relative to the text decoder ("embed_tokens.weight", "layers.3.linear_attn.A_log",
"norm.weight") plus the top-level "lm_head.weight"; the on-disk prefix ("model.language_model." in the
multimodal releases, "model." in text-only exports) is detected from the file. The vision tower
(model.visual.*) and the multi-token-prediction head (mtp.*) are never read.
"""
from __future__ import annotations

import json
import math
import os
import struct
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import torch

from gdn.qwen35.config import Qwen35Config
from gdn.qwen35.errors import CheckpointError
from gdn.qwen35.filecaps import INDEX_MAX_BYTES, read_json
from gdn.qwen35.snapshot import Stamp, Unavailable, changed, current_stamp, map_file, read_private, snapshot, stamp_of

PREFIXES = ("model.language_model.", "model.")
SKIPPED = ("model.visual.", "mtp.")
# Stored F32 in the releases and kept in float32 whatever the model dtype (docs/qwen35.md, Checkpoint tensors).
FP32_TENSORS = ("linear_attn.A_log", "linear_attn.norm.weight")
INDEX_FILE = "model.safetensors.index.json"
# The dtypes Qwen3.5 checkpoints are stored in; anything else (int8, bool, f64, fp8, complex) would be
# cast silently into nonsense, so it is refused.
DISK_DTYPES = ("BF16", "F16", "F32")
DTYPE_BYTES = {"F32": 4, "BF16": 2, "F16": 2}
TORCH_DTYPES = {"F32": torch.float32, "BF16": torch.bfloat16, "F16": torch.float16}
HEADER_LIMIT = 100 << 20            # a safetensors header larger than this is treated as corrupt


def check_disk_dtype(name: str, dtype, file: str) -> None:
    if dtype not in DISK_DTYPES:
        raise CheckpointError("dtype", f"{name}: stored as {dtype!r} in {file}; Qwen3.5 weights are {', '.join(DISK_DTYPES)} "
                         "(a quantised or converted checkpoint is not supported)")


def layer_shapes(cfg: Qwen35Config, i: int) -> dict[str, tuple[int, ...]]:
    """Expected tensor shapes of decoder layer i ([out, in] like nn.Linear)."""
    D, p = cfg.hidden_size, f"layers.{i}."
    shapes = {p + "input_layernorm.weight": (D,), p + "post_attention_layernorm.weight": (D,)}
    if cfg.layer_types[i] == "linear_attention":
        HV = cfg.linear_num_value_heads
        a = p + "linear_attn."
        shapes.update({
            a + "in_proj_qkv.weight": (cfg.conv_dim, D),      # rows: q heads | k heads | v heads
            a + "in_proj_z.weight": (cfg.value_dim, D),
            a + "in_proj_b.weight": (HV, D),
            a + "in_proj_a.weight": (HV, D),
            a + "conv1d.weight": (cfg.conv_dim, 1, cfg.linear_conv_kernel_dim),
            a + "A_log": (HV,),
            a + "dt_bias": (HV,),
            a + "norm.weight": (cfg.linear_value_head_dim,),
            a + "out_proj.weight": (D, cfg.value_dim)})
    else:
        hd, Hq, Hkv = cfg.head_dim, cfg.num_attention_heads, cfg.num_key_value_heads
        a = p + "self_attn."
        shapes.update({
            a + "q_proj.weight": (2 * Hq * hd, D),            # query and gate, interleaved per head
            a + "k_proj.weight": (Hkv * hd, D),
            a + "v_proj.weight": (Hkv * hd, D),
            a + "o_proj.weight": (D, Hq * hd),
            a + "q_norm.weight": (hd,),
            a + "k_norm.weight": (hd,)})
    shapes.update(_mlp_shapes(cfg, p + "mlp."))
    return shapes


def _mlp_shapes(cfg: Qwen35Config, m: str) -> dict[str, tuple[int, ...]]:
    D = cfg.hidden_size
    if not cfg.is_moe:
        I = cfg.intermediate_size
        return {m + "gate_proj.weight": (I, D), m + "up_proj.weight": (I, D), m + "down_proj.weight": (D, I)}
    E, I, Is = cfg.num_experts, cfg.moe_intermediate_size, cfg.shared_expert_intermediate_size
    return {m + "gate.weight": (E, D),
            m + "experts.gate_up_proj": (E, 2 * I, D),            # gate half first, then up
            m + "experts.down_proj": (E, D, I),
            m + "shared_expert.gate_proj.weight": (Is, D),
            m + "shared_expert.up_proj.weight": (Is, D),
            m + "shared_expert.down_proj.weight": (D, Is),
            m + "shared_expert_gate.weight": (1, D)}


def model_shapes(cfg: Qwen35Config) -> dict[str, tuple[int, ...]]:
    """Every tensor the text decoder needs (lm_head only when the head is not tied)."""
    shapes = {"embed_tokens.weight": (cfg.vocab_size, cfg.hidden_size), "norm.weight": (cfg.hidden_size,)}
    for i in range(cfg.num_hidden_layers):
        shapes.update(layer_shapes(cfg, i))
    if not cfg.tie_word_embeddings:
        shapes["lm_head.weight"] = (cfg.vocab_size, cfg.hidden_size)
    return shapes


def keeps_fp32(name: str) -> bool:
    return name.endswith(FP32_TENSORS)


def _all_finite(t: torch.Tensor, block: int = 1 << 22) -> bool:
    """isfinite in blocks of 4M values: no weights-sized boolean temporary (the embedding is 254M values)."""
    flat = t.reshape(-1)
    return all(bool(torch.isfinite(flat[i:i + block]).all()) for i in range(0, flat.numel(), block))


# A cast out of the map (a tensor the model keeps in another dtype than the file: the demo's float32 from
# bfloat16) costs one zeroed page per 4 KiB of destination; the faults of different pages run in parallel
# on different cores, so the tensors of a file, big ones cut into row blocks, are cast by a few threads,
# which also run the once-per-machine finiteness sums (check_bytes). With OMP_NUM_THREADS > 1 each
# worker's cast and sum may run their own OpenMP team (the app runs 1 thread). No pool where the process
# may use one CPU.
COPY_BLOCK_BYTES = 32 << 20
_copy_pool: ThreadPoolExecutor | None = None
_copy_pool_lock = threading.Lock()


def _pool() -> ThreadPoolExecutor | None:
    """The copy threads, started on first use (one pool for every session's loads); None where the
    process may use only one CPU."""
    global _copy_pool
    with _copy_pool_lock:
        if _copy_pool is None:
            cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
            if cpus < 2:
                return None
            _copy_pool = ThreadPoolExecutor(min(4, cpus), thread_name_prefix="gdn-copy")
        return _copy_pool


def _copy_all(sources: list[tuple[torch.Tensor, torch.dtype]]) -> list[tuple[torch.Tensor, bool | Exception]]:
    """Each (src, dtype) cast to dtype in fresh memory (never a view of src's memory map), with whether the
    sum of every block of it is finite (see is_finite), or the exception its copy raised. Each block is
    summed by the thread that just wrote it, while it is still in cache: the check costs a share of the
    copy instead of another pass over the weights."""
    dests = [torch.empty(src.shape, dtype=dtype) for src, dtype in sources]
    jobs = []                                                    # (tensor, first row, end row); rows None: 0-dim
    for i, (src, _) in enumerate(sources):
        if src.dim() == 0:
            jobs.append((i, None, None))
            continue
        rows = src.shape[0]
        blocks = max(1, min(rows, src.numel() * src.element_size() // COPY_BLOCK_BYTES))
        jobs += [(i, rows * b // blocks, rows * (b + 1) // blocks) for b in range(blocks)]
    inference = torch.is_inference_mode_enabled()          # per thread: the workers must share the caller's

    def copy_block(job) -> tuple[int, bool | Exception]:
        i, a, b = job
        try:
            with torch.inference_mode(inference):
                dest, src = (dests[i], sources[i][0]) if a is None else (dests[i][a:b], sources[i][0][a:b])
                dest.copy_(src)
                return i, bool(torch.isfinite(dest.sum()))
        except Exception as e:                             # reported with the tensor's name by the caller
            return i, e
    pool = _pool() if len(jobs) > 1 else None
    status: list[bool | Exception] = [True] * len(sources)
    for i, ok in (pool.map(copy_block, jobs) if pool else map(copy_block, jobs)):
        if status[i] is True or isinstance(ok, Exception):
            status[i] = ok
    return list(zip(dests, status))


def is_finite(t: torch.Tensor, sum_finite: bool | None = None) -> bool:
    """True when no value of t is NaN or Inf. A NaN or Inf anywhere makes the sum NaN or Inf, so one
    vectorised sum (~20x cheaper than isfinite over the 0.8B model: 0.1 s instead of 1.4 s on 2 cores)
    clears almost every tensor; only when the sum is not finite (a bad value, or finite values whose sum
    overflows) does the blockwise scan decide. sum_finite: that first test, when already done (a copy's
    block sums)."""
    if sum_finite is None:
        sum_finite = bool(torch.isfinite(t.sum(dtype=torch.float32)))      # float32: a float16 sum overflows soon
    return sum_finite or _all_finite(t)


def shard_name(fname, index: Path) -> str:
    """A shard named by the index must be a *.safetensors file name in the checkpoint folder: a path such
    as "../x" or "/etc/x" would read outside the allowed model folders, and only *.safetensors files are
    checked for links that lead outside them (gdn.qwen35.sources.check_folder)."""
    if (not isinstance(fname, str) or Path(fname).name != fname or fname in (".", "..")
            or not fname.endswith(".safetensors")):
        raise CheckpointError("corrupt", f"{index.name}: shard {fname!r} is not a *.safetensors file in this folder; the index "
                         "is corrupt or hostile, re-download the checkpoint")
    return fname


class Entry(NamedTuple):
    shape: tuple[int, ...]
    dtype: str                  # one of DISK_DTYPES
    begin: int                  # byte range in the data section (after the header)
    end: int


@dataclass(frozen=True)
class Header:
    """A safetensors file's parsed header, and what identifies the file it was read from."""
    tensors: dict[str, Entry]   # text tensors only (vision and MTP skipped)
    raw: bytes                  # the JSON bytes as stored
    stamp: Stamp                # the file's identity when the header was read (gdn.qwen35.snapshot)

    @property
    def data_start(self) -> int:
        return 8 + len(self.raw)


def read_header(path: Path) -> Header:
    """The header of a safetensors file, every text tensor's shape, dtype and byte range checked (a range
    must hold exactly its shape, inside the file); a CheckpointError ("corrupt") if it is not one."""
    corrupt = lambda why: CheckpointError("corrupt", f"{path.name}: corrupt safetensors file ({why}); delete it and re-download "
                                     "the checkpoint")
    try:
        with open(path, "rb") as f:
            stamp = stamp_of(os.fstat(f.fileno()))
            (n,) = struct.unpack("<Q", f.read(8))
            if n > HEADER_LIMIT:
                raise ValueError("header length out of range")
            raw = f.read(n)
            header = json.loads(raw)
        data_bytes = stamp[2] - 8 - n
    except (OSError, struct.error, ValueError, RecursionError) as e:     # RecursionError: JSON nested too deep
        raise corrupt(type(e).__name__) from None
    if not isinstance(header, dict):
        raise corrupt(f"the header is a JSON {type(header).__name__}, not an object")
    ends = [o[1] for meta in header.values() if isinstance(meta, dict)
            for o in [meta.get("data_offsets")] if isinstance(o, list) and len(o) == 2 and isinstance(o[1], int)]
    if max(ends, default=0) != data_bytes:        # the vision tower's and MTP's ranges too: a truncated tail
        raise corrupt(f"its data is {data_bytes:,} bytes, its header describes {max(ends, default=0):,}: truncated "
                      "or damaged")
    out = {}
    for name, meta in header.items():
        if name == "__metadata__" or name.startswith(SKIPPED):
            continue
        shape = meta.get("shape") if isinstance(meta, dict) else None
        if not (isinstance(shape, list) and all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape)):
            raise corrupt(f"{name} has no valid shape")
        check_disk_dtype(name, meta.get("dtype"), path.name)
        # The byte range must hold exactly this shape, inside the file: a header cannot claim a size
        # (say 10^200 x 10^200) that the file does not have.
        offsets = meta.get("data_offsets")
        size = math.prod(shape) * DTYPE_BYTES[meta["dtype"]]
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(isinstance(o, int) for o in offsets)
                and 0 <= offsets[0] <= offsets[1] <= data_bytes and offsets[1] - offsets[0] == size):
            raise corrupt(f"{name}: its byte range does not match its shape or lies outside the file")
        out[name] = Entry(tuple(shape), meta["dtype"], offsets[0], offsets[1])
    return Header(out, raw, stamp)


def read_index(folder: Path) -> dict[str, str]:
    """The weight map of <folder>/model.safetensors.index.json: tensor name -> shard file name, every
    shard name checked (shard_name), vision and MTP tensors included (callers skip SKIPPED themselves)."""
    index = folder / INDEX_FILE
    raw = read_json(index, INDEX_MAX_BYTES, INDEX_FILE, "corrupt")    # size-capped; deep nesting is refused
    try:
        weight_map = raw["weight_map"]
        items = [(name, fname) for name, fname in weight_map.items() if isinstance(name, str)]
    except (KeyError, TypeError, AttributeError) as e:
        raise CheckpointError("corrupt", f"{INDEX_FILE}: not a valid safetensors index ({type(e).__name__}); "
                              "re-download the checkpoint") from None
    return {name: shard_name(fname, index) for name, fname in items}


@dataclass(frozen=True)
class Mapped:
    """One file's bytes in this process (a map of its machine-wide copy, or a private read) and what the
    check of those bytes found."""
    flat: torch.Tensor          # [file size] uint8
    header: Header
    not_finite: frozenset[str]  # on-disk names of the tensors that hold NaN or Inf

    def tensor(self, disk: str) -> torch.Tensor:
        """The tensor as stored: a view of the bytes (a copy only where its offset is not a multiple of its
        item size, which no safetensors writer produces)."""
        entry = self.header.tensors[disk]
        dtype = TORCH_DTYPES[entry.dtype]
        start = self.header.data_start + entry.begin
        raw = self.flat[start:self.header.data_start + entry.end]
        if start % DTYPE_BYTES[entry.dtype]:
            raw = raw.clone()
        return raw.view(dtype).view(entry.shape)


def check_bytes(flat: torch.Tensor, header: Header, name: str) -> list[str]:
    """The checks on a file's data, run once per machine (on the copy every process maps): the bytes carry
    the header that was checked at open (else the file changed between the two), and the on-disk names of
    the tensors that hold NaN or Inf."""
    if flat.numel() != header.stamp[2] or bytes(flat[8:header.data_start].numpy()) != header.raw:
        raise changed(name)
    mapped = Mapped(flat, header, frozenset())
    names = list(header.tensors)
    pool = _pool() if len(names) > 1 else None
    finite = list((pool.map if pool else map)(lambda disk: is_finite(mapped.tensor(disk)), names))
    return [disk for disk, ok in zip(names, finite) if not ok]


class Checkpoint:
    """Headers of a checkpoint folder; tensors are read on demand with `load_many` and `rows`."""

    def __init__(self, folder: str | Path, cfg: Qwen35Config):
        self.folder = Path(folder)
        self.cfg = cfg
        self.headers: dict[Path, Header] = {}             # file -> its header, read at open
        self.file_of = self._map_files()                  # on-disk name -> the one file that holds it
        self.prefix = self._detect_prefix()
        self.shapes = model_shapes(cfg)
        self._check_names_and_shapes()
        self._mapped: dict[Path, Mapped] = {}             # file -> its bytes, from the first tensor read of it
        self._map_lock = threading.Lock()

    # -- opening -------------------------------------------------------------------------------
    def _map_files(self) -> dict[str, Path]:
        """Read every shard's header and decide which file holds each tensor. A name stored in two
        files, or an index that sends a name to a shard that does not hold it, is refused here: either
        would read the wrong bytes later (or fail in the middle of a load)."""
        index = self.folder / INDEX_FILE
        if index.is_file():
            listed = {name: self.folder / fname for name, fname in read_index(self.folder).items()
                      if not name.startswith(SKIPPED)}
            paths = sorted(set(listed.values()))
        else:
            listed = None
            paths = sorted(self.folder.glob("*.safetensors"))
            if not paths:
                raise CheckpointError("no_weights", f"{self.folder.name}: no *.safetensors file and no {INDEX_FILE}; this folder holds no "
                                 "weights (only safetensors checkpoints are supported, never .bin / pickle)")
        holder: dict[str, Path] = {}
        for path in paths:
            if listed is not None and not path.exists():   # a partial download: refused only when needed
                continue
            for name in self._read_header(path):
                if name in holder:
                    raise ValueError(f"{name}: stored in both {holder[name].name} and {path.name}; the checkpoint "
                                     "is inconsistent, re-download it")
                holder[name] = path
        if listed is None:
            return holder
        for name, path in listed.items():
            if name in holder and holder[name] != path:
                raise CheckpointError("corrupt", f"{name}: {INDEX_FILE} maps it to {path.name}, but it is stored in "
                                 f"{holder[name].name}; the index is corrupt, re-download the checkpoint")
        return listed

    def _present(self, path: Path) -> None:
        """A shard the index names must be in the folder: else say which file to get and what it holds."""
        if not path.is_file():
            raise ValueError(f"{path.name}: listed in {INDEX_FILE} but missing from {self.folder.name}; it holds "
                             f"{self._first_held(path)}: download it (or re-download the checkpoint), or trace "
                             "fewer layers")

    def _read_header(self, path: Path) -> list[str]:
        """Record shape, dtype and byte range of every text tensor in one file (reads the header only)."""
        self.headers[path] = read_header(path)
        return list(self.headers[path].tensors)

    def _first_held(self, path: Path) -> str:
        """What an index assigns to `path`, for the message that asks for the shard: "layers 4..9, norm.weight"."""
        held = [n for n in self.shapes if self.file_of.get(self.disk_name(n)) == path]
        layers = sorted({int(n.split(".")[1]) for n in held if n.startswith("layers.")})
        parts = [f"layers {layers[0]}..{layers[-1]}"] if layers else []
        return ", ".join(parts + [n for n in held if not n.startswith("layers.")]) or "tensors of this model"

    def require(self, names) -> None:
        """Refuse, before any weight is read, to load tensors whose shard is not in the folder."""
        for path in sorted({self.file_of[self.disk_name(n)] for n in names}):
            self._present(path)

    def _detect_prefix(self) -> str:
        for prefix in PREFIXES:
            if prefix + "embed_tokens.weight" in self.file_of:
                return prefix
        raise CheckpointError("missing_tensor", f"{self.folder.name}: missing tensor model.language_model.embed_tokens.weight (or "
                         "model.embed_tokens.weight); this is not a Qwen3.5 text checkpoint or it is incomplete")

    def disk_name(self, name: str) -> str:
        return name if name == "lm_head.weight" else self.prefix + name

    # -- validation ----------------------------------------------------------------------------
    def _check_names_and_shapes(self) -> None:
        missing = [self.disk_name(n) for n in self.shapes if self.disk_name(n) not in self.file_of]
        if missing:
            more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
            hint = (" (per-expert MoE tensors are not supported; use the stacked experts.gate_up_proj layout)"
                    if self.cfg.is_moe and any("experts" in m for m in missing) else "")
            raise CheckpointError("missing_tensor", f"{self.folder.name}: missing tensor {', '.join(missing[:3])}{more}{hint}; the "
                             "checkpoint does not match its config.json, re-download it")
        for name, want in self.shapes.items():
            disk = self.disk_name(name)
            if self.file_of[disk] not in self.headers:    # shard not downloaded: checked if it is ever needed
                continue
            header = self.headers[self.file_of[disk]].tensors
            if disk not in header:                        # listed in the index, absent from every shard
                raise ValueError(f"{disk}: listed in {INDEX_FILE} but missing from {self.file_of[disk].name}; "
                                 "re-download the checkpoint")
            got = header[disk].shape
            if got != want:
                raise CheckpointError("bad_shape", f"{self.disk_name(name)}: expected shape {want} from config.json, checkpoint "
                                 f"has {got}; the weights and config.json do not belong together")

    def dtype_of(self, name: str) -> torch.dtype:
        """The on-disk dtype of a tensor, from the header (one of DISK_DTYPES: others are refused at open)."""
        disk = self.disk_name(name)
        self._header_of(self.file_of[disk])
        return TORCH_DTYPES[self.headers[self.file_of[disk]].tensors[disk].dtype]

    def _header_of(self, path: Path) -> Header:
        """The header read at open; for a shard downloaded since, read and checked now."""
        if path not in self.headers:
            self._present(path)
            self._read_header(path)
            self._check_names_and_shapes()
        return self.headers[path]

    # -- staying current -------------------------------------------------------------------------
    def changed_file(self) -> Path | None:
        """The first file of this checkpoint that is no longer what was opened (rewritten, truncated,
        replaced or deleted since: one stat per file), or None."""
        return next((path for path, header in self.headers.items() if current_stamp(path) != header.stamp), None)

    def check_unchanged(self) -> None:
        """A CheckpointError ("changed") when a file changed since open: the model's weights, read before and
        after the change, would not belong together."""
        path = self.changed_file()
        if path is not None:
            raise changed(path.name)

    # -- reading -------------------------------------------------------------------------------
    def _bytes(self, path: Path) -> Mapped:
        """The file's bytes in this process, mapped (or read) on first use and kept."""
        with self._map_lock:
            if path not in self._mapped:
                self._mapped[path] = self._map(path, self._header_of(path))
            return self._mapped[path]

    def _map(self, path: Path, header: Header) -> Mapped:
        if current_stamp(path) != header.stamp:
            raise changed(path.name)
        size = header.stamp[2]
        try:
            copy, not_finite = snapshot(path, header.stamp, header.raw,
                                        lambda tmp: check_bytes(map_file(tmp, size), header, path.name))
            flat = map_file(copy, size)
        except Unavailable:
            try:
                flat = read_private(path, header.stamp)
            except OSError as e:
                raise self._unreadable("its data", path, e) from None
            not_finite = check_bytes(flat, header, path.name)
        except RuntimeError:                              # the copy went between its check and its map
            raise changed(path.name) from None
        return Mapped(flat, header, frozenset(not_finite))

    def _stored(self, name: str) -> tuple[str, Path, torch.Tensor]:
        """(on-disk name, file, the tensor as stored: a view of the file's bytes), refused if not finite."""
        disk = self.disk_name(name)
        path = self.file_of[disk]
        mapped = self._bytes(path)
        if disk in mapped.not_finite:
            raise self._not_finite(disk)
        return disk, path, mapped.tensor(disk)

    def load_many(self, names, dtype: torch.dtype) -> dict[str, torch.Tensor]:
        """Tensors (relative names) in dtype (float32 for A_log and the gated-norm weight), each checked
        finite. Those stored in that dtype are views of the file's map, shared with every process of the
        machine; the others are cast into memory of their own (in blocks, on a few threads)."""
        out, casts = {}, []
        for n in names:
            want = torch.float32 if keeps_fp32(n) else dtype
            disk, path, stored = self._stored(n)
            if stored.dtype == want:
                out[n] = stored
            else:
                casts.append((n, disk, path, stored, want))
        copies = _copy_all([(stored, want) for *_, stored, want in casts])
        for (n, disk, path, *_), (t, ok) in zip(casts, copies):
            if isinstance(ok, Exception):
                raise self._unreadable(disk, path, ok) from None
            self._check_finite(t, disk, ok)
            out[n] = t
        return {n: out[n] for n in names}

    def rows(self, name: str, ids: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
        """ids: [T] row indices (in range) -> [T, D]: only these rows of a 2-D tensor (the embedding), from
        the file's map. Qwen3.5-27B's embedding is 2.5 GB in bfloat16; a 64-token prompt needs 64 rows of
        it (640 KB)."""
        disk, _, stored = self._stored(name)
        device = ids.device
        block = stored[ids.cpu()].to(dtype)                                      # [T, D], a copy
        if stored.dtype != dtype:
            self._check_finite(block, disk)                                     # a narrowing cast can overflow
        return block.to(device)

    @staticmethod
    def _unreadable(disk: str, path: Path, error: Exception) -> ValueError:
        return CheckpointError("corrupt", f"{disk}: could not be read from {path.name} ({error}); the file is truncated or "
                          "corrupt, re-download it")

    @staticmethod
    def _not_finite(disk: str) -> CheckpointError:
        return CheckpointError("not_finite", f"{disk}: contains NaN or Inf values; the checkpoint is damaged, re-download it")

    @classmethod
    def _check_finite(cls, t: torch.Tensor, disk: str, sum_finite: bool | None = None) -> None:
        if not is_finite(t, sum_finite):
            raise cls._not_finite(disk)
