"""Figure builders are pure functions of arrays: check what they draw, not how it looks."""
import base64
import json
import re

import numpy as np
import pytest

from gdn.figures import fig_memory_player, fig_memory_step, fig_timeline
from gdn.figures.common import log_ticks, symmetric_range
from gdn.lessons.memory import k1_update, random_stream
from gdn.lessons.stream import STAGES, records_csv, step_records
from gdn.units import cell_text
from tests.apptest import open_app

TITLES = {n: n for n in ("S_prev", "S_decayed", "write", "S_new", "keys", "read", "output")}
AXIS = {"key": "key dim", "value": "value dim"}


def test_cell_text_is_short_and_never_negative_zero():
    assert cell_text(np.array([3.0, -0.5, 2.25, -0.0001, 1 / 3])).tolist() == ["3", "-0.5", "2.25", "0", "0.33"]
    assert symmetric_range(np.zeros(3)) == 1.0 and symmetric_range(np.array([-4.0, 2.0])) == 4.0


@pytest.mark.parametrize("stage", STAGES)
def test_memory_step_reveals_panels_in_kernel_order(stage):
    rec = step_records(k1_update())
    fig = fig_memory_step(rec, 2, stage, titles=TITLES, axis=AXIS)
    hidden = [trace.name for trace in fig.data if np.all(np.asarray(trace.text) == "?")]
    order = {"decay": 4, "read": 3, "error": 3, "write": 1, "query": 0}       # panels still blank
    assert len(hidden) == order[stage]
    assert len(fig.layout.shapes) >= 1                                       # the active-stage frame
    zmins = {trace.zmin for trace in fig.data}
    assert zmins == {-symmetric_range(rec.S_prev, rec.S_new, rec.write, rec.stream.v, rec.prediction, rec.output)}


def test_memory_step_rejects_unknown_stage():
    with pytest.raises(ValueError, match="stage"):
        fig_memory_step(step_records(k1_update()), 0, "dance", titles=TITLES, axis=AXIS)


def test_player_has_one_frame_per_step_and_plays_offline():
    rec = step_records(random_stream(T=3, K=4, V=2))
    fig = fig_memory_player(rec, titles=TITLES, axis=AXIS, step_label=lambda t, s: f"{t}{s}", play="▶", pause="⏸")
    assert len(fig.frames) == 3 * len(STAGES) == len(fig.layout.sliders[0].steps)
    html = fig.to_html(include_plotlyjs=True)
    assert "cdn" not in html.split("<script")[1][:200].lower()                # plotly.js is inlined, no CDN
    assert json.loads(fig.to_json())["frames"][-1]["data"][6]["text"] != [["?", "?"]]


def test_timeline_names_tokens_and_csv_has_every_number():
    rec = step_records(k1_update())
    fig = fig_timeline(rec, 1, labels={"alpha": "α", "beta": "β", "token": "t"}, token_names=["a", "b", "c", "d"])
    assert list(fig.layout.xaxis.ticktext) == ["1 a", "2 b", "3 c", "4 d"]
    assert list(fig.data[0].x) == [2] and fig.data[0].width == 1           # the mark covers token 2 (t = 1, 0-based)
    rows = records_csv(rec).strip().split("\n")
    T, K, V = rec.stream.shape
    assert len(rows) == 1 + T * (4 * K * V + 2 * K + 5 * V + 1)
    assert "2,output,,0,5.0" in rows                                          # k1 reads (5, 0) at token 2


# ---- every chart's axes fit its data ----------------------------------------------------------

def _values(v) -> np.ndarray:
    """A trace's x or y as numbers (plotly encodes arrays as base64 "bdata"; categories are skipped)."""
    if isinstance(v, dict) and "bdata" in v:
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"])).astype(float)
    flat = np.ravel(np.array(v, dtype=object)) if v is not None else np.array([])
    nums = [float(x) for x in flat if isinstance(x, (int, float)) and not isinstance(x, bool)]
    return np.array([x for x in nums if np.isfinite(x)])


