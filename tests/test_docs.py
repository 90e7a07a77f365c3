"""The project's own map stays whole: every module is named in docs/architecture.md's "What is where", every
path the README, docs/, bench/README.md, the requirements files and CI's script name exists, every relative
link of those pages reaches a file (and its heading, where it names one), the README gives the two commands
for a fresh machine (the second exactly what CI runs) and the pages in learning order, and no code or doc
points at design documents outside the repository."""
import ast
import fnmatch
import json
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


MAP_DOC = ROOT / "docs" / "architecture.md"          # the module map's home (the README links to it)


def module_map() -> str:
    """The fenced block under docs/architecture.md's "## What is where"."""
    doc = MAP_DOC.read_text(encoding="utf-8")
    assert doc.count("## What is where") == 1, f"{MAP_DOC.relative_to(ROOT)} has no single \"## What is where\""
    section = doc.split("## What is where", 1)[1]
    return section.split("```", 2)[1]


def entry_lines(block: str, folders: tuple[str, ...]) -> str:
    """The lines of the deepest entry of `folders` the map has (an entry is a line starting, indented by
    two spaces a level, with `name/` or `name.py`), with the entries below it, up to the next entry at its
    level or above: ("gdn", "ops") is the ops/ entry, ("app_pages", "_real_model", "views") the _real_model/
    one. The whole block when not even the first folder has an entry."""
    lines = block.splitlines()
    heads = [(i, len(m.group(1)) // 2, m.group(2)) for i, line in enumerate(lines)
             if (m := re.match(r"( {0,8})(\S+)(?: {2,}|$)", line)) and line.strip()]
    start, end, level = 0, len(lines), 0
    for folder in folders:
        inside = [(i, lv, name) for i, lv, name in heads if start <= i < end]
        found = [i for i, lv, name in inside if lv == level and name == f"{folder}/"]
        if not found:
            break
        start = found[0]
        end = next((i for i, lv, _ in inside if i > start and lv <= level), end)
        level += 1
    return "\n".join(lines[start:end])


def named_in(block: str, path: Path) -> bool:
    """A module is named by its file stem as a word, in the lines of its folder's entry or below it (a word
    elsewhere in the map names nothing: "training" in recall/'s entry is not gdn/lessons/training.py)."""
    section = entry_lines(block, path.parent.parts)
    return re.search(rf"(?<![\w.]){re.escape(path.stem)}(?![\w])", section) is not None


def test_every_module_is_in_the_readme_map():
    block = module_map()
    modules = [p.relative_to(ROOT) for folder in ("gdn", "app_pages") for p in (ROOT / folder).rglob("*.py")
               if p.name not in ("__init__.py", "__main__.py")]
    missing = sorted(str(p) for p in modules if not named_in(block, p))
    assert modules and not missing, f"add these to docs/architecture.md's module map: {missing}"


def test_the_map_check_catches_an_unnamed_module():
    assert named_in("ops/  naive (recurrent reference), chunk", Path("gdn/ops/naive.py"))
    assert not named_in("ops/  naive_extra", Path("gdn/ops/naive.py"))
    # A prose word in another folder's entry names nothing (it did before: the whole block was searched).
    planted = ("gdn/        the library\n"
               "  lessons/  the toy math of each page: start, memory\n"
               "  recall/   data, tiny models, training, the quick run\n"
               "    demo/   tasks\n"
               "  lru.py    the one bounded LRU map\n"
               "tests/      pytest: kernels, every page\n")
    assert named_in(planted, Path("gdn/lessons/memory.py")) and named_in(planted, Path("gdn/recall/demo/tasks.py"))
    assert named_in(planted, Path("gdn/recall/training.py")) and named_in(planted, Path("gdn/lru.py"))
    assert not named_in(planted, Path("gdn/lessons/training.py"))     # "training" is recall/'s word
    assert not named_in(planted, Path("gdn/lessons/kernels.py"))      # "kernels" is tests/' word
    assert not named_in(planted, Path("gdn/recall/lru.py"))           # lru.py is gdn/'s, below recall/'s entry
    assert re.search(r"(?<![\w.])training(?![\w])", planted)         # the old whole-block check passed these


def test_no_pointer_to_design_documents_outside_the_repo():
    pattern = re.compile(r"qwen35-reference|ARCHITECTURE\.md|\bstyle\.md|\bux\.md|(?<!docs/)teaching-content(?:\.md| §)")
    files = [p for ext in ("*.py", "*.md", "*.json", "*.toml", "*.sh")
             for p in ROOT.rglob(ext) if ".git" not in p.parts and "node_modules" not in p.parts]
    offenders = [str(p.relative_to(ROOT)) for p in files if p.name != "test_docs.py"
                 and pattern.search(p.read_text(encoding="utf-8", errors="replace"))]
    assert not offenders, offenders


# --- Every file path the docs name exists -------------------------------------------------------------------
# The texts read: the README, docs/*.md, bench/README.md, the requirements files and CI's script, every word
# of each (prose, inline code and code blocks alike; a stale name in a comment misleads as much as one in a
# command).
# What counts as a path (after stripping quotes, brackets, "**" and trailing punctuation; words with
# "://", "$", "=" or a leading "/", "~" or "-" are URLs, shell or options, never paths):
#   - a word with a "/" whose first part is a top-level entry of the repository (`tests/x.py`, `deploy/k8s`),
#     or that ends in "/" or a known extension (`views/`, `common/pack.js`);
#   - a word without "/" that ends in a known extension (`REPORT.md`);
#   - `python -m a.b` where `a` is one of the project's packages.
# A path starting at a top-level entry must exist from the root; any other is a file or folder named
# from some folder down (`views/` is app_pages/_real_model/views/). `<name>` and `*` are wildcards and
# `{a,b}` means each of a and b; each must match something.
EXTENSIONS = {"py", "md", "txt", "json", "jsonl", "js", "mjs", "css", "toml", "sh", "yaml", "yml", "html",
              "safetensors", "cfg", "ini", "csv", "svg", "png", "conf"}


def doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "bench" / "README.md",
            *sorted(ROOT.glob("requirements*.txt")), ROOT / ".ci" / "run"]


