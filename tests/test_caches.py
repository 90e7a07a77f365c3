"""The cache registry (app_pages/_support/caches.py) lists every cache, each page has its own namespaces,
and a shared figure's key is made from its function's arguments.

What counts as a cache (read from the syntax tree of every .py under app_pages/ and gdn/, `find_caches`):
  - a function decorated with st.cache_data / st.cache_resource (bare or called), functools.lru_cache,
    lru_cache, functools.cache or cache;
  - a module-level name assigned such a maker applied to a function (`reference = st.cache_data(load)`), or
    a module-level decorator made by one (`cached = st.cache_data(max_entries=...)`): then every
    module-level `name = cached(f)` and every function decorated `@cached` is a cache, with its bound;
  - a module-level name assigned LRU(...) (gdn/lru.py);
  - a module-level name assigned an empty map ({}, dict(), OrderedDict(), defaultdict(...)) that a function
    of the same module writes by key (name[k] = ..., name.setdefault / update): a hand-made cache. It is
    refused outright (unbounded, unlocked): make it an LRU. A map filled at import (player.RELAYED, filled
    by swap.py's module body) is a registry, not a cache; sets and lists are not scanned.
Decorated functions are found anywhere in a module (methods and nested functions too); the assignments
only at the top level of a module. Not scanned: LRUs or maps made inside functions or classes
(compute.shared_caches' LRUs are SHARED's, tested below), makers imported under other names.
"""
import ast
import importlib
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from app_pages._support.caches import BOUNDS, LIBRARY, SHARED, STREAMLIT
from app_pages._support.figures import fingerprint

ROOT = Path(__file__).resolve().parent.parent
SHARED_USE = re.compile(r'(?:compute\.)?(?:cached\(|run_job\(|shared_caches\(\)\[)"([\w.]+)"')
MAKERS = {"st.cache_data", "st.cache_resource", "functools.lru_cache", "lru_cache", "functools.cache", "cache"}
BOUND_ARGS = {"max_entries", "maxsize"}
EMPTY_MAPS = {"dict", "OrderedDict", "collections.OrderedDict", "defaultdict", "collections.defaultdict"}
UNBOUNDED = object()                  # functools.cache: no bound can be given


def sources() -> dict[str, str]:
    files = [*(ROOT / "app_pages").rglob("*.py"), *(ROOT / "gdn").rglob("*.py")]
    return {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in files}


def owner_path(owner: str) -> str:
    return owner if owner.startswith("gdn/") else f"app_pages/{owner}"


@dataclass(frozen=True)
class Found:
    path: str
    name: str
    bound: object             # the bound's expression (ast), None (none given), UNBOUNDED, or "hand-made"
    line: int


def _maker(node: ast.expr, local: dict) -> tuple[bool, object] | None:
    """A decorator or a call's function: (found, bound expression or None), None when it makes no cache."""
    call = node if isinstance(node, ast.Call) else None
    name = ast.unparse(call.func if call else node)
    if name in local:
        return True, local[name]
    if name not in MAKERS:
        return None
    if name in ("functools.cache", "cache"):
        return True, UNBOUNDED
    bound = next((k.value for k in (call.keywords if call else ()) if k.arg in BOUND_ARGS), None)
    if bound is None and call and name.endswith("lru_cache") and call.args:
        bound = call.args[0]                                # lru_cache(32)
    return True, bound


def _writes(tree: ast.Module, name: str) -> bool:
    """Whether a function of the module writes the module-level map `name` by key."""
    for fn in (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
        for n in ast.walk(fn):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, ast.AugAssign) else []
            if any(isinstance(t, ast.Subscript) and ast.unparse(t.value) == name for t in targets):
                return True
            if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and ast.unparse(n.func.value) == name
                    and n.func.attr in ("setdefault", "update", "__setitem__")):
                return True
    return False


def find_caches(path: str, text: str) -> list[Found]:
    tree, found, local = ast.parse(text), [], {}          # local: module-level decorators made by a maker
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            name, value = ast.unparse(targets[0]), node.value
            if not isinstance(value, (ast.Call, ast.Dict)):
                continue
            if isinstance(value, ast.Dict):
                if not value.keys and _writes(tree, name):
                    found.append(Found(path, name, "hand-made", node.lineno))
                continue
            func = ast.unparse(value.func)
            if func == "LRU":
                found.append(Found(path, name, value.args[0] if value.args else None, node.lineno))
            elif func in EMPTY_MAPS and len(value.args) <= (func.endswith("defaultdict")) and not value.keywords:
                if _writes(tree, name):
                    found.append(Found(path, name, "hand-made", node.lineno))
            elif (made := _maker(value, local)) is not None:
                if value.args or func in local:                 # a maker applied to a function
                    found.append(Found(path, name, made[1], node.lineno))
                else:                                           # a decorator to apply later
                    local[name] = made[1]
            elif isinstance(value.func, ast.Call) and (made := _maker(value.func, local)) is not None:
                found.append(Found(path, name, made[1], node.lineno))       # lru_cache(maxsize=...)(f)
        for n in ast.walk(node) if not isinstance(node, (ast.Assign, ast.AnnAssign)) else ():
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for deco in n.decorator_list:
                    if (made := _maker(deco, local)) is not None:
                        found.append(Found(path, n.name, made[1], n.lineno))
    return found


def registered() -> dict[tuple[str, str], tuple[str, object]]:
    """(file, name) -> (the entry's name, its bound) for every cache named in STREAMLIT and LIBRARY."""
    return {(owner_path(c.owner), name): (entry, c.bound)
            for entry, c in (*STREAMLIT.items(), *LIBRARY.items()) for name in c.names}


