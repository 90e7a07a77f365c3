"""The project's own map stays whole: every module is named in the README's "What is where", and no
code or doc points at design documents outside the repository."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def module_map() -> str:
    """The fenced block under the README's "## What is where"."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## What is where", 1)[1]
    return section.split("```", 2)[1]


def named_in(block: str, path: Path) -> bool:
    """A module is named by its file stem as a word, in the lines of its folder's entry or below it."""
    return re.search(rf"(?<![\w.]){re.escape(path.stem)}(?![\w])", block) is not None


def test_every_module_is_in_the_readme_map():
    block = module_map()
    modules = [p for folder in ("gdn", "app_pages") for p in (ROOT / folder).rglob("*.py")
               if p.name not in ("__init__.py", "__main__.py")]
    missing = sorted(str(p.relative_to(ROOT)) for p in modules if not named_in(block, p))
    assert modules and not missing, f"add these to the README's module map: {missing}"


def test_the_map_check_catches_an_unnamed_module():
    assert named_in("ops/  naive (recurrent reference), chunk", Path("gdn/ops/naive.py"))
    assert not named_in("ops/  naive_extra", Path("gdn/ops/naive.py"))


def test_no_pointer_to_design_documents_outside_the_repo():
    pattern = re.compile(r"qwen35-reference|ARCHITECTURE\.md|\bstyle\.md|\bux\.md|(?<!docs/)teaching-content(?:\.md| §)")
    files = [p for ext in ("*.py", "*.md", "*.json", "*.toml", "*.sh")
             for p in ROOT.rglob(ext) if ".git" not in p.parts and "node_modules" not in p.parts]
    offenders = [str(p.relative_to(ROOT)) for p in files if p.name != "test_docs.py"
                 and pattern.search(p.read_text(encoding="utf-8", errors="replace"))]
    assert not offenders, offenders
