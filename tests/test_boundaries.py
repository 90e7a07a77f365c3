"""The library stays free of UI code, and nothing reads pickles."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_gdn_does_not_import_streamlit():
    code = ("import sys, gdn, gdn.figures, gdn.steps, gdn.presets, gdn.i18n, gdn.formulas, gdn.stream_table; "
            "import pkgutil, importlib; "
            "[importlib.import_module(m.name) for m in pkgutil.walk_packages(gdn.__path__, 'gdn.')]; "
            "assert 'streamlit' not in sys.modules, 'gdn imported streamlit'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_no_pickle_or_torch_load_outside_tests():
    offenders = [str(p) for p in ROOT.rglob("*.py") if "tests" not in p.parts
                 and any(s in p.read_text(encoding="utf-8") for s in ("torch.load(", "pickle.load"))]
    assert not offenders
