"""Weights once per machine (gdn/qwen35/snapshot.py): every process maps one read-only copy of a checkpoint,
and a checkpoint rewritten or truncated while it is served gives a clear "changed" error, never a dead
process. The overwrite scenarios run in a child process: a SIGBUS would kill it, and the test sees how it died.
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from gdn.qwen35 import load_model
from gdn.qwen35.errors import CheckpointError
from tests.qwen35_fixtures import write_checkpoint

ROOT = Path(__file__).resolve().parents[1]


def records_of(folder: Path) -> list[Path]:
    """The weight cache's finished records of folder's model.safetensors. The cache is shared with the suite's
    other processes: their copies in progress (*.tmp.json, maybe half written) and records removed under us
    are not ours to read."""
    cache, found = Path(os.environ["GDN_WEIGHT_CACHE"]), []
    for p in cache.glob("*.json"):
        if p.name.endswith(".tmp.json"):
            continue
        try:
            record = json.loads(p.read_text())
        except FileNotFoundError:
            continue
        if record["source"] == str(folder / "model.safetensors"):
            found.append(p)
    return found


# Loads layer 0 of the served checkpoint (so its file is mapped), then changes the file under it the way an
# operator would, and prints what each later use met: "ok", or the error's kind and message.
SERVED = r"""
import json, os, shutil, sys, torch
from pathlib import Path
from gdn.qwen35 import load_model
served, other, how = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
file = served / "model.safetensors"
model = load_model(served, lazy=True, dtype=torch.bfloat16, allow_any_folder=True)   # views of the map
model.trace([1, 2, 3], upto_layer=0)
inode = file.stat().st_ino
if how == "cp":
    shutil.copyfile(other / "model.safetensors", file)       # what `cp` does: truncate, write the same inode
