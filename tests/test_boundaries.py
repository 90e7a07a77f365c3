"""The layout holds: imports flow one way with no cycle, the library stays free of UI code, and
nothing reads pickles. The import graph is read from the source (ast), so a lazy import inside a
function counts as much as one at the top of a file."""
import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Each group may import itself and the groups after it, never one before it (docs/architecture.md).
LAYERS = [("app",), ("app_pages",), ("gdn.figures", "gdn.qwen35", "gdn.recall", "gdn.practice"), ("gdn.lessons",),
          ("gdn.ops", "gdn.i18n", "gdn.lru", "gdn.live", "gdn.units", "gdn.timing", "gdn.rules")]
# Pairs that the layer order would allow but that must not exist: the real-model code (gdn.qwen35) is
# not built on the toy lessons; what both need (units, kernels) lives below both.
FORBIDDEN = [("gdn.qwen35", "gdn.lessons")]


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_modules() -> dict[str, Path]:
    files = [ROOT / "app.py", *(ROOT / "app_pages").rglob("*.py"), *(ROOT / "gdn").rglob("*.py")]
    return {module_name(p): p for p in files}


def imports_of(path: Path, known: set[str]) -> set[str]:
    """Project modules that `path` imports anywhere in its body ("from a import b" counts a.b when
    a.b is a module, else a)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in known else node.module
                      for a in node.names}
    return {m for m in found if m in known}


def import_graph() -> dict[str, set[str]]:
    modules = project_modules()
    known = set(modules)
    return {name: imports_of(path, known) for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle as a list of nodes (first == last), or None. Iterative DFS with colours."""
    state = {}
    for root in sorted(graph):
        if root in state:
            continue
        path, iters = [root], [iter(sorted(graph[root]))]
        state[root] = "open"
        while path:
            nxt = next(iters[-1], None)
            if nxt is None:
                state[path.pop()] = "done"
                iters.pop()
            elif state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            elif nxt not in state:
                state[nxt] = "open"
                path.append(nxt)
                iters.append(iter(sorted(graph.get(nxt, ()))))
    return None


def group_of(module: str) -> int:
    for rank, names in enumerate(LAYERS):
        if any(module == n or module.startswith(n + ".") for n in names):
            return rank
    raise AssertionError(f"{module} belongs to no layer of docs/architecture.md; add it to LAYERS")


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Module edges lifted to the packages right under gdn/ and app_pages/ (gdn.qwen35.demo.tasks ->
    gdn.qwen35), self-edges dropped: a cycle here is two packages that need each other."""
    top = lambda m: ".".join(m.split(".")[:2])
    out: dict[str, set[str]] = {}
    for src, dsts in graph.items():
        out.setdefault(top(src), set()).update(top(d) for d in dsts if top(d) != top(src))
    return out


def test_module_graph_has_no_cycle():
    assert find_cycle(import_graph()) is None


def test_package_graph_has_no_cycle():
    assert find_cycle(package_graph(import_graph())) is None


def test_imports_flow_downward():
    upward = [(src, dst) for src, dsts in import_graph().items() for dst in dsts
              if "gdn" not in (src, dst) and group_of(dst) < group_of(src)]   # gdn/__init__ re-exports ops
    assert not upward, f"imports against the layer order: {upward}"


@pytest.mark.parametrize("src, dst", FORBIDDEN)
def test_forbidden_imports_stay_absent(src, dst):
    inside = lambda module, package: module == package or module.startswith(package + ".")
    found = [(a, b) for a, bs in import_graph().items() for b in bs if inside(a, src) and inside(b, dst)]
    assert not found, f"{src} must not import {dst}: {found}"


def documented_layers(doc: str) -> list[set[str]]:
    """The groups of the first code block under docs/architecture.md's "## Layers", top to bottom. A line
    starts a group with its names (the text before two spaces: `app.py`, `app_pages/`, `gdn.ops, gdn.i18n,`);
    a line whose names end with "," goes on into the next line's; a line that starts with spaces only
    continues the description."""
    block = doc.split("## Layers", 1)[1].split("```", 2)[1]
    groups, carry_on = [], False
    for line in block.splitlines():
        left = "" if line[:1].isspace() else re.split(r"\s{2,}", line, maxsplit=1)[0]
        names = {re.sub(r"(\.py|/)$", "", n) for n in re.split(r",\s*", left) if n}
        if names:
            (groups[-1].update if carry_on else groups.append)(names)
            carry_on = left.endswith(",")
    return groups


def test_architecture_doc_lists_the_layers():
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert documented_layers(doc) == [set(group) for group in LAYERS], (
        "docs/architecture.md's layers and LAYERS differ: change both together")
    for src, dst in FORBIDDEN:
        assert f"`{src}` never imports `{dst}`" in doc, f"docs/architecture.md should say {src} never imports {dst}"


def test_the_layer_reader_catches_a_missing_module():
    doc = """## Layers
