"""Where Qwen3.5 checkpoints may be loaded from, and finding them.

Allowed roots: the Hugging Face hub cache (HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub),
the repo's assets/models/, and every folder listed in GDN_MODEL_DIRS (os.pathsep-separated). A folder
outside these roots is refused, so a web user cannot make the server read arbitrary paths.
"""
from __future__ import annotations

import fnmatch
import math
import os
import re
import shutil
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from gdn.qwen35.config import SUPPORTED_TYPES, load_config
from gdn.qwen35.errors import CheckpointError, error_kind
from gdn.qwen35.filecaps import CONFIG_MAX_BYTES, read_json

ASSETS_MODELS = Path(__file__).resolve().parents[2] / "assets" / "models"
DEMO_NAME = "qwen35-demo-random"
DEMO_PATH = ASSETS_MODELS / DEMO_NAME
# The app's default: a small Qwen3.5-format model trained on gdn.qwen35.demo.tasks (python -m gdn.qwen35.demo.train).
TRAINED_NAME = "qwen35-demo-trained"
TRAINED_PATH = ASSETS_MODELS / TRAINED_NAME
# A folder name typed on the page: longer than this is a paste gone wrong (Linux refuses paths of 4096
# bytes and more; the deepest hub snapshot is a few hundred characters), refused before it touches the disk
FOLDER_NAME_MAX = 1024
ECHO_CHARS = 240              # what of a typed name the messages repeat (a 20 MB paste came back whole; a real
                             # path, however deep, stays whole)
WEIGHT_PATTERNS = ["config.json", "*.safetensors", "model.safetensors.index.json", "tokenizer.json",
                   "tokenizer_config.json", "generation_config.json"]


def hf_hub_cache() -> Path:
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]) / "hub"
    return Path.home() / ".cache" / "huggingface" / "hub"


def allowed_roots() -> list[Path]:
    extra = [Path(p) for p in os.environ.get("GDN_MODEL_DIRS", "").split(os.pathsep) if p.strip()]
    return [hf_hub_cache(), ASSETS_MODELS, *extra]


def _inside_roots(path: Path) -> bool:
    resolved = path.resolve()
    return any(resolved == root or root in resolved.parents
               for root in (r.expanduser().resolve() for r in allowed_roots()))


def echoed(typed: object, chars: int = ECHO_CHARS) -> str:
    """A name the visitor typed, as a message repeats it: its first `chars` characters and "…" when longer,
    so a message stays a line however much was pasted."""
    text = str(typed)
    return text if len(text) <= chars else text[:chars] + "…"


class OutsideRoots(CheckpointError):
    """A folder, or a file the app would read from it, lies outside every allowed root (kind "outside_roots";
    the listing leaves such folders out instead of listing them unusable)."""

    def __init__(self, message: str):
        super().__init__("outside_roots", message)


def check_folder(path: str | Path) -> Path:
    """Return the resolved folder if it, and every file the app would read from it (config, tokenizer,
    weights, index: a symlink may point anywhere), lies inside an allowed root; else raise a CheckpointError
    (OutsideRoots for a way out of the roots). Messages name the folder as given, never the resolved path
    or the roots (a web user sees them), and only its start (echoed): a name over FOLDER_NAME_MAX
    characters is refused unread."""
    shown = echoed(path)
    if len(str(path)) > FOLDER_NAME_MAX:
        raise CheckpointError("long_name", f"{shown} is {len(str(path)):,} characters long; a folder name has at most "
                              f"{FOLDER_NAME_MAX:,}. Paste only the checkpoint folder's path, e.g. "
                              "/models/Qwen3.5-0.8B")
    try:
        folder = Path(path).expanduser().resolve()
        if not _inside_roots(folder):
            raise OutsideRoots(f"{shown} is outside the allowed model folders; move the checkpoint into one of them, "
                               "or ask the operator to add its parent folder to GDN_MODEL_DIRS")
        if not folder.is_dir():
            raise CheckpointError("no_folder", f"{shown}: no such folder")
        outside = [f.name for pattern in WEIGHT_PATTERNS for f in folder.glob(pattern) if not _inside_roots(f)]
    except (OSError, RuntimeError) as e:     # name too long, permission denied, a symlink loop (RuntimeError)...
        why = (e.strerror if isinstance(e, OSError) and e.strerror else     # RuntimeError's text names the server path
               "a symbolic link loops back on itself" if isinstance(e, RuntimeError) else type(e).__name__)
        raise CheckpointError("unreadable", f"{shown}: cannot be opened ({why}); check the folder name and that it is "
                              "readable") from None
    if outside:
        raise OutsideRoots(f"{shown}: {echoed(outside[0])} links outside the allowed model folders; the app reads only "
                           "files inside them (copy the file instead of linking it)")
    return folder


