"""One read-only copy of each safetensors file per machine, mapped by every process that loads it.

Why a copy, and not a map of the served file itself: `cp other.safetensors model.safetensors` truncates
and rewrites the same inode, and a process that then touches a mapped page past the new end gets SIGBUS,
which kills it (a worker, or the whole server) for every visitor. Holding the file descriptor does not
help (the inode is the one rewritten), nor does comparing size and mtime before each use (the truncation
can land between the check and the page). So the original is only read with system calls (a short read
is an error, never a signal), once per machine, into a file that nobody else writes:

    <cache>/<key>.safetensors   the copy, mode 0444; key = sha256 of the original's identity when it was
                                opened (device, inode, size, mtime, ctime) and of its header bytes, so a
                                changed original gets a new copy and never a stale one
    <cache>/<key>.json          written before the copy takes its name: the source, its stamp, and what the
                                caller's check of the copy found (the tensors holding NaN or Inf)

Every process maps the copy (torch.from_file, a private read-only-in-practice map): its tensors are views
of the page cache, one copy in memory however many processes of the machine load the model, and a stray
in-place write would copy that one page into the writer's own memory, never into the file. The copy is
made under an flock (N workers starting at once copy once), under a temporary name, holes kept (a sparse
partial download stays sparse), its source's stamp taken before and after (a writer during the copy makes
it "changed"), then checked by the caller and renamed into place: a copy under its final name is whole
and checked. Copies whose original has changed or gone are deleted when the next copy is made (a process
still mapping one keeps its pages: unlinking never truncates).

<cache> is GDN_WEIGHT_CACHE, else $XDG_CACHE_HOME/gdn-explorer/weights (~/.cache). It costs the file's size
again on that disk (none on btrfs / XFS, where copy_file_range shares the blocks) and one copy per machine
the first time a file is loaded. Where the cache cannot be written (a read-only home, a full disk),
`Unavailable` is raised and the loader reads the file into the process's own memory instead (correct,
not shared: gdn.qwen35.checkpoint).
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

import torch

from gdn.qwen35.errors import CheckpointError

CACHE_ENV = "GDN_WEIGHT_CACHE"
Stamp = tuple[int, int, int, int, int]          # (device, inode, size, mtime ns, ctime ns)


class Unavailable(Exception):
    """The weight cache cannot hold this copy (unwritable, full): load into private memory instead."""


def stamp_of(st: os.stat_result) -> Stamp:
    """What changes when a file is rewritten in place (size, mtime, ctime) or replaced (device, inode)."""
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def current_stamp(path: Path) -> Stamp | None:
    try:
        return stamp_of(path.stat())
    except OSError:
        return None


def changed(name: str) -> CheckpointError:
    return CheckpointError("changed", f"{name} changed on disk after this server opened it (it is being replaced, "
                                      "or was truncated); press Run again to load it anew once the new file is "
                                      "complete")


def cache_dir() -> Path:
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "gdn-explorer" / "weights"


def snapshot(path: Path, stamp: Stamp, header: bytes, check: Callable[[Path], list[str]]) -> tuple[Path, list[str]]:
    """The machine's copy of `path` as it was at `stamp` (made now if there is none) and what check(copy)
    returned when it was made. check raises to refuse a copy (it is then deleted). Raises changed() when
    the original no longer matches `stamp`, Unavailable when the cache cannot hold the copy."""
    key = hashlib.sha256(repr(stamp).encode() + header).hexdigest()[:40]
    try:
        folder = cache_dir()
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        final, meta = folder / f"{key}.safetensors", folder / f"{key}.json"
        if not (final.is_file() and meta.is_file()):
            with _locked(folder / f"{key}.lock"):
                if not (final.is_file() and meta.is_file()):  # another process made it while this one waited
                    _make(path, stamp, final, meta, check)
                    _collect(folder, keep=final)
        return final, json.loads(meta.read_text())["not_finite"]
    except OSError as e:
        raise Unavailable(f"{type(e).__name__}: {e}") from None


def map_file(path: Path, size: int) -> torch.Tensor:
    """[size] uint8: the file mapped into this process (MAP_PRIVATE: pages shared with the page cache
    until written, and never written back)."""
    return torch.from_file(str(path), shared=False, size=size, dtype=torch.uint8)


def read_private(path: Path, stamp: Stamp) -> torch.Tensor:
    """[size] uint8: the file read into this process's own memory (when the cache cannot hold a copy)."""
    size = stamp[2]
    flat = torch.empty(size, dtype=torch.uint8)
    view = memoryview(flat.numpy())
    with open(path, "rb", buffering=0) as f:
        if stamp_of(os.fstat(f.fileno())) != stamp:
            raise changed(path.name)
        done = 0
        while done < size:
            n = f.readinto(view[done:])
            if not n:
                raise changed(path.name)                     # shorter than when it was opened
            done += n
        if stamp_of(os.fstat(f.fileno())) != stamp:
            raise changed(path.name)
    return flat