else:
    os.truncate(file, file.stat().st_size // 2)
assert file.stat().st_ino == inode
seen = {}
def attempt(name, fn):
    try:
        fn()
        seen[name] = "ok"
    except ValueError as e:
        seen[name] = f"{getattr(e, 'kind', 'other')}: {e}"
attempt("read_loaded", lambda: float(sum(p.float().sum() for p in model.model.layers[0].parameters())))
attempt("trace_more", lambda: model.trace([1, 2, 3]))
seen["stale"] = model.stale()
attempt("load_anew", lambda: load_model(served, allow_any_folder=True).trace([1, 2, 3]))
print(json.dumps(seen))
"""


def run_served(served: Path, other: Path, how: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", SERVED, str(served), str(other), how], capture_output=True,
                          text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert proc.returncode == 0, f"the process died (returncode {proc.returncode}):\n{proc.stderr[-3000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture
def served(tmp_path):
    return write_checkpoint(tmp_path / "served", seed=0), write_checkpoint(tmp_path / "other", seed=1)


def test_a_checkpoint_copied_over_while_served_says_changed_and_the_process_lives(served):
    """`cp other.safetensors model.safetensors` mid-class: the layers read before still read (no SIGBUS),
    the next trace refuses to mix old and new weights with the "changed" message, and a model loaded anew
    reads the new file. Before, the trace read the new file's later layers behind the old layer 0."""
    seen = run_served(*served, "cp")
    assert seen["read_loaded"] == "ok"
    assert seen["trace_more"].startswith("changed: model.safetensors changed on disk after this server opened it")
    assert "press Run again" in seen["trace_more"]
    assert seen["stale"] is True and seen["load_anew"] == "ok"


def test_a_checkpoint_truncated_while_served_says_changed_and_the_process_lives(served):
    seen = run_served(*served, "truncate")
    assert seen["read_loaded"] == "ok"
    assert seen["trace_more"].startswith("changed: model.safetensors changed on disk")
    assert seen["stale"] is True
    assert seen["load_anew"].startswith("corrupt: model.safetensors: corrupt safetensors file")


def mapping_of(t: torch.Tensor) -> tuple[str, str]:
    """(permissions, path) of this process's mapping that holds t's data (/proc/self/maps)."""
    ptr = t.data_ptr()
    for line in Path("/proc/self/maps").read_text().splitlines():
        parts = line.split(maxsplit=5)
        lo, hi = (int(x, 16) for x in parts[0].split("-"))
        if lo <= ptr < hi:
            return parts[1], parts[5] if len(parts) > 5 else ""
    raise AssertionError("no mapping holds the tensor")


def anonymous(path: str) -> bool:
    """A mapping of no file: the process's own memory."""
    return path == "" or path.startswith("[")


def test_weights_are_views_of_one_read_only_copy_per_machine(tmp_path):
    """A bf16 model loaded in bf16: its weights are views of a 0444 copy in the weight cache (never of the
    served file, never private memory), and a second process maps that same copy instead of making another."""
    folder = write_checkpoint(tmp_path / "m")
    model = load_model(folder, dtype=torch.bfloat16, allow_any_folder=True)
    perms, path = mapping_of(model.model.layers[0].mlp.up_proj.weight)
    cache = Path(os.environ["GDN_WEIGHT_CACHE"])
    assert Path(path).parent == cache and perms.startswith("r") and "p" in perms    # private: never written back
    assert Path(path).stat().st_mode & 0o777 == 0o444
    assert Path(path).stat().st_size == (folder / "model.safetensors").stat().st_size
    assert mapping_of(model.model.layers[0].linear_attn.A_log)[1] == path          # float32 on disk: a view too
    child = ("import sys, torch; from gdn.qwen35 import load_model; from tests.test_qwen35_snapshot import mapping_of;"
             "m = load_model(sys.argv[1], dtype=torch.bfloat16, allow_any_folder=True);"
             "print(mapping_of(m.model.layers[0].mlp.up_proj.weight)[1])")
    proc = subprocess.run([sys.executable, "-c", child, str(folder)], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == path
    assert len(records_of(folder)) == 1


def test_a_model_cast_to_another_dtype_holds_its_own_copy(tmp_path):
    """float32 compute of a bf16 file (the demo's way): cast into private memory, equal to the plain cast."""
    folder = write_checkpoint(tmp_path / "m")
    model = load_model(folder, dtype=torch.float32, allow_any_folder=True)
    w = model.model.layers[0].mlp.up_proj.weight
    assert w.dtype == torch.float32 and anonymous(mapping_of(w)[1])
    bf16 = load_model(folder, dtype=torch.bfloat16, allow_any_folder=True).model.layers[0].mlp.up_proj.weight
    assert torch.equal(w, bf16.float())


def test_without_a_writable_cache_each_process_reads_its_own(tmp_path, monkeypatch):
    """A read-only cache folder (or a full disk) costs sharing, never correctness: the file is read into the
    process's memory, checked the same way (here a NaN is still found), and nothing is written."""
    cache = tmp_path / "cache"
    cache.mkdir()
    cache.chmod(0o500)
    monkeypatch.setenv("GDN_WEIGHT_CACHE", str(cache / "weights"))
    folder = write_checkpoint(tmp_path / "m")
    if os.access(cache, os.W_OK):                                  # root ignores the mode: make the write fail
        monkeypatch.setenv("GDN_WEIGHT_CACHE", "/proc/gdn-weights")
    model = load_model(folder, dtype=torch.bfloat16, allow_any_folder=True)
    assert anonymous(mapping_of(model.model.layers[0].mlp.up_proj.weight)[1])
    ref = load_model(folder, dtype=torch.bfloat16, allow_any_folder=True)
    assert torch.equal(model.trace([1, 2, 3]).logits, ref.trace([1, 2, 3]).logits)
    from tests.qwen35_fixtures import rewrite

    def poison(t):
        t["model.language_model.layers.1.mlp.down_proj.weight"][0, 0] = float("nan")
    rewrite(folder, poison)
    with pytest.raises(CheckpointError, match=r"layers\.1\.mlp\.down_proj\.weight: contains NaN") as err:
        load_model(folder, allow_any_folder=True)
    assert err.value.kind == "not_finite"
    assert not (cache / "weights").exists()


def test_a_copy_changed_while_copied_is_refused_and_not_kept(tmp_path, monkeypatch):
    """The source's stamp is taken before and after the copy: a writer in between makes it "changed", and
    no half-copied file is left under a name a later load would trust."""
    from gdn.qwen35 import snapshot
    folder = write_checkpoint(tmp_path / "m")
    real = snapshot._copy_data

    def copy_while_written(src, dst, size, name):
        real(src, dst, size, name)
        with open(folder / "model.safetensors", "r+b") as f:        # a writer, in the middle of our copy
            f.seek(size - 4)
            f.write(b"\0\0\0\0")
    monkeypatch.setattr(snapshot, "_copy_data", copy_while_written)
    model = load_model(folder, lazy=True, allow_any_folder=True)
    with pytest.raises(CheckpointError, match="changed on disk") as err:
        model.trace([1, 2])
    assert err.value.kind == "changed"
    cache = Path(os.environ["GDN_WEIGHT_CACHE"])
    assert not records_of(folder)
    assert not list(cache.glob(f"*.{os.getpid()}.tmp*"))     # ours: the cache is shared with the suite's other processes
    monkeypatch.setattr(snapshot, "_copy_data", real)
    assert load_model(folder, allow_any_folder=True).trace([1, 2]).logits.isfinite().all()


def test_a_worker_loads_a_changed_checkpoint_anew(tmp_path):
    """The worker's cached model: after `cp` over its file, the next job gets a model of the new file."""
    from app_pages._support import work
    a, b = write_checkpoint(tmp_path / "a", seed=0), write_checkpoint(tmp_path / "b", seed=1)
    first = work.model(str(a))
    assert work.model(str(a)) is first
    shutil.copyfile(b / "model.safetensors", a / "model.safetensors")
    again = work.model(str(a))
    assert again is not first and not again.stale()
    expect = load_model(b, allow_any_folder=True).trace([1, 2, 3]).logits
    assert torch.equal(again.trace([1, 2, 3]).logits, expect)


def copy_of(folder: Path) -> tuple[Path, Path]:
    """The weight cache's copy of folder's model.safetensors and its record."""
    meta, = records_of(folder)
    return meta.with_suffix(".safetensors"), meta


def test_a_copy_left_short_by_a_crash_is_made_again(tmp_path):
    """A copy under its final name that is not whole (a crash after the rename reached the disk but before its
    data did, say) is never mapped: it is made again, and the model traces as from the original."""
    folder = write_checkpoint(tmp_path / "m")
    expected = load_model(folder, dtype=torch.bfloat16, allow_any_folder=True).trace([1, 2, 3]).logits
    copy, _ = copy_of(folder)
    copy.chmod(0o644)
    os.truncate(copy, 0)
    again = load_model(folder, dtype=torch.bfloat16, allow_any_folder=True)
    assert torch.equal(again.trace([1, 2, 3]).logits, expected)
    assert copy.stat().st_size == (folder / "model.safetensors").stat().st_size


def test_a_cache_others_can_write_is_not_trusted(tmp_path, monkeypatch):
    """A weight cache another user could write (group or world writable) could hold a planted copy whose
    name anyone can compute: it is not used; the file is read into the process's own memory instead."""
    cache = tmp_path / "shared"
    cache.mkdir()
    cache.chmod(0o777)
    monkeypatch.setenv("GDN_WEIGHT_CACHE", str(cache))
    folder = write_checkpoint(tmp_path / "m")
    model = load_model(folder, dtype=torch.bfloat16, allow_any_folder=True)
    assert anonymous(mapping_of(model.model.layers[0].mlp.up_proj.weight)[1])
    assert list(cache.iterdir()) == []


def test_the_leftovers_of_a_copy_whose_process_died_are_swept(tmp_path, monkeypatch):
    """A worker killed mid-copy leaves a temporary copy (gigabytes, for a real model) and its record: the next
    copy made in the cache deletes them; a live process's temporary files stay."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("GDN_WEIGHT_CACHE", str(cache))
    cache.mkdir(mode=0o700)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    left = [cache / f"{'a' * 40}.{dead_pid}.tmp", cache / f"{'a' * 40}.{dead_pid}.tmp.json"]
    alive = cache / f"{'b' * 40}.{os.getpid()}.tmp"
    for p in [*left, alive]:
        p.write_bytes(b"half a copy")
    load_model(write_checkpoint(tmp_path / "m"), dtype=torch.bfloat16, allow_any_folder=True)
    assert not any(p.exists() for p in left) and alive.exists()