@dataclass(frozen=True)
class Source:
    label: str      # what a picker shows, e.g. "Qwen/Qwen3.5-0.8B (HF cache)"
    path: Path      # checkpoint folder (holds config.json)
    kind: str       # "trained" | "demo" | "assets" | "hf-cache" | "env"
    random_weights: bool = False  # True for the shipped demo: its gates mean nothing
    problem: str | None = None    # why it cannot be used (a short reason), None when it looks usable
    problem_kind: str = ""        # the kind of that reason (gdn.qwen35.errors, "other" if unforeseen)


def model_name(folder: str | Path) -> str:
    """What a checkpoint is called: "Qwen3.5-0.8B" for a hub cache snapshot (.../models--Qwen--Qwen3.5-0.8B/
    snapshots/<commit>: the folder's own name is the commit), else the folder's name."""
    folder = Path(folder)
    repo = folder.parents[1].name if len(folder.parents) > 1 and folder.parent.name == "snapshots" else ""
    return repo.split("--", 2)[-1] if repo.startswith("models--") else folder.name


def _model_type(folder: Path):
    """config.json's model_type, read under its size cap; a CheckpointError if config.json cannot be read."""
    raw = read_json(folder / "config.json", CONFIG_MAX_BYTES, f"{folder.name}/config.json", "bad_config")
    return raw.get("model_type") if isinstance(raw, dict) else None


def _has_weights(folder: Path) -> bool:
    return any(folder.glob("*.safetensors"))


def _candidates() -> list[tuple[Path, str, str, bool]]:
    """(folder, kind, label, random_weights) of every folder with a config.json in the allowed roots. A root
    that cannot be listed (gone, unreadable, a symlink loop) adds nothing and hides none of the others."""
    found = []

    def each(root: Path, pattern: str):
        try:
            return sorted(p.parent for p in root.glob(pattern))
        except (OSError, RuntimeError):
            return []
    for folder in each(ASSETS_MODELS, "*/config.json"):
        demo, trained = folder.name == DEMO_NAME, folder.name == TRAINED_NAME
        kind = "demo" if demo else "trained" if trained else "assets"
        note = "random weights" if demo else "trained on the demo tasks" if trained else "assets"
        found.append((folder, kind, f"{folder.name} ({note})", demo))
    for folder in each(hf_hub_cache(), "models--*/snapshots/*/config.json"):
        repo = folder.parents[1].name[len("models--"):].replace("--", "/")
        found.append((folder, "hf-cache", f"{repo} (HF cache, {folder.name[:7]})", False))
    for root in allowed_roots()[2:]:
        for folder in sorted({*each(root, "config.json"), *each(root, "*/config.json")}):
            found.append((folder, "env", f"{folder.name} (GDN_MODEL_DIRS)", False))       # no server path shown
    return found


def _examine(folder: Path, kind: str, label: str, random: bool) -> Source | None:
    """One folder, in isolation: a usable Source, an unusable one with a short reason, or None for a folder
    that is not a Qwen3.5 checkpoint or leads outside the roots (neither is listed). Any failure at all,
    a RecursionError or a symlink loop included, marks this folder unusable and leaves the others alone."""
    try:
        if _model_type(folder) not in SUPPORTED_TYPES or not _has_weights(folder):
            return None
        check_folder(folder)
    except OutsideRoots:
        return None
    except ValueError as e:                      # check_folder names the folder as given: here, a server path
        return Source(label, folder, kind, random, problem=str(e).replace(str(folder), folder.name),
                      problem_kind=error_kind(e))
    except Exception as e:  # noqa: BLE001 -- one folder's surprise must never break the listing for everyone
        return Source(label, folder, kind, random, problem=f"{folder.name}: could not be read ({type(e).__name__}); "
                                                           "re-download the checkpoint", problem_kind="other")
    return Source(label, folder, kind, random)


