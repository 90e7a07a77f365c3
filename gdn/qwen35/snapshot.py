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
import stat
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
        _check_private(folder)
        final, meta = folder / f"{key}.safetensors", folder / f"{key}.json"
        found = _finished(final, meta, stamp)
        if found is None:
            with _locked(folder / f"{key}.lock"):
                found = _finished(final, meta, stamp)   # another process made it while this one waited
                if found is None:
                    _collect(folder, keep=final)
                    _make(path, stamp, final, meta, check)
                    found = _finished(final, meta, stamp)
        if found is None:
            raise Unavailable(f"the copy of {path.name} in {folder} could not be made whole")
        return final, found
    except OSError as e:
        raise Unavailable(f"{type(e).__name__}: {e}") from None


def _check_private(folder: Path) -> None:
    """The cache is a folder of this user's that nobody else may write: another user who could plant a copy
    (its name is computable from the original's stat and header) would choose the weights and skip the
    finiteness check; a symlink in its place would point the copy's writes elsewhere."""
    st = folder.lstat()
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
        raise Unavailable(f"{folder} is not a folder of this user's that only it can write (owner {st.st_uid}, "
                          f"mode {stat.filemode(st.st_mode)}); set {CACHE_ENV} to one")


def _finished(final: Path, meta: Path, stamp: Stamp) -> list[str] | None:
    """What the check found when the copy was made, if `final` is that copy, whole: a plain file of this user's,
    of the original's size, with its record. None when there is none or it is not (a crash between writing
    and renaming, say): it is then made again. Cheap: two lstat calls and a small read."""
    try:
        st, record = final.lstat(), json.loads(meta.read_text())
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_size != stamp[2]:
        return None
    if not isinstance(record, dict) or record.get("stamp") != list(stamp) or not isinstance(record.get("not_finite"), list):
        return None
    return record["not_finite"]


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
    """Copy, check, and rename into place; both files are on disk (fsync) before either takes its name, so a
    crash never leaves a copy under its final name that is not whole."""
    tmp = final.with_name(f"{final.stem}.{os.getpid()}.tmp")
    meta_tmp = meta.with_name(f"{meta.stem}.{os.getpid()}.tmp.json")
    for stale in (tmp, meta_tmp):                            # a process of this pid that died mid-copy
        stale.unlink(missing_ok=True)
    try:
        src = open(path, "rb", buffering=0)
    except OSError:
        raise changed(path.name) from None                   # gone since it was opened
    try:
        with src, _new_file(tmp) as dst:
            if stamp_of(os.fstat(src.fileno())) != stamp:
                raise changed(path.name)
            _copy_data(src.fileno(), dst.fileno(), stamp[2], path.name)
            if stamp_of(os.fstat(src.fileno())) != stamp:   # written to while it was copied
                raise changed(path.name)
            os.fsync(dst.fileno())
        not_finite = check(tmp)
        os.chmod(tmp, 0o444)
        record = {"source": str(path), "stamp": list(stamp), "not_finite": not_finite}
        with _new_file(meta_tmp) as f:
            f.write(json.dumps(record).encode())
            os.fsync(f.fileno())
        os.replace(meta_tmp, meta)
        os.replace(tmp, final)
        _sync_folder(final.parent)
    finally:
        tmp.unlink(missing_ok=True)
        meta_tmp.unlink(missing_ok=True)


def _new_file(path: Path):
    """A new file of this user's only (never an existing one, never through a symlink), open for writing."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    return open(fd, "wb", buffering=0)


def _sync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


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
    """Delete the copies whose original has changed or gone (one stat per copy), and the temporary files of
    copies whose process died before finishing (killed mid-copy: gigabytes otherwise left for good)."""
    for tmp in [*folder.glob("*.tmp"), *folder.glob("*.tmp.json")]:
        pid = tmp.name.split(".")[1]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            with contextlib.suppress(OSError):
                tmp.unlink()
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