def repo_paths() -> set[str]:
    """Every file of the checkout (tracked, or new and not ignored) and every folder above one, without a
    trailing "/"."""
    try:
        out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        out = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*")
               if p.is_file() and not {".git", "__pycache__", "node_modules"} & set(p.parts)]
    paths = set(out)
    for f in out:
        parts = f.split("/")
        paths |= {"/".join(parts[:i]) for i in range(1, len(parts))}
    return paths


def named_paths(text: str, top: set[str], packages: set[str]) -> set[str]:
    """The words of `text` that name a file or folder of the repository, by the rule above."""
    found = {f"python -m {m.group(1)}" for m in re.finditer(r"python3? -m ([\w.]+)", text)
             if m.group(1).split(".")[0] in packages}
    for raw in text.replace("**", " ").split():
        word = raw.strip("\"'(`[").rstrip("\"'),.;:`]")
        if (not word or word[0] in "/~-" or any(s in word for s in ("://", "$", "="))
                or not re.fullmatch(r"[\w.*{}<>,/-]+", word)):
            continue
        typed = "." in word.rsplit("/", 1)[-1] and word.rsplit(".", 1)[-1] in EXTENSIONS
        if typed or ("/" in word and (word.split("/")[0] in top or word.endswith("/"))):
            found.add(word)
    return found


def expand(word: str) -> list[str]:
    """`{a,b}` alternatives, each a pattern of its own; `<name>` becomes `*`."""
    word = re.sub(r"<[^<>/]*>", "*", word)
    m = re.search(r"\{([^{}]*)\}", word)
    return ([w for alt in m.group(1).split(",") for w in expand(word[:m.start()] + alt + word[m.end():])]
            if m else [word])


def exists(word: str, paths: set[str], top: set[str]) -> bool:
    """Each alternative of `word` names something: from the root when it starts at a top-level entry, else
    as the end of some path (whole names only: `pack.js` is not found in `unpack.js`)."""
    if word.startswith("python -m "):
        module = word.removeprefix("python -m ").replace(".", "/")
        return f"{module}.py" in paths or f"{module}/__init__.py" in paths
    def found(pattern: str) -> bool:
        pattern = pattern.rstrip("/")
        wanted = [pattern] if pattern.split("/")[0] in top else [pattern, f"*/{pattern}"]
        return any(fnmatch.fnmatchcase(p, w) for p in paths for w in wanted)
    return all(found(w) for w in expand(word))


