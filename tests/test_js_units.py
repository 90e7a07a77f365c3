"""Browser code lives in assets/ as files, linted and tested there with node's own test runner.

The JS unit tests (assets/**/*.test.mjs, node:test + node:assert, linkedom as the DOM where one is needed)
run here through `node --test`, and eslint (eslint.config.mjs) over all of assets/; both are pinned in
package.json / package-lock.json, which `npm ci` installs into node_modules/ (.ci/run does, with Debian's
nodejs and npm). Alone: `npm ci && npx eslint assets && node --test assets/`. Only one file writes the
address bar (assets/common/view.js), and no Python file under app_pages/ holds JS or CSS in a string: the
pages read the files (Path.read_text, once at import) and wrap them in a <script> or <style> tag at most."""
import ast
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ASSETS = ROOT / "assets"
JS_TESTS = sorted(ASSETS.rglob("*.test.mjs"))
TEST_CALL = re.compile(r"^\s*test\(", re.M)          # one test() call per test: no test() in a loop


def node_tools() -> str:
    """node, with the pinned packages installed; skipped only where node or npm is not installed at all."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        pytest.skip("node or npm is not installed: install Debian's nodejs and npm (.ci/run does) to lint and "
                    "unit-test the browser code in assets/")
    assert (ROOT / "node_modules" / ".package-lock.json").exists(), \
        "node_modules/ is missing: run `npm ci` in the repository root (.ci/run does)"
    return node


def test_js_lint_is_clean():
    node = node_tools()
    run = subprocess.run([node, str(ROOT / "node_modules" / "eslint" / "bin" / "eslint.js"), "assets", "eslint.config.mjs"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, f"eslint found problems in assets/:\n{(run.stdout + run.stderr)[-6000:]}"


def test_js_unit_tests_pass():
    node = node_tools()
    assert JS_TESTS, "no assets/**/*.test.mjs found"
    expected = sum(len(TEST_CALL.findall(p.read_text(encoding="utf-8"))) for p in JS_TESTS)
    run = subprocess.run([node, "--test", *map(str, JS_TESTS)], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    report = run.stdout + run.stderr
    assert run.returncode == 0, f"node --test failed:\n{report[-6000:]}"
    counts = {key: int(n) for key, n in re.findall(r"^# (tests|pass) (\d+)$", report, re.M)}
    assert counts.get("tests") == expected and counts.get("pass") == expected, \
        f"{expected} test() calls in {len(JS_TESTS)} files, node reported {counts}:\n{report[-3000:]}"


# What browser code in a Python string looks like. A tag alone ("<script>", "</style>", an f-string's
# "<style>.st-key-" before a name) is a wrapper; a body of code or rules is not.
EXPORT = re.compile(r"export\s+default\s+function")
SCRIPT_BODY = re.compile(r"<script\b[^>]*>((?:(?!</script>).)*)", re.S | re.I)
STYLE_RULE = re.compile(r"<style\b[^>]*>(?:(?!</style>).)*\{[^{}]*:[^{}]*\}", re.S | re.I)
LISTENER = "addEventListener("
TAB_STATE = re.compile(r"\b(?:window|document)\.[A-Za-z_]\w*\s*(?:=[^=]|\()")   # "window.x = ", "document.querySelector("


def browser_code_in(source: str) -> list[str]:
    """Each string constant of `source` (f-strings' literal parts too) that holds JS or CSS, with why."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            continue
        text = node.value
        why = [w for w, hit in (
            ("export default function", EXPORT.search(text)),
            ("<script> with a body", any(re.search(r"[;{}]|=>", body) for body in SCRIPT_BODY.findall(text))),
            ("<style> with rules", STYLE_RULE.search(text)),
            ("addEventListener(", LISTENER in text),
            ("window./document. code", TAB_STATE.search(text)),
        ) if hit]
        if why:
            found.append(f"line {node.lineno}: {', '.join(why)}: {text.strip()[:60]!r}")
    return found


def test_no_browser_code_in_python_strings():
    offenders = {str(p.relative_to(ROOT)): hits for p in sorted((ROOT / "app_pages").rglob("*.py"))
                 if (hits := browser_code_in(p.read_text(encoding="utf-8")))}
    assert not offenders, f"JS or CSS in Python strings; move it to a file under assets/: {offenders}"


PLANTED = '''
"""A docstring may name app_pages/<script>.py or a <style> tag."""
WRAPPED = f"<script>\\n{JS}</script>"
STYLED = f"<style>.st-key-{key} {{ --top: {top}px; }}</style>"
COMPONENT = """
export default function ({ data }) { return data; }
"""
INLINE = "<script>if (!window.x) { window.x = 1; }</script>"
RULES = "<style>.gdn-live-code { font-size: 2.6em; }</style>"
LISTENS = f"document.addEventListener('{name}', go)"
LABELLED = f"<script>window.gdnSkipLabel = {label};\\n{JS}</script>"
'''


def test_the_scan_catches_planted_browser_code():
    hits = browser_code_in(PLANTED)
    assert [h.split(":")[0] for h in hits] == ["line 5", "line 8", "line 9", "line 10", "line 11"], hits
    assert "export default function" in hits[0] and "<script> with a body" in hits[1]
    assert "<style> with rules" in hits[2] and "addEventListener(" in hits[3]
    assert "window./document. code" in hits[4]                 # an f-string's script part: no ; of its own


@pytest.mark.parametrize("wrapper", ['X = f"<script>\\n{JS}</script>"', 'X = "<style>" + CSS + "</style>"'])
def test_a_tag_around_a_file_is_allowed(wrapper):
    assert browser_code_in(wrapper) == []


def browser_and_app_files() -> list[Path]:
    return [p for p in [*ASSETS.rglob("*.js"), *ASSETS.rglob("*.mjs"), *(ROOT / "app_pages").rglob("*.py")]
            if "node_modules" not in p.parts]


def test_only_view_js_writes_the_address_bar():
    writers = sorted(str(p.relative_to(ROOT)) for p in browser_and_app_files()
                     if re.search(r"history\.(replaceState|pushState)\s*\(", p.read_text(encoding="utf-8"))
                     and not p.name.endswith(".test.mjs") and p.name != "fake_tab.mjs")
    assert writers == ["assets/common/view.js"], writers


def test_no_bus_but_view_js_tab_state():
    """The views share one object of the tab, owned by view.js (tab()); the old players' bus is gone."""
    files = [*browser_and_app_files(), *(p for p in (ROOT / "tests").rglob("*.py") if p != Path(__file__))]
    assert not [str(p.relative_to(ROOT)) for p in files if "__gdnPlayers" in p.read_text(encoding="utf-8")]
    owners = sorted(str(p.relative_to(ROOT)) for p in browser_and_app_files()
                    if "__gdnView" in p.read_text(encoding="utf-8") and not p.name.endswith(".mjs"))
    assert owners == ["assets/common/view.js"], owners


def test_the_shared_files_are_listed_alike():
    """What component_js puts in front of every component (pack.py's SHARED_JS) is what the node tests
    assemble (fake_tab.mjs) and what eslint reads the shared names from, in the same order."""
    from app_pages._support.pack import SHARED_JS

    def listed(path: str, name: str) -> list[str]:
        text = (ROOT / path).read_text(encoding="utf-8")
        found = re.search(rf"const {name} = \[([^\]]*)\]", text)
        assert found, f"{path}: no `const {name} = [...]`"
        return [p.removeprefix("assets/") for p in re.findall(r'"([^"]+)"', found.group(1))]

    assert listed("assets/common/fake_tab.mjs", "SHARED") == list(SHARED_JS)
    assert listed("eslint.config.mjs", "SHARED") == list(SHARED_JS)
    assert all((ASSETS / p).is_file() for p in SHARED_JS)