def scan_sources() -> list[Source]:
    """Every Qwen3.5 checkpoint folder in the allowed roots, the unusable ones included (with a reason);
    the shipped trained model first, then the random demo. Reads only each folder's config.json (under
    its cap) and file names: never a tokenizer or a weight."""
    found = [s for s in (_examine(*c) for c in _candidates()) if s is not None]
    found.sort(key=lambda s: (s.kind != "trained", s.kind != "demo"))
    return found


def list_sources() -> list[Source]:
    """The usable checkpoints of scan_sources (a symlinked folder that leads outside the roots is left out)."""
    return [s for s in scan_sources() if s.problem is None]


def _stamp(path: Path) -> tuple:
    """What changes when a file or folder changes: (name, mtime, size), or the error met looking at it."""
    try:
        st = path.stat()
        return path.name, st.st_mtime_ns, st.st_size
    except (OSError, RuntimeError) as e:
        return path.name, type(e).__name__


def listing_stamp() -> tuple:
    """A cheap fingerprint of everything scan_sources reads (a few stat calls per folder): it changes when a
    root, a checkpoint folder or a config.json is added, removed or rewritten, so a listing cached under it
    is re-read on a change of the disk, not on a timer."""
    roots = [r.expanduser() for r in allowed_roots()]
    stamps = [_stamp(r) for r in roots]
    hub = roots[0]
    try:
        repos = sorted(hub.glob("models--*/snapshots"))
        stamps += [(_stamp(r), *(_stamp(s) for s in sorted(r.iterdir()))) for r in repos]
    except (OSError, RuntimeError) as e:
        stamps.append(type(e).__name__)
    stamps += [(_stamp(folder), _stamp(folder / "config.json")) for folder, *_ in _candidates()]
    return tuple(stamps)


def folder_stamp(folder: str | Path) -> tuple:
    """A fingerprint of a checkpoint folder's files (names, mtimes, sizes): a description cached under it is
    re-made when a file is added, removed or rewritten."""
    folder = Path(folder)
    try:
        return (_stamp(folder), *(_stamp(p) for p in sorted(folder.iterdir())))
    except (OSError, RuntimeError) as e:
        return _stamp(folder), type(e).__name__


REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
# Downloads are an operator's decision: off unless this variable is "1"; and capped in size.
ALLOW_DOWNLOADS = "GDN_ALLOW_DOWNLOADS"
MAX_DOWNLOAD_GB = "GDN_MAX_DOWNLOAD_GB"


def downloads_allowed() -> bool:
    return os.environ.get(ALLOW_DOWNLOADS, "").strip() == "1"


def max_download_bytes() -> int:
    """The cap in bytes: GDN_MAX_DOWNLOAD_GB (a positive finite number), else 20 GB."""
    try:
        gb = float(os.environ.get(MAX_DOWNLOAD_GB, "") or 20)
    except ValueError:
        gb = 20.0
    return int((gb if math.isfinite(gb) and gb > 0 else 20.0) * 1e9)


@dataclass(frozen=True)
class DownloadPlan:
    """What a download would fetch, known before any weight is: the checked config and every file's size."""
    repo_id: str
    revision: str | None                   # the commit the checks saw: every later fetch asks for exactly it
    files: tuple[tuple[str, int], ...]     # (file name, bytes) of the files WEIGHT_PATTERNS selects
    n_layers: int

    @property
    def total_bytes(self) -> int:
        return sum(size for _, size in self.files)


def _hub(hub):
    if not downloads_allowed():
        raise CheckpointError("downloads_off", f"downloads are turned off on this server; an operator can allow them by starting the app "
                         f"with the environment variable {ALLOW_DOWNLOADS}=1 (and {MAX_DOWNLOAD_GB} to set the size cap)")
    if hub is not None:
        return hub
    try:
        import huggingface_hub
    except ImportError:
        raise CheckpointError("no_hub", "downloading needs the huggingface_hub package (pip install huggingface_hub); "
                         "or download the checkpoint yourself into the Hugging Face cache") from None
    return huggingface_hub