```
app.py                     chrome
app_pages/                 pages
gdn.figures, gdn.qwen35,   figures | the real model |
gdn.recall                 recall
                           (a description that goes on)
gdn.lessons                toys
gdn.ops, gdn.units         kernels | units
```
"""
    assert documented_layers(doc) == [{"app"}, {"app_pages"}, {"gdn.figures", "gdn.qwen35", "gdn.recall"},
                                      {"gdn.lessons"}, {"gdn.ops", "gdn.units"}]
    assert documented_layers(doc) != [set(group) for group in LAYERS]   # no gdn.i18n, gdn.lru, ...


def test_cycle_finder_finds_a_planted_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
    assert package_graph({"gdn.x.m": {"gdn.y.n"}, "gdn.y.n": {"gdn.x.k"}}) == {"gdn.x": {"gdn.y"}, "gdn.y": {"gdn.x"}}


UI_FREE = [
    ("gdn", {"streamlit", "plotly"}),
    ("gdn.lessons, gdn.ops", {"streamlit", "plotly"}),
    ("gdn.qwen35", {"streamlit", "plotly"}),
    ("gdn.recall, gdn.recall.sweep, gdn.recall.inspect, gdn.recall.quick", {"streamlit", "plotly"}),
    ("gdn.figures", {"streamlit"}),
]
EVERY_GDN_MODULE = "every module of gdn"
# One child process imports torch (what every group below needs, and no UI code), then forks once per group:
# each fork starts from that interpreter, imports the group and reports which banned modules it loaded (or
# its error). A fresh interpreter per group cost a torch import each (about 1.2 s; six of them).
FORKS = r"""
import importlib, json, os, pkgutil, sys, traceback
import torch
def load(modules):
    if modules == EVERY:
        import gdn
        return [importlib.import_module(m.name) for m in pkgutil.walk_packages(gdn.__path__, "gdn.")]
    return [importlib.import_module(m) for m in modules.split(", ")]
EVERY, report = sys.argv[1], {"before": sorted({"streamlit", "plotly"} & set(sys.modules))}
for modules, banned in json.loads(sys.argv[2]):
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            load(modules)
            out = {"loaded": sorted(set(banned) & set(sys.modules))}
        except BaseException:
            out = {"error": traceback.format_exc()}
        os.write(write, json.dumps(out).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as f:
        report[modules] = json.loads(f.read())
    os.waitpid(pid, 0)
print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def banned_loaded() -> dict:
    groups = [(m, sorted(b)) for m, b in UI_FREE] + [(EVERY_GDN_MODULE, ["streamlit"])]
    out = subprocess.run([sys.executable, "-c", FORKS, EVERY_GDN_MODULE, json.dumps(groups)], check=True, cwd=ROOT,
                         capture_output=True, text=True)
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["before"] == [], report                          # torch itself loaded no UI code
    return report


@pytest.mark.parametrize("modules, banned", UI_FREE)
def test_library_stays_free_of_ui_code(banned_loaded, modules, banned):
    assert banned_loaded[modules] == {"loaded": []}, banned_loaded[modules]


def test_no_module_of_gdn_imports_streamlit(banned_loaded):
    assert banned_loaded[EVERY_GDN_MODULE] == {"loaded": []}, ("gdn imported streamlit", banned_loaded[EVERY_GDN_MODULE])


def test_plotly_only_in_figures():
    def imports_plotly(path):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n.split(".")[0] == "plotly" for n in names):
                return True
        return False
    offenders = [str(p) for p in (ROOT / "gdn").rglob("*.py") if "figures" not in p.parts and imports_plotly(p)]
    assert not offenders


def test_no_assert_for_validation_in_the_library():
    """`assert` vanishes under python -O; the library validates with ValueError."""
    offenders = [f"{p}:{node.lineno}" for p in (ROOT / "gdn").rglob("*.py")
                 for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))) if isinstance(node, ast.Assert)]
    assert not offenders


def test_no_pickle_or_torch_load_outside_tests():
    offenders = [str(p) for p in ROOT.rglob("*.py") if "tests" not in p.parts
                 and any(s in p.read_text(encoding="utf-8") for s in ("torch.load(", "pickle.load"))]
    assert not offenders


def test_tracebacks_are_never_shown():
    """A traceback names server paths; every expected error is a translated message instead."""
    import tomllib
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["client"]["showErrorDetails"] == "none"