@contextlib.contextmanager
def _locked(lock: Path):
    with open(lock, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _make(path: Path, stamp: Stamp, final: Path, meta: Path, check: Callable[[Path], list[str]]) -> None:
    tmp = final.with_name(f"{final.stem}.{os.getpid()}.tmp")
    try:
        src = open(path, "rb", buffering=0)
    except OSError:
        raise changed(path.name) from None                   # gone since it was opened
    try:
        with src, open(tmp, "wb", buffering=0) as dst:
            if stamp_of(os.fstat(src.fileno())) != stamp:
                raise changed(path.name)
            _copy_data(src.fileno(), dst.fileno(), stamp[2], path.name)
            if stamp_of(os.fstat(src.fileno())) != stamp:   # written to while it was copied
                raise changed(path.name)
        not_finite = check(tmp)
        os.chmod(tmp, 0o444)
        record = {"source": str(path), "stamp": list(stamp), "not_finite": not_finite}
        meta_tmp = meta.with_name(f"{meta.stem}.{os.getpid()}.tmp.json")
        meta_tmp.write_text(json.dumps(record))
        os.replace(meta_tmp, meta)
        os.replace(tmp, final)
    finally:
        tmp.unlink(missing_ok=True)


def _copy_data(src: int, dst: int, size: int, name: str) -> None:
    """Copy the data extents of src (holes stay holes: SEEK_DATA / SEEK_HOLE) and give dst src's size."""
    pos = 0
    while pos < size:
        try:
            start = os.lseek(src, pos, os.SEEK_DATA)
            end = min(os.lseek(src, start, os.SEEK_HOLE), size)
        except OSError:                                     # ENXIO: only a hole is left
            break
        while start < end:
            n = _copy_range(src, dst, start, end - start)
            if not n:
                raise changed(name)                          # shorter than when it was opened
            start += n
        pos = end
    os.ftruncate(dst, size)


def _copy_range(src: int, dst: int, offset: int, count: int) -> int:
    try:
        return os.copy_file_range(src, dst, count, offset, offset)
    except OSError:                                          # EXDEV / ENOSYS on some kernels and filesystems
        os.lseek(dst, offset, os.SEEK_SET)
        return os.sendfile(dst, src, offset, count)


def _collect(folder: Path, keep: Path) -> None:
    """Delete the copies whose original has changed or gone (one stat per copy)."""
    for meta in folder.glob("*.json"):
        copy = meta.with_suffix(".safetensors")
        if copy == keep or meta.name.count(".") > 1:          # the one just made, or another's temporary
            continue
        try:
            record = json.loads(meta.read_text())
            live = current_stamp(Path(record["source"])) == tuple(record["stamp"])
        except (OSError, ValueError, KeyError, TypeError):
            live = False
        if not live:
            for p in (copy, meta, meta.with_suffix(".lock")):
                with contextlib.suppress(OSError):
                    p.unlink()
