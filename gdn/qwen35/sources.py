"""Where Qwen3.5 checkpoints may be loaded from, and finding them.

Allowed roots: the Hugging Face hub cache (HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub),
the repo's assets/models/, and every folder listed in GDN_MODEL_DIRS (os.pathsep-separated). A folder
outside these roots is refused, so a web user cannot make the server read arbitrary paths.
"""
from __future__ import annotations

import fnmatch
import json
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path

from gdn.qwen35.config import SUPPORTED_TYPES, load_config
from gdn.qwen35.errors import CheckpointError

ASSETS_MODELS = Path(__file__).resolve().parents[2] / "assets" / "models"
DEMO_NAME = "qwen35-demo-random"
DEMO_PATH = ASSETS_MODELS / DEMO_NAME
# The app's default: a small Qwen3.5-format model trained on gdn.qwen35.demo.tasks (python -m gdn.qwen35.demo.train).
TRAINED_NAME = "qwen35-demo-trained"
TRAINED_PATH = ASSETS_MODELS / TRAINED_NAME
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


def check_folder(path: str | Path) -> Path:
    """Return the resolved folder if it, and every file the app would read from it (config, tokenizer,
    weights, index: a symlink may point anywhere), lies inside an allowed root; else raise ValueError.
    Messages name the folder as given, never the resolved path or the roots (a web user sees them)."""
    try:
        folder = Path(path).expanduser().resolve()
        if not _inside_roots(folder):
            raise CheckpointError("outside_roots", f"{path} is outside the allowed model folders; move the checkpoint into one of them, "
                             "or ask the operator to add its parent folder to GDN_MODEL_DIRS")
        if not folder.is_dir():
            raise CheckpointError("no_folder", f"{path}: no such folder")
        outside = [f.name for pattern in WEIGHT_PATTERNS for f in folder.glob(pattern) if not _inside_roots(f)]
    except OSError as e:                       # name too long, permission denied, broken mount...
        raise ValueError(f"{path}: cannot be opened ({e.strerror or e}); check the folder name and that "
                         "it is readable") from None
    if outside:
        raise CheckpointError("outside_roots", f"{path}: {outside[0]} links outside the allowed model folders; the app reads only "
                         "files inside them (copy the file instead of linking it)")
    return folder


@dataclass(frozen=True)
class Source:
    label: str      # what a picker shows, e.g. "Qwen/Qwen3.5-0.8B (HF cache)"
    path: Path      # checkpoint folder (holds config.json)
    kind: str       # "trained" | "demo" | "assets" | "hf-cache" | "env"
    random_weights: bool = False  # True for the shipped demo: its gates mean nothing


def _model_type(folder: Path) -> str | None:
    try:
        return json.loads((folder / "config.json").read_text(encoding="utf-8")).get("model_type")
    except (OSError, ValueError, AttributeError):
        return None


def _has_weights(folder: Path) -> bool:
    return any(folder.glob("*.safetensors"))


def list_sources() -> list[Source]:
    """Every Qwen3.5 checkpoint found in the allowed roots that check_folder accepts (a symlinked folder
    that leads outside them is left out); the shipped trained model first, then the random demo."""
    found: list[Source] = []
    for folder in sorted(p.parent for p in ASSETS_MODELS.glob("*/config.json")):
        if _model_type(folder) in SUPPORTED_TYPES and _has_weights(folder):
            demo, trained = folder.name == DEMO_NAME, folder.name == TRAINED_NAME
            kind = "demo" if demo else "trained" if trained else "assets"
            note = "random weights" if demo else "trained on the demo tasks" if trained else "assets"
            found.append(Source(f"{folder.name} ({note})", folder, kind, random_weights=demo))
    for snap in sorted(hf_hub_cache().glob("models--*/snapshots/*/config.json")):
        folder = snap.parent
        if _model_type(folder) in SUPPORTED_TYPES and _has_weights(folder):
            repo = folder.parents[1].name[len("models--"):].replace("--", "/")
            found.append(Source(f"{repo} (HF cache, {folder.name[:7]})", folder, "hf-cache"))
    for root in allowed_roots()[2:]:
        for cfg in sorted([*root.glob("config.json"), *root.glob("*/config.json")]):
            folder = cfg.parent
            if _model_type(folder) in SUPPORTED_TYPES and _has_weights(folder):
                found.append(Source(f"{folder.name} (GDN_MODEL_DIRS)", folder, "env"))   # no server path shown
    found.sort(key=lambda s: (s.kind != "trained", s.kind != "demo"))
    return [s for s in found if _accepted(s.path)]


def _accepted(folder: Path) -> bool:
    try:
        check_folder(folder)
    except ValueError:
        return False
    return True


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
    config.json (fetched alone) a Qwen3.5 model, and the files' total size under the cap.
    `hub` is the huggingface_hub module (tests pass a fake)."""
    if not REPO_ID.match(repo_id or ""):
        raise CheckpointError("repo_id", f"{repo_id!r} is not a Hugging Face repo id; use the form owner/name, e.g. Qwen/Qwen3.5-0.8B")
    hub = _hub(hub)
    config = Path(hub.hf_hub_download(repo_id=repo_id, filename="config.json", revision=revision,
                                      cache_dir=str(hf_hub_cache())))
    cfg = load_config(config.parent)                     # ValueError: not Qwen3.5, or malformed
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
    """Fetch the planned files into the HF cache, one at a time; progress(done_bytes, total_bytes, name)
    after each. Only config, tokenizer and safetensors files (never pickles). Returns the snapshot folder."""
    hub = _hub(hub)
    fetch = lambda name: Path(hub.hf_hub_download(repo_id=plan.repo_id, filename=name, revision=plan.revision,
                                                  cache_dir=str(hf_hub_cache())))
    done = 0
    for name, size in plan.files:
        fetch(name)
        done += size
        if progress is not None:
            progress(done, plan.total_bytes, name)
    folder = fetch("config.json").parent                 # the snapshot folder (config.json is cached by now)
    if _model_type(folder) not in SUPPORTED_TYPES:
        raise CheckpointError("model_type", f"{plan.repo_id} is not a Qwen3.5 checkpoint (model_type {_model_type(folder)!r})")
    return folder