def missing_paths(text: str) -> list[str]:
    paths = repo_paths()
    top = {p.split("/")[0] for p in paths}
    packages = {p.split("/")[0] for p in paths if p.count("/") == 1 and p.endswith("/__init__.py")}
    return sorted(w for w in named_paths(text, top, packages) if not exists(w, paths, top))


def test_every_named_path_exists():
    missing = {str(f.relative_to(ROOT)): m for f in doc_files()
               if (m := missing_paths(f.read_text(encoding="utf-8")))}
    assert not missing, f"these files name paths the repository does not have: {missing}"


def test_the_path_check_catches_a_planted_bad_path():
    planted = ("Run `tests/pg_server.py` (the real one is devtools/pg_server.py); the table is in\n"
               "```\n_support/   turn (one run at a time), views/ and common/pack.js\n```\n"
               "# CI installs requirements-dev.txt; python -m gdn.recall --quick; python -m gdn.nowhere\n"
               "strings in assets/i18n/{zh,en}/<page>.json and assets/i18n/{zh,xx}/start.json; WY/UT is no path; "
               "nor is http://x/y.py or ~/.cache/a.py; gone: `gdn/ops/state_pass_kernel.py`, oldname.py, lost/")
    assert missing_paths(planted) == ["assets/i18n/{zh,xx}/start.json",
                                      "gdn/ops/state_pass_kernel.py", "lost/", "oldname.py", "python -m gdn.nowhere",
                                      "tests/pg_server.py"]


# --- Every package's docstring lists its modules --------------------------------------------------------------
# A package under gdn/ or app_pages/ (a folder with an __init__.py) names each of its modules in its
# docstring as `name.py` and each of its subpackages as `name/`, a whole word (`views/gates.py` does not name
# gates.py); and every bare `name.py` it mentions is one of its modules or a file of the repository (no
# module that is gone).


def packages() -> list[Path]:
    return sorted(p.parent for folder in ("gdn", "app_pages") for p in (ROOT / folder).rglob("__init__.py"))


def docstring_gaps(doc: str, modules: set[str], subpackages: set[str], elsewhere: frozenset[str] = frozenset()) -> list[str]:
    """What `doc` fails to name of a package's modules and subpackages, then the `name.py` it names that
    are neither a module of the package nor in `elsewhere` (each marked "gone: ")."""
    named = lambda word: re.search(rf"(?<![\w./]){re.escape(word)}(?![\w])", doc) is not None
    unnamed = sorted(w for w in [f"{m}.py" for m in modules] + [f"{s}/" for s in subpackages] if not named(w))
    gone = sorted(f"gone: {m}.py" for m in set(re.findall(r"(?<![\w./])(\w+)\.py\b", doc)) - modules - elsewhere)
    return unnamed + gone


@pytest.mark.parametrize("package", packages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_package_docstring_names_every_module(package: Path):
    doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text(encoding="utf-8"))) or ""
    modules = {p.stem for p in package.glob("*.py") if p.name not in ("__init__.py", "__main__.py")}
    subpackages = {p.parent.name for p in package.glob("*/__init__.py")}
    elsewhere = frozenset(p.stem for p in ROOT.rglob("*.py"))          # app.py, a module of another package
    gaps = docstring_gaps(doc, modules, subpackages, elsewhere)
    assert not gaps, f"{package.relative_to(ROOT)}/__init__.py's docstring: {gaps}"


def test_the_docstring_check_catches_a_missing_module():
    doc = """The kernels.

        naive.py   the token loop; chunk.py: the chunked form (views/scan.py is another package's)
        fused/     the Triton path
        fmt.py     gone since; app.py holds the turn
    """
    assert docstring_gaps(doc, {"naive", "chunk", "scan"}, {"fused"}, frozenset({"app"})) == ["scan.py", "gone: fmt.py"]
    assert docstring_gaps(doc, {"naive", "chunk", "fmt"}, {"fused", "demo"}, frozenset({"app"})) == ["demo/"]
    assert docstring_gaps("naive_extra.py, fusedx/", {"naive"}, {"fused"}) == ["fused/", "naive.py",
                                                                             "gone: naive_extra.py"]


