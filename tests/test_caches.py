"""The cache registry (app_pages/_support/caches.py) lists every cache, each page has its own namespaces,
and a shared figure's key is made from its function's arguments."""
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from app_pages._support.caches import LIBRARY, SHARED, STREAMLIT
from app_pages._support.figures import fingerprint

ROOT = Path(__file__).resolve().parent.parent
CACHE_MARKS = re.compile(r"st\.cache_resource|st\.cache_data|lru_cache\(|@cache\b|\bLRU\(")
SHARED_USE = re.compile(r'(?:compute\.)?cached\("([\w.]+)"')


def sources() -> dict[str, str]:
    files = [*(ROOT / "app_pages").rglob("*.py"), *(ROOT / "gdn").rglob("*.py")]
    return {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in files}


def owner_path(owner: str) -> str:
    return owner if owner.startswith("gdn/") else f"app_pages/{owner}"


def test_every_file_with_a_cache_is_an_owner_in_the_registry():
    owners = {owner_path(c.owner) for c in (*STREAMLIT.values(), *LIBRARY.values())}
    # the LRU class itself, and compute.py's shared caches (listed one by one in SHARED)
    makers = {"gdn/lru.py", "app_pages/_support/caches.py"}
    with_caches = {path for path, text in sources().items() if CACHE_MARKS.search(text)} - makers
    assert with_caches - owners == set(), "caches missing from app_pages/_support/caches.py"
    assert owners - with_caches == set(), "registry entries whose owner holds no cache"


def test_every_shared_namespace_is_used_by_its_owner_and_belongs_to_one_page():
    used = {}
    for path, text in sources().items():
        for namespace in SHARED_USE.findall(text):
            used.setdefault(namespace, set()).add(path)
    assert set(used) == set(SHARED), set(used) ^ set(SHARED)
    for namespace, paths in used.items():
        assert paths == {owner_path(SHARED[namespace].owner)}, (namespace, paths)
        page = namespace.split(".")[0]                     # "real_model.run" -> the real-model page's files
        assert all(p in (f"app_pages/{page}.py",) or p.startswith(f"app_pages/_{page}") for p in paths), paths
    assert all(isinstance(c.bound, int) and c.bound > 0 for c in SHARED.values())


@dataclass(frozen=True)
class Point:
    xy: np.ndarray
    name: str


def test_figure_keys_follow_the_data():
    a = np.arange(6.0).reshape(2, 3)
    assert fingerprint((a, {"title": "α"}, 14)) == fingerprint((a.copy(), {"title": "α"}, 14))
    b = a.copy()
    b[1, 2] += 1e-12                                           # one number differs: another figure
    assert fingerprint(a) != fingerprint(b)
    assert fingerprint(a) != fingerprint(a.reshape(3, 2)) != fingerprint(a.astype(np.float32))
    assert fingerprint({"title": "α"}) != fingerprint({"title": "a"})      # another language's labels
    assert fingerprint(1) != fingerprint(1.0) != fingerprint(True)
    assert fingerprint(Point(a, "p")) == fingerprint(Point(a.copy(), "p")) != fingerprint(Point(b, "p"))
    with pytest.raises(TypeError, match="cannot name a figure"):
        fingerprint(object())