def problems(files: dict[str, str]) -> list[str]:
    """Why the registry and the source disagree, one line each (none: they agree)."""
    known, out, seen = registered(), [], set()
    for path, text in sorted(files.items()):
        for f in find_caches(path, text):
            where = f"{f.path}:{f.line} {f.name}"
            seen.add((f.path, f.name))
            if f.bound == "hand-made":
                out.append(f"{where}: a hand-made map cache (unbounded, unlocked): make it an LRU (gdn/lru.py)")
                continue
            if (f.path, f.name) not in known:
                out.append(f"{where}: a cache not named in app_pages/_support/caches.py")
                continue
            entry, bound = known[f.path, f.name]
            if f.bound is None or f.bound is UNBOUNDED:
                if not isinstance(bound, str):
                    out.append(f"{where}: unbounded in the source, but caches.py gives it {bound!r}")
            elif any(isinstance(n, ast.Constant) and not isinstance(n.value, str) for n in ast.walk(f.bound)):
                out.append(f"{where}: a number written as its bound ({ast.unparse(f.bound)}): name it in "
                           + ("BOUNDS" if f.path.startswith("app_pages/") else "a constant caches.py reads"))
            elif f.path.startswith("app_pages/") and ast.unparse(f.bound) != f"BOUNDS['{entry}']":
                out.append(f"{where}: its bound is {ast.unparse(f.bound)}, not BOUNDS[{entry!r}] (its entry)")
            elif f.path.startswith("app_pages/") and bound != BOUNDS.get(entry):
                out.append(f"{where}: caches.py's {entry} gives {bound!r}, not BOUNDS[{entry!r}]")
            elif not isinstance(bound, int):
                out.append(f"{where}: bounded in the source, but caches.py's {entry} gives {bound!r}")
    out += [f"caches.py names {name} in {path}, which holds no such cache" for path, name in set(known) - seen
            if path in files]
    return out


def test_every_cache_in_the_source_is_in_the_registry_with_its_bound():
    files = sources()
    assert problems(files) == []
    assert all(c.names for c in (*STREAMLIT.values(), *LIBRARY.values())), "an entry names none of its caches"
    assert {path for path, _ in registered()} <= set(files), "an owner that is not a file"
    used = {e for e, c in STREAMLIT.items() if c.bound == BOUNDS.get(e)}
    assert set(BOUNDS) == used, f"BOUNDS without their entry in STREAMLIT: {set(BOUNDS) - used}"


PLANTED = {
    "@st.cache_data\ndef planted(x):\n    return x\n": "a cache not named",
    "import functools\n@functools.lru_cache(maxsize=None)\ndef planted(x):\n    return x\n": "a cache not named",
    "from gdn.lru import LRU\nplanted = LRU(8)\n": "a cache not named",
    "_rooms = {}\ndef room(code):\n    _rooms[code] = 1\n": "a hand-made map cache",
    "from collections import OrderedDict\n_seen = OrderedDict()\ndef see(k):\n    _seen.setdefault(k, 1)\n":
        "a hand-made map cache",
    "cached = st.cache_data(show_spinner=False)\nplanted = cached(len)\n": "a cache not named",
    "cached = st.cache_resource(max_entries=4)\n@cached\ndef planted():\n    return 1\n": "a cache not named",
    "class Planted:\n    @functools.cache\n    def method(self):\n        return 1\n": "a cache not named",
}


@pytest.mark.parametrize("source", PLANTED)
def test_a_planted_unregistered_cache_is_told_apart(source):
    found = problems({**sources(), "app_pages/_planted.py": source})
    assert len(found) == 1 and found[0].startswith("app_pages/_planted.py") and PLANTED[source] in found[0], found


def test_a_registered_cache_with_a_written_or_wrong_bound_is_told_apart():
    files = sources()
    path = "app_pages/_support/compute.py"
    for wrong, said in (('max_entries=BOUNDS["compute._scan"]', "max_entries=2"),
                        ('max_entries=BOUNDS["compute._scan"]', 'max_entries=BOUNDS["compute.model"]'),
                        ('@st.cache_resource(max_entries=BOUNDS["compute._scan"], show_spinner=False)',
                         "@st.cache_resource")):
        assert wrong in files[path]
        planted = {**files, path: files[path].replace(wrong, said)}
        assert [p for p in problems(planted) if " _scan:" in p], said
    tables = "gdn/figures/tables.py"
    planted = {**files, tables: files[tables].replace("maxsize=SCALES_KEPT", "maxsize=32")}
    assert any("a number written as its bound (32)" in p for p in problems(planted))
    planted = {**files, "app_pages/_live.py": files["app_pages/_live.py"].replace("_recent_rooms", "_rooms_seen")}
    assert any("_rooms_seen: a cache not named" in p for p in problems(planted))
    assert any("names _recent_rooms in app_pages/_live.py, which holds no such cache" in p for p in problems(planted))


def test_the_librarys_bounds_are_what_its_caches_keep():
    for entry, c in LIBRARY.items():
        module = importlib.import_module(owner_path(c.owner).removesuffix(".py").replace("/", "."))
        for name in c.names:
            cache = getattr(module, name)
            kept = cache.cache_parameters()["maxsize"] if hasattr(cache, "cache_parameters") else cache.maxsize
            assert kept == c.bound if isinstance(c.bound, int) else kept is None, (entry, name, kept)


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
