"""The memory-table page through Streamlit's AppTest: every preset, stepping, both languages, links."""
import json
from html.parser import HTMLParser

import pytest

from gdn.figures.memory import PANELS
from gdn.lessons.memory import PRESETS
from tests.apptest import open_app

PAGE = "app_pages/memory_table.py"     # no longer the default page: "/" opens the start page


class _Cells(HTMLParser):
    """The cells of the memory figure's HTML tables: panel name -> rows of cell text."""

    def __init__(self):
        super().__init__()
        self.panels, self._cell = {}, None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "td" and "data-panel" in attrs:
            self._cell = (attrs["data-panel"], int(attrs["data-r"]))
            rows = self.panels.setdefault(self._cell[0], [])
            rows += [[] for _ in range(self._cell[1] + 1 - len(rows))]
            rows[self._cell[1]].append("")

    def handle_data(self, data):
        if self._cell:
            name, r = self._cell
            self.panels[name][r][-1] += data

    def handle_endtag(self, tag):
        if tag == "td":
            self._cell = None


def memory_panels(at) -> dict[str, list[list[str]]]:
    figure = next(h.proto.body for h in at.get("html") if "gdn-memory" in h.proto.body)
    parser = _Cells()
    parser.feed(figure)
    return parser.panels


def panel_text(at, index):
    """Cell texts of the index-th panel in the figure's order (S_prev, S_decayed, write, S_new, keys, read, output)."""
    return memory_panels(at)[list(PANELS)[index]]


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("preset", list(PRESETS))
def test_every_preset_steps_to_the_end_and_back(lang, preset):
    at = open_app(lang, PAGE)
    at.selectbox(key="memory_preset").set_value(preset).run()
    T = PRESETS[preset]().shape[0]
    for _ in range(T * 5 + 2):                                         # past the end: stays on the last step
        at.button(key="memory_next").click().run()
    assert not at.exception
    assert (at.session_state["memory_t"], at.session_state["memory_stage"]) == (T, "query")
    assert "?" not in str(panel_text(at, 6))                            # the output is revealed at the end
    at.button(key="memory_reset").click().run()
    assert (at.session_state["memory_t"], at.session_state["memory_stage"]) == (1, "decay")
    at.button(key="memory_prev").click().run()                          # before the start: stays
    assert at.session_state["memory_t"] == 1 and not at.exception


def test_k1_update_shows_the_worked_numbers():
    at = open_app("en", PAGE, memory_preset="k1_update", memory_t="3", memory_stage="query")     # tokens count from 1
    assert not at.exception
    assert at.selectbox(key="memory_preset").value == "k1_update"
    assert panel_text(at, 1) == [["1.5", "0.5"], ["-0.5", "1"]]         # alpha * S_{t-1}
    assert panel_text(at, 5)[2] == ["3.5", "-0.5"]                       # error row
    assert panel_text(at, 6) == [["5", "0"]]                             # k1 now reads (5, 0)
    assert at.latex[0].value.strip("$\n").startswith("o_t") and "5" in at.latex[0].value   # this stage, numbers in
    assert r"\colorbox" in at.latex[1].value and "o_t" in at.latex[1].value.split(r"\colorbox")[1]


def test_no_numbers_of_later_stages_before_the_figure_shows_them():
    """At "read", the error (3.5, -0.5) and the new row (5, 0) are still "?" in the figure: no formula or
    text under the story may give them away."""
    at = open_app("en", PAGE, memory_preset="k1_update", memory_t="3", memory_stage="read")
    assert panel_text(at, 3) == [["?", "?"], ["?", "?"]]                  # the write panel is not computed yet
    shown = [x.value for x in at.main.latex] + [x.value for x in at.main.markdown]      # sidebar: teacher notes
    assert any(r"\hat v" in x and "1.5" in x for x in shown)             # the prediction is this stage's number
    assert not any("3.5" in x or "(5, 0)" in x or r"(5,\ 0)" in x for x in shown)


def test_stages_reveal_panels_in_order():
    at = open_app("en", PAGE, memory_preset="write_read_2d", memory_t="2")
    assert panel_text(at, 6) == [["?", "?"]]                             # output not computed at "decay"
    for _ in range(4):
        at.button(key="memory_next").click().run()
    assert at.session_state["memory_stage"] == "query"
    assert panel_text(at, 6) == [["1", "2.2"]]                           # 0.6*(3,1) + 0.8*(-1,2)


def test_random_preset_with_different_key_and_value_dims():
    at = open_app("zh", PAGE, memory_preset="random")
    at.slider(key="memory_dk").set_value(6).run()
    at.slider(key="memory_dv").set_value(2).run()
    table = memory_panels(at)["S_prev"]
    assert not at.exception
    assert (len(table), len(table[0])) == (6, 2)                       # [d_k x d_v]
    assert "记忆表" in at.title[0].value


def test_language_follows_the_link_and_the_sidebar():
    at = open_app("zh", PAGE)
    assert "记忆表" in at.title[0].value
    at.radio(key="lang").set_value("en").run()
    assert at.title[0].value.startswith("The memory table") and at.query_params["lang"] in ("en", ["en"])


def test_bad_link_values_fall_back_to_defaults():
    at = open_app("en", PAGE, memory_preset="nonsense", memory_t="99", memory_stage="dance")
    assert not at.exception
    assert at.session_state["memory_preset"] == "write_read_2d"
    assert at.session_state["memory_t"] == 3 and at.session_state["memory_stage"] == "decay"   # the last token


def test_replay_of_a_real_head_runs_on_its_gates():
    from tests.apptest import APP
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["lang"] = "en"
    at.session_state["memory_replay"] = {
        "title": "layer 0 head 3", "tokens": ["the", " password", " is"],
        "k": [[1, 0], [0, 1], [1, 0]], "v": [[1, 2], [3, 4], [5, 6]], "q": [[1, 0], [0, 1], [1, 0]],
        "alpha": [0.9, 0.5, 0.25], "beta": [1.0, 0.5, 0.1]}
    at.session_state["memory_preset"] = "replay"
    at.run().switch_page(PAGE).run()
    assert not at.exception
    assert at.selectbox(key="memory_preset").value == "replay"
    timeline = json.loads(at.get("plotly_chart")[0].proto.spec)        # the tables are HTML, the timeline a chart
    assert timeline["layout"]["xaxis"]["ticktext"] == ["1 the", "2  password", "3  is"]
    assert any("“the”" in m.value for m in at.markdown)                 # the current token is named
