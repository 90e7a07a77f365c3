"""The kernel benchmark runs end to end at its tiny --smoke size and prints its ratio and floor lines.

It asserts that the script works, never how fast anything is (CI machines are shared and noisy)."""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_bench_smoke_prints_ratios():
    run = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_kernels.py"), "--smoke"],
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-2000:]
    out = run.stdout
    for T in (33, 64):  # the smoke lengths: one ragged, one a multiple of the smoke chunk size
        assert re.search(rf"ratio T={T} chunk: transformers chunk / ours chunk = [0-9.]+x", out), out
        assert re.search(rf"ratio T={T} recurrent: ours recurrent / ours chunk = [0-9.]+x", out), out
        assert re.search(rf"ratio T={T} recurrent: transformers recurrent / ours recurrent = [0-9.]+x", out), out
        assert re.search(rf"floor T={T}: .* ours chunk is [0-9.]+x the floor", out), out
    # ours and transformers compute the same function: the printed output difference is tiny
    diffs = [float(x) for x in re.findall(r"output rel\. diff ([0-9.e+-]+)\)", out)]
    assert len(diffs) == 2 and max(diffs) < 1e-5, out
