"""Chunking: the affine-map view, the in-chunk matrices and the kernel agreement, against independent
derivations; and the page through AppTest in both languages."""
import json
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from gdn import timing as kernel_timing
from gdn.figures.chunking import fig_kernel_agreement, fig_timing, matrix_row_html
from gdn.lessons import chunking as ce
from gdn.lessons.memory import random_stream
from gdn.lessons.stream import Stream, step_records
from tests.apptest import open_app


def test_composed_maps_replay_the_whole_stream():
    s = random_stream(T=9, K=3, V=2, seed=4)
    A, U = ce.affine_maps(s)
    A_all, U_all = ce.compose(list(zip(A, U)))
    np.testing.assert_allclose(A_all @ s.S0 + U_all, step_records(s).S_new[-1], atol=1e-12)


def test_merging_is_associative_but_not_commutative():
    s = random_stream(T=6, K=3, V=3, seed=2)
    maps = list(zip(*ce.affine_maps(s)))
    left = ce.compose([ce.compose(maps[:3]), ce.compose(maps[3:])])
    flat = ce.compose(maps)
    np.testing.assert_allclose(left[0], flat[0], atol=1e-14)
    np.testing.assert_allclose(left[1], flat[1], atol=1e-14)
    swapped = ce.compose([maps[1], maps[0]])
    assert np.abs(swapped[0] - ce.compose(maps[:2])[0]).max() > 1e-3


def test_chunk_matrices_solve_for_the_true_writes():
    """U' = (I + strict)^-1 diag(beta) (V - diag(e^gamma) K S0) must equal what each token really
    writes, read off the step records: beta_t * error_t."""
    s = random_stream(T=7, K=3, V=2, seed=8)
    s = Stream(k=s.k, v=s.v, q=s.q, alpha=s.alpha, beta=s.beta, S0=np.random.default_rng(1).normal(size=(3, 2)))
    C, chunk = 4, 1
    m = ce.chunk_matrices(s, C, chunk)
    rec = step_records(s)
    lo, hi = C * chunk, min(C * chunk + C, 7)
    S_start = rec.S_prev[lo]
    k, v, beta = s.k[lo:hi], s.v[lo:hi], s.beta[lo:hi]
    rhs = beta[:, None] * (v - np.exp(m.gamma)[:, None] * (k @ S_start))
    np.testing.assert_allclose(m.inverse @ rhs, beta[:, None] * rec.error[lo:hi], atol=1e-12)
    np.testing.assert_allclose(np.diag(m.decay), 1.0)
    assert np.allclose(np.triu(m.strict), 0) and np.allclose(np.triu(m.inverse, 1), 0)


def test_kernels_agree_and_alpha_zero_stays_finite():
    s = random_stream(T=11, K=3, V=3, seed=3)
    s = Stream(k=s.k, v=s.v, q=s.q, alpha=np.where(np.arange(11) == 5, 0.0, s.alpha), beta=s.beta, S0=s.S0)
    out = ce.run_both_kernels(s, 4)
    assert np.abs(out["o_rec"] - out["o_chunk"]).max() < 1e-12
    m = ce.chunk_matrices(s, 4, 1)                                       # chunk holding the alpha = 0 token
    assert np.isfinite(m.decay).all() and m.decay[1, 0] == pytest.approx(0.0, abs=1e-80)


def test_crossover_is_the_first_length_from_which_chunk_stays_faster():
    timing = {"T": np.array([64, 128, 256, 512]), "recurrent": np.array([1, 2, 4, 8.0]),
              "chunk": np.array([2, 1.5, 5, 3.0])}
    assert ce.crossover_length(timing) == 512
    timing["chunk"] = np.array([0.5, 1, 2, 3.0])
    assert ce.crossover_length(timing) == 64
    timing["chunk"] = timing["recurrent"] * 2
    assert ce.crossover_length(timing) is None


