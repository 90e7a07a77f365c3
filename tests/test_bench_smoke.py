"""The benchmarks run end to end at their tiny --smoke sizes and print their ratio lines.

It asserts that the script works, never how fast anything is (CI machines are shared and noisy)."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

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


def test_kernel_table_smoke_runs_on_a_cpu_and_errors_sit_at_the_floor():
    """--table (the GPU table's code path) at smoke sizes on a CPU, timed by the thread's CPU clock: a row
    per dtype x T x B, and each kernel's distance from the float64 run is float32 rounding for float32
    inputs and at most twice the bfloat16 floor (the float64 output rounded to bfloat16) for bfloat16."""
    run = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_kernels.py"), "--smoke", "--table", "--clock", "cpu"],
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-2000:]
    rows = [line.split("|")[1:-1] for line in run.stdout.splitlines() if re.match(r"\| (float32|bfloat16) \|", line)]
    assert len(rows) == 2 * 2 * 2, run.stdout                          # dtypes x smoke T (33, 64) x B (1, 8)
    for dtype, *_, err_ours, _err_fla, err_hf, floor, _ms_torch_scan, err_torch_scan in (map(str.strip, row)
                                                                                          for row in rows):
        limit = 1e-5 if dtype == "float32" else 2 * float(floor)
        assert max(float(err_ours), float(err_hf), float(err_torch_scan)) < limit, (dtype, err_ours, err_hf, floor)


def test_load_bench_smoke_prints_its_ratios():
    """bench_load.py on a tiny random checkpoint: ours, transformers and a 'before' contender (this same
    checkout), each in a fresh process; only that every ratio line is printed."""
    run = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_load.py"), "--smoke", "--threads", "1",
                          "--before", str(ROOT)], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-2000:]
    assert re.search(r"ratio load\+trace: ours / transformers = [0-9.]+x", run.stdout), run.stdout
    assert re.search(r"ratio load\+trace: before / transformers = [0-9.]+x; before / ours = [0-9.]+x", run.stdout)


def test_memory_bench_smoke_prints_its_ratios():
    """bench_memory.py on a tiny random checkpoint: 1 and 2 replicas, each running the app's own worker (a
    replica process, its fork server and the worker at least), and a 'before' replica (this same checkout, the
    server reading every weight); only that each line is printed."""
    run = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_memory.py"), "--smoke", "--before", str(ROOT)],
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-2000:]
    for label, replicas in (("before", 1), ("ours", 1), ("ours", 2)):
        found = re.search(rf"{label} +{replicas} replica\(s\), (\d+) processes: summed PSS [0-9.]+ GB = [0-9.]+x", run.stdout)
        assert found and int(found[1]) >= 3 * replicas, run.stdout


@pytest.mark.browser
def test_browser_bench_smoke_prints_its_ratio(app_url):
    """bench_browser.py --smoke: the app (the tests' shared server: --url) and the trivial page (its own
    server) in Chromium, one timed key press each."""
    run = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_browser.py"), "--smoke", "--url", app_url],
                         capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-2000:]
    assert re.search(r"ratio browser memory_table \(next/prev key\): page p50 / trivial p50 = [0-9.]+x", run.stdout)


@pytest.mark.browser                  # load_ws.py starts the app server itself (see tests/conftest.py)
def test_load_ws_smoke_serves_every_session():
    """bench/load_ws.py on its own server: 3 websocket sessions (2 on the real-model page, one of which leaves
    right after Run) for 8 s, half a second between a browsing answer and the next click (2 page loads take 4
    runs; 12 s and 1 s before were 4 s more of waiting). Only that the browsing session loaded pages and
    scrubbed, the real-model sessions got their figure and result (n= counts), and none failed."""
    run = subprocess.run([sys.executable, str(ROOT / "bench" / "load_ws.py"), "--sessions", "3", "--real", "2",
                          "--duration", "8", "--ramp", "0", "--think", "0.5",
                          "--timeout", "180", "--server-cpus", "0", "--client-cpus", "0"],
                         capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-2000:]
    out = run.stdout
    assert "failed sessions: 0 []" in out, out
    assert re.search(r"page load: .*\(n=([2-9]|\d\d+)\)", out), out          # memory, then compare...
    assert re.search(r"scrub \(relay, full run\): .*\(n=[1-9]\d*\)", out), out
    assert re.search(r"real model, first figure: .*\(n=2\)", out), out
    assert re.search(r"real model, Run -> result: .*\(n=1\)", out), out           # the other one left after Run


def test_recall_profile_smoke_times_each_variant_and_profiles_a_step():
    """bench/recall_profile.py at its tiny size: a step time and ratio per (conv, TF32) variant, and a profile
    table; the two convolutions it compares compute the same thing (checked here on random data)."""
    run = subprocess.run([sys.executable, str(ROOT / "bench" / "recall_profile.py"), "--smoke"],
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-2000:]
    lines = re.findall(r"conv (grouped|shifted)\s+tf32 (True|False)\s*: +[0-9.]+ ms per step +\([0-9.]+x the first\)", run.stdout)
    assert len(lines) == 4, run.stdout
    sys.path.insert(0, str(ROOT / "bench"))
    import torch
    from recall_profile import CONVS
    x, w = torch.randn(3, 2, 9, 5, dtype=torch.float64), torch.randn(3, 5, 4, dtype=torch.float64)
    assert torch.allclose(CONVS["grouped"](x, w), CONVS["shifted"](x, w), atol=1e-12)


def test_practice_bench_smoke_judges_and_prints_its_ratio():
    """bench_practice.py --only direct -n 2: two correct submissions judged, the floor measured beside them."""
    run = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_practice.py"), "--only", "direct", "-n", "2"],
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-2000:]
    assert re.search(r"verdicts \((sandbox|limits), 2, alternating\): ours p50 [0-9.]+ s, p95 [0-9.]+ s; "
                     r"bare import torch .*; ratio p95 [0-9.]+x", run.stdout), run.stdout