def axis_problems(spec: dict) -> list[str]:
    """Axes whose explicit range runs far past the data on them: a log axis more than a decade (10x)
    beyond the data at either end, a linear one more than 10x the data's largest magnitude."""
    data_on = {}
    for trace in spec["data"]:
        if trace.get("type") not in ("scatter", "bar", "scattergl"):
            continue
        for letter in ("x", "y"):
            name = letter + "axis" + trace.get(f"{letter}axis", letter)[1:]
            data_on.setdefault(name, []).append(_values(trace.get(letter)))
    problems = [f"{name}: a log axis labelled by plotly (1e+3), not by gdn.units: give it tickvals (common.log_ticks)"
                for name, axis in spec["layout"].items() if name.startswith(("xaxis", "yaxis"))
                and axis.get("type") == "log" and axis.get("showticklabels", True) and not axis.get("tickvals")]
    for name, axis in spec["layout"].items():
        if not name.startswith(("xaxis", "yaxis")) or "range" not in axis or name not in data_on:
            continue
        values = np.concatenate(data_on[name])
        if not values.size:
            continue
        lo, hi = axis["range"]
        if axis.get("type") == "log":
            positive = values[values > 0]
            if positive.size and (lo < np.log10(positive.min()) - 1 or hi > np.log10(positive.max()) + 1):
                problems.append(f"{name}: log range 10^{lo:.1f}..10^{hi:.1f}, data {positive.min():.3g}..{positive.max():.3g}")
        elif np.abs(values).max() > 0 and max(abs(lo), abs(hi)) > 10 * np.abs(values).max():
            problems.append(f"{name}: range {lo:.3g}..{hi:.3g}, data up to {np.abs(values).max():.3g}")
    return problems


def test_axis_check_finds_a_runaway_log_axis():
    """The check itself: chunking's old timing chart put a log x axis at 10^63 for a crossover label."""
    import plotly.graph_objects as go

    bad = go.Figure(go.Scatter(x=[64, 128, 4096], y=[1, 2, 3])).update_xaxes(type="log", range=[1.5, 63])
    good = go.Figure(go.Scatter(x=[64, 128, 4096], y=[1, 2, 3])).update_xaxes(type="log", range=[1.5, 3.9])
    assert axis_problems(json.loads(bad.to_json())) and not axis_problems(json.loads(good.update_xaxes(**log_ticks(64, 4096)).to_json()))
    assert axis_problems(json.loads(good.update_xaxes(tickvals=None, tickmode=None).to_json()))   # plotly's own labels


def test_log_ticks_are_written_by_units():
    assert log_ticks(8, 1024)["ticktext"] == ["10", "20", "50", "100", "200", "500", "1000"]
    assert log_ticks(0.01, 3162, steps=(1,))["ticktext"] == ["0.01", "0.1", "1", "10", "100", "1000"]


PAGES_AND_VIEWS = [
    ("app_pages/compare.py", {}), ("app_pages/cost.py", {}),          # the memory page draws no chart: HTML only
    ("app_pages/chunking.py", {}),
    ("app_pages/real_model.py", {"real_model_view": "head"}),        # the default view draws HTML (the gates)
    # the overwrite, repeated-writes, key-norm and half-life toys and the 2-D write are HTML in the explorer
    ("app_pages/playground.py", {"playground_panel": "capacity"}),
    ("app_pages/recall.py", {}),
]


@pytest.mark.parametrize("page,params", PAGES_AND_VIEWS, ids=lambda v: str(v))
def test_every_chart_on_the_pages_fits_its_data(page, params):
    at = open_app("en", page, **params)
    assert not at.exception
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert specs, "no chart drawn"
    problems = [p for s in specs for p in axis_problems(s)]
    assert not problems, problems


# ---- skeletons (gdn.figures.common.from_skeleton): a warm skeleton gives the figure a cold build gives ----

SKELETON_CASES = ["capacity_toy", "compare", "memory_step", "memory_timeline",
                  "cost_slider"]


