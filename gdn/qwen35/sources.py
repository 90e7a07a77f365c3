"""Where Qwen3.5 checkpoints may be loaded from, and finding them.

Allowed roots: the Hugging Face hub cache (HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub),
the repo's assets/models/, and every folder listed in GDN_MODEL_DIRS (os.pathsep-separated). A folder
outside these roots is refused, so a web user cannot make the server read arbitrary paths.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from gdn.qwen35.config import SUPPORTED_TYPES

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


def check_folder(path: str | Path) -> Path:
    """Return the resolved folder if it lies inside an allowed root, else raise ValueError."""
    try:
        folder = Path(path).expanduser().resolve()
        for root in allowed_roots():
            root = root.expanduser().resolve()
            if folder == root or root in folder.parents:
                if not folder.is_dir():
                    raise ValueError(f"{folder}: no such folder")
                return folder
    except OSError as e:                       # name too long, permission denied, broken mount...
        raise ValueError(f"{path}: cannot be opened ({e.strerror or e}); check the folder name and that "
                         "it is readable") from None
    roots = ", ".join(str(r) for r in allowed_roots())
    raise ValueError(f"{folder} is outside the allowed model folders ({roots}); move the checkpoint into one "
                     "of them or add its parent folder to the GDN_MODEL_DIRS environment variable")


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
    """Every Qwen3.5 checkpoint found in the allowed roots; the shipped trained model first, then the random demo."""
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
                found.append(Source(f"{folder.name} ({root})", folder, "env"))
    found.sort(key=lambda s: (s.kind != "trained", s.kind != "demo"))
    return found


REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def download(repo_id: str, *, revision: str | None = None, hub=None) -> Path:
    """Download a Hugging Face repo's text-model files into the HF cache (needs huggingface_hub).

    Only config, tokenizer and safetensors files are fetched (never pickles). `hub` is the
    huggingface_hub module (tests pass a fake). Returns the snapshot folder.
    """
    if not REPO_ID.match(repo_id or ""):
        raise ValueError(f"{repo_id!r} is not a Hugging Face repo id; use the form owner/name, e.g. Qwen/Qwen3.5-0.8B")
    if hub is None:
        try:
            import huggingface_hub as hub
        except ImportError:
            raise ValueError("downloading needs the huggingface_hub package (pip install huggingface_hub); "
                             "or download the checkpoint yourself into the Hugging Face cache") from None
    folder = Path(hub.snapshot_download(repo_id=repo_id, revision=revision, allow_patterns=WEIGHT_PATTERNS,
                                        cache_dir=str(hf_hub_cache())))
    if _model_type(folder) not in SUPPORTED_TYPES:
        raise ValueError(f"{repo_id} is not a Qwen3.5 checkpoint (model_type {_model_type(folder)!r}); "
                         f"supported: {', '.join(SUPPORTED_TYPES)}")
    return folder