# --- Every relative link reaches its file and heading -----------------------------------------------------------
# A Markdown link `[text](target)` in the README, docs/*.md or bench/README.md whose target is no URL names a
# file from the linking page's folder (`../bench/README.md` from docs/); `#anchor`, alone or after the file,
# must be a heading of that Markdown file, as GitHub spells it (lower case, punctuation dropped, spaces as
# hyphens, "-1", "-2" after a repeated heading).


def anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives the headings of `markdown` (headings inside fenced code are not headings)."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    fenced = False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if fenced or not (m := re.match(r"#{1,6} +(.+?) *#* *$", line)):
            continue
        slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
        found.add(f"{slug}-{seen[slug]}" if slug in seen else slug)
        seen[slug] = seen.get(slug, 0) + 1
    return found


def broken_links(page: Path, text: str) -> list[str]:
    """The relative link targets of `text` (a page at `page`) that reach no file, or no heading of it."""
    broken = []
    for target in re.findall(r"\]\(([^()\s]+)\)", text):
        if re.match(r"[a-z][a-z+.-]*:", target):                 # http:, https:, mailto:
            continue
        name, _, anchor = target.partition("#")
        linked = (page.parent / name).resolve() if name else page
        if not linked.exists() or (anchor and (linked.suffix != ".md"
                                               or anchor not in anchors(linked.read_text(encoding="utf-8")))):
            broken.append(target)
    return broken


def test_every_relative_link_resolves():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "bench" / "README.md"]
    broken = {str(p.relative_to(ROOT)): b for p in pages if (b := broken_links(p, p.read_text(encoding="utf-8")))}
    assert not broken, f"links that reach nothing: {broken}"


def test_the_link_check_catches_a_planted_bad_link():
    page = ROOT / "docs" / "planted.md"
    text = ("[ok](hosting.md) [ok](../bench/README.md#live-class-issue-28) [web](https://example.org/x.md)\n"
            "[gone](hosting-old.md) [bad anchor](architecture.md#no-such-heading) [root](docs/hosting.md)")
    assert broken_links(page, text) == ["hosting-old.md", "architecture.md#no-such-heading", "docs/hosting.md"]
    assert anchors("# A b\n## Where a class's answers wait (issue 24)\n```\n# not a heading\n```\n## A b\n") == {
        "a-b", "where-a-classs-answers-wait-issue-24", "a-b-1"}


# --- The README's opening ---------------------------------------------------------------------------------------
# A fresh machine needs two commands, the README's first two fenced blocks: one installs and runs the app (the
# Dockerfile runs the same, tests/test_deploy.py), one installs the dev requirements and runs the whole suite,
# the very line CI's script runs last. The fast everyday command stands beside them. Then the pages, in the
# order of the learning path (app_pages/_support/path.py), each named by its English title.

APP_COMMAND = "pip install -r requirements.txt && streamlit run app.py"
FAST_COMMAND = 'python -m pytest -q -m "not browser and not slow" -n 2'


def readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


def fenced_blocks(text: str) -> list[str]:
    return [b.strip() for b in re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.M | re.S)]


def ci_test_command() -> str:
    """The last command line of .ci/run: the README's full test command (CI's pip is told to be quiet, `-q`,
    and that is all it adds)."""
    lines = [line for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    return lines[-1].strip().replace("pip install -q -r ", "pip install -r ", 1)


def test_the_readme_gives_the_two_commands_ci_runs():
    blocks = fenced_blocks(readme())
    assert blocks[:2] == [APP_COMMAND, ci_test_command()], blocks[:2]
    assert "python -m pytest" in ci_test_command() and "requirements-dev.txt" in ci_test_command()
    assert FAST_COMMAND in " ".join(readme().split())


def test_the_readme_lists_the_pages_in_learning_order():
    path = ast.parse((ROOT / "app_pages" / "_support" / "path.py").read_text(encoding="utf-8"))
    stops = next(node.value for node in path.body if isinstance(node, ast.Assign)
                 and any(isinstance(t, ast.Name) and t.id == "PATH" for t in node.targets))
    nav = json.loads((ROOT / "assets" / "i18n" / "en" / "nav.json").read_text(encoding="utf-8"))
    wanted = [(nav[call.args[2].value], f"app_pages/{call.args[0].value}.py") for call in stops.elts]
    listed = re.findall(r"^\d+\. \[([^\]]+)\]\(([^)]+)\)", readme(), flags=re.M)
    assert listed == wanted, f"the README's pages differ from the learning path: {listed} != {wanted}"