def test_timing_reports_each_kernels_median_per_length(monkeypatch):
    """A fake clock that each kernel call advances by a known amount: the medians are exact."""
    clock, calls = [0.0], []
    cost = {"recurrent": [3.0, 1.0, 2.0], "chunk": [0.5, 0.9, 0.1]}      # seconds per token, by repeat

    def fake(name):
        def kernel(q, k, v, g, beta, **kw):
            calls.append((name, tuple(q.shape), kw.get("chunk_size")))
            if q.shape[1] != 8:                                          # 8 tokens: the untimed warm-up
                repeat = sum(c[:2] == (name, tuple(q.shape)) for c in calls) - 1
                clock[0] += cost[name][repeat] * q.shape[1]
        return kernel
    monkeypatch.setattr(kernel_timing, "time", SimpleNamespace(perf_counter=lambda: clock[0]))
    monkeypatch.setattr(kernel_timing, "recurrent_gated_delta_rule", fake("recurrent"))
    monkeypatch.setattr(kernel_timing, "chunk_gated_delta_rule", fake("chunk"))
    progress = []
    timing = kernel_timing.time_kernels([16, 40], heads=3, dim=5, repeats=3, chunk_size=4, progress=lambda i, n: progress.append((i, n)))
    np.testing.assert_allclose(timing["recurrent"], [2.0 * 16, 2.0 * 40])   # median of 3, 1, 2 per token
    np.testing.assert_allclose(timing["chunk"], [0.5 * 16, 0.5 * 40])       # median of 0.5, 0.9, 0.1
    assert progress == [(1, 2), (2, 2)]
    timed = [c for c in calls if c[1][1] != 8]
    assert {c[1] for c in timed} == {(1, 16, 3, 5), (1, 40, 3, 5)} and len(timed) == 12
    assert {c[2] for c in timed if c[0] == "chunk"} == {4}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_page_shows_live_numbers(lang):
    at = open_app(lang, page="app_pages/chunking.py")
    assert not at.exception
    shown = at.metric[2].value                                           # recurrent vs chunked outputs
    assert shown == "< 1e-15" or float(shown) < 1e-12
    at.slider(key="chunking_C").set_value(3).run()
    at.slider(key="chunking_T").set_value(16).run()
    at.slider(key="chunking_chunk").set_value(6).run()                   # last, ragged chunk (16 = 5*3 + 1), 1-based
    assert not at.exception
    from tests.test_memory_page import _Cells

    wy = _Cells()                                                        # the chunk's matrices, drawn as HTML tables
    wy.feed([h.proto.body for h in at.get("html") if "gdn-matrices" in h.proto.body][1])
    assert [len(wy.panels[f"m{i}"]) for i in (1, 2, 3, 4)] == [1, 1, 1, 1]    # a one-token chunk: 1 x 1 matrices
    assert len(wy.panels["m1"][0]) == 1
    assert '<th class="row">16</th>' in [h.proto.body for h in at.get("html") if "gdn-matrices" in h.proto.body][1]
    same = json.loads(at.get("plotly_chart")[0].proto.spec)              # named by its token in the stream, t = 16
    assert len([s for s in same["layout"]["shapes"]]) == 3 * 5            # 5 boundaries in each of 3 panels


def test_page_link_round_trip():
    at = open_app("en", page="app_pages/chunking.py", chunking_T="8", chunking_d="2", chunking_C="2", chunking_t="3")
    assert (at.slider(key="chunking_T").value, at.slider(key="chunking_d").value) == (8, 2)
    assert at.slider(key="chunking_t").value == 3 and at.slider(key="chunking_C").value == 2


def test_affine_demo_numbers():
    s = random_stream(T=5, K=3, V=2, seed=6)
    demo = ce.affine_demo(s, 2)
    A, _ = ce.affine_maps(s)
    np.testing.assert_allclose(demo.merged, A[3] @ A[2])
    np.testing.assert_allclose(demo.swapped, A[2] @ A[3])
    assert demo.grouping_error < 1e-14 and demo.order_difference == pytest.approx(np.abs(A[3] @ A[2] - A[2] @ A[3]).max())


def test_page_at_the_smallest_stream():
    at = open_app("en", page="app_pages/chunking.py", chunking_T="2", chunking_C="2")
    assert not at.exception and at.slider(key="chunking_T").value == 2