def plan_download(repo_id: str, *, revision: str | None = None, hub=None) -> DownloadPlan:
    """Check a Hugging Face repo before anything large is fetched: downloads allowed, a valid repo id, its
    config.json (fetched alone, into a staging folder: never into the cache before it is checked) a
    Qwen3.5 model, and the files' total size under the cap. `hub` is the huggingface_hub module (tests
    pass a fake)."""
    if not REPO_ID.match(repo_id or ""):
        raise CheckpointError("repo_id", f"{echoed(repr(repo_id))} is not a Hugging Face repo id; use the form owner/name, "
                              "e.g. Qwen/Qwen3.5-0.8B")
    hub = _hub(hub)
    with _staging() as stage:
        config = Path(hub.hf_hub_download(repo_id=repo_id, filename="config.json", revision=revision,
                                          cache_dir=str(stage)))
        cfg = load_config(config.parent)                 # ValueError: not Qwen3.5, malformed, over its cap
    info = hub.HfApi().model_info(repo_id, revision=revision, files_metadata=True)
    listed = [s for s in info.siblings                                            # top-level files only
              if "/" not in s.rfilename and any(fnmatch.fnmatch(s.rfilename, p) for p in WEIGHT_PATTERNS)]
    if any(s.size is None for s in listed):
        raise ValueError(f"{repo_id}: the hub did not say how large its files are; the size cannot be checked")
    files = tuple((s.rfilename, int(s.size)) for s in listed)
    # Pin the commit seen here: a repo changed between this check and the download must not slip past it.
    plan = DownloadPlan(repo_id, getattr(info, "sha", None) or revision, files, cfg.num_hidden_layers)
    if not any(name.endswith(".safetensors") for name, _ in files):
        raise CheckpointError("no_weights", f"{repo_id} has no *.safetensors weights (only safetensors checkpoints are supported)")
    if plan.total_bytes > max_download_bytes():
        raise CheckpointError("too_big", f"{repo_id} is {plan.total_bytes / 1e9:.1f} GB, more than this server downloads "
                         f"({max_download_bytes() / 1e9:.0f} GB); an operator can raise {MAX_DOWNLOAD_GB}")
    return plan


def download(plan: DownloadPlan, *, hub=None, progress=None) -> Path:
    """Fetch the planned files, one at a time, into a staging folder beside the HF cache; progress(done_bytes,
    total_bytes, name) after each. Only config, tokenizer and safetensors files (never pickles). The staged
    checkpoint is checked as the page will read it (config, index, every header, the tokenizer against the
    vocabulary) and only then moved into the cache: a file that fails never enters it. Returns the
    snapshot folder in the cache."""
    from gdn.qwen35.analysis import describe  # analysis reads checkpoints; sources only finds them
    from gdn.qwen35.tokenizer import load_tokenizer
    hub = _hub(hub)
    with _staging() as stage:
        fetch = lambda name: Path(hub.hf_hub_download(repo_id=plan.repo_id, filename=name, revision=plan.revision,
                                                      cache_dir=str(stage)))
        done = 0
        for name, size in plan.files:
            fetch(name)
            done += size
            if progress is not None:
                progress(done, plan.total_bytes, name)
        staged = fetch("config.json").parent             # the snapshot folder (config.json is staged by now)
        if _model_type(staged) not in SUPPORTED_TYPES:
            raise CheckpointError("model_type", f"{plan.repo_id} is not a Qwen3.5 checkpoint "
                                  f"(model_type {_model_type(staged)!r})")
        cfg = describe(staged).config                    # ValueError for anything the page would refuse
        if (staged / "tokenizer.json").is_file():
            load_tokenizer(staged, cfg.vocab_size)
        return _move_into_cache(stage, staged)


@contextmanager
def _staging():
    """A private folder inside the HF cache root (the same disk, so moving a checked file in is a rename; its
    dot name is never listed as a checkpoint), removed afterwards whatever happened."""
    cache = hf_hub_cache()
    cache.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=".gdn-staging-", dir=cache))
    try:
        yield stage
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _move_into_cache(stage: Path, staged: Path) -> Path:
    """Move a staged repo (models--owner--name/{blobs,refs,snapshots}) into the cache, blobs first so a
    snapshot's relative links never point at a missing file; returns `staged`'s place in the cache."""
    repo = staged.relative_to(stage).parts[0]
    entries = [p for p in (stage / repo).rglob("*") if p.is_symlink() or p.is_file()]
    for src in sorted(entries, key=lambda p: p.relative_to(stage / repo).parts[0] != "blobs"):
        dst = hf_hub_cache() / src.relative_to(stage)
        dst.parent.mkdir(parents=True, exist_ok=True)
        os.replace(src, dst)                             # a link is moved as a link: its relative target holds
    return hf_hub_cache() / staged.relative_to(stage)