@pytest.mark.parametrize("case", SKELETON_CASES)
def test_a_warm_skeleton_equals_a_full_build(case, monkeypatch):
    """Each figure is built once per key; later calls swap the data into the cached skeleton. Whatever a
    second call returns must equal building that call's figure from scratch with plotly's validation:
    this fails when a key misses something the layout depends on, or a swap misses a data key."""
    import plotly.io as pio

    from gdn.figures import common, compare, cost, memory, playground
    from bench import bench_pages
    build = getattr(bench_pages, case)
    common._skeletons.clear()
    for i in (1, 2, 5):
        warm = pio.to_json(build(i))                      # from the skeleton of an earlier call (after i = 1)
        with monkeypatch.context() as m:                  # reference: the builder's own full figure
            for module in (compare, cost, memory, playground):
                m.setattr(module, "from_skeleton", lambda key, full, data, layout=None: full())
            cold = pio.to_json(build(i))
        assert json.loads(warm) == json.loads(cold), (case, i)
    assert len(common._skeletons) >= 1


# ---- the memory step as HTML tables (what the page draws; the Plotly figure is the offline player's) ----

@pytest.mark.parametrize("stage", STAGES)
def test_memory_tables_show_what_the_plotly_figure_shows(stage):
    from gdn.figures import memory_step_html
    from gdn.figures.memory import PANELS
    from tests.test_memory_page import _Cells

    rec = step_records(k1_update())
    for t in range(rec.stream.shape[0]):
        parser = _Cells()
        parser.feed(memory_step_html(rec, t, stage, titles=TITLES, axis=AXIS))
        fig = fig_memory_step(rec, t, stage, titles=TITLES, axis=AXIS)
        for name, trace in zip(PANELS, fig.data):
            assert parser.panels[name] == np.asarray(trace.text).tolist(), (t, stage, name)


def test_table_colours_follow_the_heatmap_scale_and_labels_are_escaped():
    from gdn.figures.tables import Panel, diverging_rgb, panels_table

    rgb = diverging_rgb(np.array([-2.0, -1.0, 0.0, 1.0, 2.0, 9.0]), zmax=2.0)
    assert rgb.round().astype(int).tolist() == [[29, 78, 216], [147, 197, 253], [255, 255, 255],
                                                [252, 165, 165], [185, 28, 28], [185, 28, 28]]   # DIVERGING's stops
    html = panels_table([Panel("S<sub>t</sub> <script>x</script>", np.eye(2), ["a", "b"], ["1", "2"], active=True)],
                        1.0, "t")
    assert "<sub>t</sub>" in html and "<script>" not in html and "&lt;script&gt;" in html
    assert html.count("cell active") == 4                                  # every cell of an active panel


@pytest.mark.parametrize("stage", STAGES)
def test_compare_tables_show_what_the_plotly_figure_shows(stage):
    from gdn.figures.compare import VECTOR_ROWS, compare_step_html, fig_compare_step
    from gdn.lessons.compare import COMPARE_PRESETS, run_all
    from tests.test_memory_page import _Cells

    preset = COMPARE_PRESETS["k1_update"]()
    recs = run_all(preset.stream)
    kw = dict(titles={r: r for r in recs}, row_labels={n: n for n in VECTOR_ROWS}, axis={"key": "k", "value": "v"})
    for t in range(len(preset.target)):
        parser = _Cells()
        parser.feed(compare_step_html(recs, preset.target, t, stage, **kw))
        traces = fig_compare_step(recs, preset.target, t, stage, **kw).data
        for i, rule in enumerate(recs):
            assert parser.panels[f"S_{rule}"] == np.asarray(traces[2 * i].text).tolist(), (t, stage, rule)
            assert parser.panels[f"vectors_{rule}"] == np.asarray(traces[2 * i + 1].text).tolist(), (t, stage, rule)


def test_the_download_of_an_html_picture_is_that_html_and_needs_no_network():
    """One source per picture: what the page draws with st.html is what its download holds."""
    from gdn.figures.chunking import matrix_row_html
    from app_pages._support.figures import standalone_html

    body = matrix_row_html([np.eye(2)], ["A <1>"], ticks=["1", "2"], row_title="key", col_title="key", alt="a & b")
    page = standalone_html(body, "a & b")
    assert body in page and page.startswith("<!doctype html>") and '<meta charset="utf-8">' in page
    assert "<title>a &amp; b</title>" in page and ".gdn-tables" in page          # the app's table CSS travels with it
    assert not re.search(r"(src|href)=\"?(https?:)?//", page)                      # nothing fetched from anywhere