def test_measure_button_times_both_kernels_in_a_worker(monkeypatch):
    """The live timing is a job of the worker line (no child process of the server's own): its reports
    move the bar, its result is drawn beside the reference."""
    from app_pages._support import work
    from tests import job_fixtures
    monkeypatch.setattr(work, "time_kernels", job_fixtures.timing_where_the_loop_wins_below_2)
    at = open_app("en", page="app_pages/chunking.py")
    at.button(key="chunking_measure").click().run()
    assert not at.exception
    text = " ".join(m.value for m in at.markdown)
    assert "On this server the token loop is faster up to **T = 1**, the chunked kernel from **T = 2**" in text
    spec = json.loads(at.get("plotly_chart")[1].proto.spec)
    names = [d.get("name", "") for d in spec["data"]]
    assert sum("reference" in n for n in names) == 2 and sum("this server" in n for n in names) == 2


def test_a_failed_live_run_says_so(monkeypatch):
    from app_pages._support import work
    from tests import job_fixtures
    monkeypatch.setattr(work, "time_kernels", job_fixtures.timing_that_fails)
    at = open_app("en", page="app_pages/chunking.py")
    at.button(key="chunking_measure").click().run()
    assert not at.exception and "did not finish" in at.error[0].value
    assert len(at.get("plotly_chart")) == 2                             # the reference curve is still drawn
    assert "reference" in json.loads(at.get("plotly_chart")[1].proto.spec)["data"][0]["name"]


def test_the_workers_timing_times_both_kernels_at_each_length():
    """work.time_kernels, as a worker runs it (its reports go nowhere outside one)."""
    from app_pages._support import work
    timing = work.time_kernels((1, 3))
    assert list(timing["T"]) == [1, 3] and timing["T"].dtype.kind == "i"
    assert (timing["recurrent"] > 0).all() and (timing["chunk"] > 0).all()


# ---- the speed section: shipped reference curve, short live run, figure axes -----------------------------

def test_reference_curve_names_its_machine_and_holds_both_regimes():
    ref = kernel_timing.load_reference()
    assert "CPU" in ref["machine"] and "torch" in ref["machine"] and "thread" in ref["machine"]
    assert ref["machine"].startswith(f"{ref['cores']}-core") and f"{ref['threads']} thread" in ref["machine"]
    timing = ref["timing"]
    assert (timing["T"][0], timing["T"][-1]) == (1, 8192) and (timing["recurrent"] > 0).all()
    loop, cross = ce.loop_wins_up_to(timing), ce.crossover_length(timing)
    assert loop is not None and cross is not None and loop < cross      # a measured change, not the first size
    assert timing["recurrent"][-1] > 3 * timing["chunk"][-1]            # long sequences: chunks win clearly


def test_live_lengths_include_where_the_loop_wins_and_where_chunks_win():
    timing = kernel_timing.load_reference()["timing"]
    at = {int(T): (r, c) for T, r, c in zip(timing["T"], timing["recurrent"], timing["chunk"])}
    assert any(at[T][0] < at[T][1] for T in kernel_timing.LIVE_LENGTHS)             # the loop is faster here
    assert any(at[T][1] < at[T][0] for T in kernel_timing.LIVE_LENGTHS)             # the chunks are faster here


def test_live_estimate_is_the_reference_times_summed():
    ref = kernel_timing.load_reference()
    timing = ref["timing"]
    exact = kernel_timing.LIVE_REPEATS * sum(timing["recurrent"][i] + timing["chunk"][i] for i, T in enumerate(timing["T"])
                                  if T in kernel_timing.LIVE_LENGTHS)
    assert kernel_timing.estimate_seconds(ref) == pytest.approx(exact, rel=1e-9)  # every live length is a reference length
    assert kernel_timing.estimate_seconds(ref) <= 10                                # leaves room on a busy server (<= 20 s)


