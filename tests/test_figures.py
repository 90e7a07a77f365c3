"""Figure builders are pure functions of arrays: check what they draw, not how it looks."""
import json

import numpy as np
import pytest

from gdn.figures import fig_memory_player, fig_memory_step, fig_timeline
from gdn.figures.common import symmetric_range
from gdn.lessons.fmt import cell_text
from gdn.lessons.memory import k1_update, random_stream
from gdn.lessons.stream import STAGES, records_csv, step_records

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
    rows = records_csv(rec).strip().split("\n")
    T, K, V = rec.stream.shape
    assert len(rows) == 1 + T * (4 * K * V + 2 * K + 5 * V + 1)
    assert "2,output,,0,5.0" in rows                                          # k1 reads (5, 0) at token 2