def test_loop_wins_up_to():
    timing = {"T": np.array([1, 2, 4, 8]), "recurrent": np.array([1, 2, 3, 4.0]), "chunk": np.array([2, 3, 2, 1.0])}
    assert ce.loop_wins_up_to(timing) == 2 and ce.crossover_length(timing) == 4
    timing["chunk"] = np.array([0.5, 1, 2, 3.0])
    assert ce.loop_wins_up_to(timing) is None and ce.crossover_length(timing) == 1


def _within_10x(axis_range, values):
    lo, hi = np.log10(min(values)), np.log10(max(values))
    assert axis_range[0] <= lo and axis_range[1] >= hi                   # the data is inside
    assert lo - axis_range[0] <= 1 and axis_range[1] - hi <= 1           # and the axis goes no further than 10x


@pytest.mark.parametrize("live", [False, True], ids=["reference", "with-live"])
def test_timing_figure_axes_stay_near_the_data(live):
    ref = kernel_timing.load_reference()["timing"]
    small = {"T": np.array([1, 2, 4]), "recurrent": np.array([1e-4, 2e-4, 4e-4]), "chunk": np.array([2e-4, 2e-4, 2e-4])}
    labels = {n: n for n in ("recurrent", "chunk", "reference", "live", "crossover", "T", "seconds")}
    fig = fig_timing(ref, small if live else None, 64, labels=labels)
    timings = [ref, small] if live else [ref]
    _within_10x(fig.layout.xaxis.range, np.concatenate([t["T"] for t in timings]))
    _within_10x(fig.layout.yaxis.range, np.concatenate([t[n] for t in timings for n in ("recurrent", "chunk")]))
    # annotations in data coordinates on the log axes pushed the range to 10^63: only the horizontal axis
    # title may be one, placed in the axes' domain, and no shapes
    assert all(a.xref.endswith("domain") and a.yref.endswith("domain") for a in fig.layout.annotations)
    assert [a.text for a in fig.layout.annotations] == ["seconds"] and not fig.layout.shapes
    line = [d for d in fig.data if d.mode == "lines"][-1]
    assert list(line.x) == [64, 64]                                      # the crossover line sits at T = 64


def test_matrix_row_names_tokens_from_one_and_keeps_the_first_panels_rows():
    body = matrix_row_html([np.eye(3), -np.eye(3)], ["a", "b"], ticks=["5", "6", "7"], row_title="token i",
                           col_title="token j")
    rows = re.findall(r'<th class="row">(\d+)</th>', body)
    assert rows == ["5", "6", "7"]                                      # only the first panel names its rows
    assert body.count('<th class="corner">token i</th>') == 1 and body.count(">token j<") == 2
    assert re.findall(r'<th class="title"[^>]*>([^<]*)</th>', body) == ["a", "b"]
    cells = re.findall(r'<td class="cell[^"]*"[^>]*>([^<]*)</td>', body)
    assert len(cells) == 18 and cells[:6] == ["1", "0", "0", "-1", "0", "0"]      # row 1 of both panels


def test_kernel_agreement_counts_tokens_from_one():
    o = np.zeros((10, 2))
    fig = fig_kernel_agreement(o, o, 4, titles=["a", "b", "c"], token="t", value="dim")
    assert list(fig.data[0].x) == list(range(1, 11)) and list(fig.data[0].y) == [1, 2]
    assert [s.x0 for s in fig.layout.shapes][:2] == [4.5, 8.5]           # after tokens 4 and 8


def test_reference_bench_runs_at_smoke_size():
    """bench/bench_chunking_curve.py --smoke runs end to end and prints a ratio per length (never how fast)."""
    root = Path(__file__).resolve().parents[1]
    run = subprocess.run([sys.executable, str(root / "bench" / "bench_chunking_curve.py"), "--smoke"],
                         capture_output=True, text=True, timeout=300, cwd=root)
    assert run.returncode == 0, run.stderr[-2000:]
    assert len(re.findall(r"ratio recurrent / chunk = [0-9.]+x", run.stdout)) == 3, run.stdout
    assert "crossover:" in run.stdout and "wrote" not in run.stdout            # the smoke run writes nothing
