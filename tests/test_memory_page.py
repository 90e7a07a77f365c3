"""The memory-table page through Streamlit's AppTest: every preset, stepping, both languages, links."""
from html.parser import HTMLParser

import numpy as np
import pytest

from gdn.i18n import t
from gdn.lessons.memory import PRESETS, random_stream
from gdn.lessons.stream import STAGES, step_records
from gdn.units import cell_text
from tests.apptest import open_app, player_payload

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
    """The panels of the step the player opens on."""
    data, payload = player_payload(at, "memory_player")
    return frame_panels(payload["frames"][data["position"]])


def frame_panels(frame: dict) -> dict[str, list[list[str]]]:
    parser = _Cells()
    parser.feed(frame["html"])
    return parser.panels


def frame_at(at, t: int, stage: str) -> dict:
    """The player's frame of token t (counted from 1, as the page shows it) at `stage`."""
    _, payload = player_payload(at, "memory_player")
    return payload["frames"][(t - 1) * len(STAGES) + STAGES.index(stage)]


def first_change(stream) -> tuple[int, str]:
    """(token from 0, stage) of the first decay or write that changes the table, by hand: S~ = alpha S,
    D = k (beta (v - S~^T k))^T."""
    S = np.array(stream.S0, float)
    for i in range(stream.shape[0]):
        decayed = stream.alpha[i] * S
        if np.abs(decayed - S).max() > 0:
            return i, "decay"
        write = np.outer(stream.k[i], stream.beta[i] * (stream.v[i] - decayed.T @ stream.k[i]))
        if np.abs(write).max() > 0:
            return i, "write"
        S = decayed + write
    return 0, "decay"


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("preset", list(PRESETS))
def test_every_preset_sends_every_step(lang, preset):
    """All T x 5 steps go to the browser at once, in token-major order, and each is what the figure code
    draws for it: stepping needs no server."""
    at = open_app(lang, PAGE, memory_preset=preset)
    assert not at.exception
    stream = PRESETS[preset]()
    T = stream.shape[0]
    data, payload = player_payload(at, "memory_player")
    assert (data["tokens"], data["stages"], len(payload["frames"])) == (T, list(STAGES), T * 5)
    t, stage = first_change(stream)                       # a fresh visit opens where something happens
    assert data["position"] == t * 5 + STAGES.index(stage) and data["params"] == {"t": "memory_t", "stage": "memory_stage"}
    assert data["opening"] == {"t": t + 1, "stage": stage}
    rec = step_records(stream)
    for i, frame in enumerate(payload["frames"]):
        t, stage = divmod(i, 5)
        panels = frame_panels(frame)
        assert panels["S_new"] == ([list(r) for r in cell_text(rec.S_new[t])] if stage >= 3
                                   else [["?"] * stream.shape[2]] * stream.shape[1])
        assert ("?" in str(panels["output"])) == (stage < 4)          # the output exists from the query on
        assert (frame.get("fly") is not None) == (STAGES[stage] == "write")
    assert set(payload["sides"]) == set(STAGES) and 'data-token="0"' in payload["fixed"]


def test_k1_update_shows_the_worked_numbers():
    at = open_app("en", PAGE, memory_preset="k1_update", memory_t="3", memory_stage="query")     # tokens count from 1
    assert not at.exception
    assert at.selectbox(key="memory_preset").value == "k1_update"
    data, _ = player_payload(at, "memory_player")
    assert data["position"] == 2 * 5 + 4                                 # the link's step: token 3, query
    panels = frame_panels(frame_at(at, 3, "query"))
    assert panels["S_decayed"] == [["1.5", "0.5"], ["-0.5", "1"]]       # alpha * S_{t-1}
    assert panels["read"][2] == ["3.5", "-0.5"]                          # error row
    assert panels["output"] == [["5", "0"]]                              # k1 now reads (5, 0)
    assert "o = Sᵀq = (5, 0)" in frame_at(at, 3, "query")["narration"]
    # The write changes k1's row only; the new table [[5, 0], [-0.5, 1]] has size sqrt(25 + 0.25 + 1).
    write = frame_at(at, 3, "write")["narration"]
    assert "(dim 1)" in write and f"{np.sqrt(26.25):.2f}" in write
    assert "0.5" in frame_at(at, 3, "decay")["narration"]               # alpha = 0.5 names itself


def test_no_numbers_of_later_stages_before_the_figure_shows_them():
    """At "read", the error (3.5, -0.5) and the new row (5, 0) are still "?" in the figure: neither the
    frame's narration nor any text on the page may give them away."""
    at = open_app("en", PAGE, memory_preset="k1_update", memory_t="3", memory_stage="read")
    frame = frame_at(at, 3, "read")
    assert frame_panels(frame)["write"] == [["?", "?"], ["?", "?"]]        # the write panel is not computed yet
    assert "(1.5, 0.5)" in frame["narration"]                             # the prediction is this stage's number
    # sidebar: teacher notes; the story's result waits behind "Show the answer", which is the point of it
    revealed = {m.value for e in at.expander if e.label == t("common.reveal", "en") for m in e.markdown}
    shown = [frame["narration"], frame["head"]] + [x.value for x in at.main.markdown if x.value not in revealed]
    assert not any("3.5" in x or "(5, 0)" in x for x in shown)


def test_stages_reveal_panels_in_order():
    at = open_app("en", PAGE, memory_preset="write_read_2d", memory_t="2")
    outputs = [frame_panels(frame_at(at, 2, stage))["output"] for stage in STAGES]
    assert outputs[:4] == [[["?", "?"]]] * 4                             # output not computed before "query"
    assert outputs[4] == [["1", "2.2"]]                                  # 0.6*(3,1) + 0.8*(-1,2)


def test_a_position_set_by_another_page_is_followed():
    """A classroom demo sets memory_t / memory_stage and switches page: the player is told to move there
    (a new seq), while a position the browser reported itself keeps the seq."""
    at = open_app("en", PAGE, memory_preset="k1_update")
    first, _ = player_payload(at, "memory_player")
    at.session_state["memory_t"], at.session_state["memory_stage"] = 4, "query"
    at.run()
    moved, _ = player_payload(at, "memory_player")
    assert moved["seq"] == first["seq"] + 1 and moved["position"] == 3 * 5 + 4
    at.run()
    assert player_payload(at, "memory_player")[0]["seq"] == moved["seq"]


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
    assert player_payload(at, "memory_player")[0]["position"] == 2 * 5


def test_replay_of_a_real_head_runs_on_its_gates():
    from tests.apptest import new_app

    at = new_app()
    at.query_params["lang"] = "en"
    at.session_state["memory_replay"] = {
        "title": "layer 0 head 3", "tokens": ["the", " password", " is"],
        "k": [[1, 0], [0, 1], [1, 0]], "v": [[1, 2], [3, 4], [5, 6]], "q": [[1, 0], [0, 1], [1, 0]],
        "alpha": [0.9, 0.5, 0.25], "beta": [1.0, 0.5, 0.1]}
    at.session_state["memory_preset"] = "replay"
    at.run().switch_page(PAGE).run()
    assert not at.exception
    assert at.selectbox(key="memory_preset").value == "replay"
    _, payload = player_payload(at, "memory_player")
    assert 'title="Token t = 2 ·  password · α = 0.5 · β = 0.5"' in payload["fixed"]   # the timeline names tokens
    assert "“the”" in payload["frames"][0]["head"]                      # the current token is named


def test_the_chosen_example_and_seed_survive_a_visit_to_another_page():
    """Streamlit drops a widget's state on a run that does not draw it and the page switch clears the
    query string; coming back must still show the example (and random seed) the learner picked."""
    at = open_app(page=PAGE)
    at.selectbox(key="memory_preset").set_value("random").run()
    at.number_input(key="memory_seed").set_value(42).run()
    at.switch_page("app_pages/start.py").run()
    assert not at.exception
    at.query_params.clear()
    at.query_params["lang"] = "en"
    at.switch_page(PAGE).run()
    assert not at.exception
    assert at.selectbox(key="memory_preset").value == "random"
    assert at.number_input(key="memory_seed").value == 42


def test_an_edit_in_the_token_editor_changes_the_frames_and_no_edit_reads_the_example_back():
    """The page keeps each example's unedited read-back (_memory_frames.editor_table); an edit still goes
    through the edited table: token 1's α set to 0.5 is what the first frame narrates."""
    at = open_app("en", "app_pages/memory_table.py", memory_preset="k1_update")
    own, frames = player_payload(at, "memory_player")
    assert "α = 1:" in frames["frames"][0]["narration"]
    at.session_state["memory_edit_k1_update"] = {"edited_rows": {0: {"alpha": 0.5}}, "added_rows": [], "deleted_rows": []}
    at.run()
    edited, frames = player_payload(at, "memory_player")
    assert edited["hash"] != own["hash"] and "α = 0.5:" in frames["frames"][0]["narration"]
    at.session_state["memory_edit_k1_update"] = {"edited_rows": {}, "added_rows": [], "deleted_rows": []}
    at.run()
    assert player_payload(at, "memory_player")[0]["hash"] == own["hash"]


def test_the_kept_unedited_read_back_is_what_the_editor_rows_give():
    from gdn.lessons.memory import rows_to_stream, stream_to_rows
    from app_pages._memory_frames import editor_table

    for base in [make() for name, make in PRESETS.items() if name != "random"] + [random_stream(T=8, K=4, V=3, seed=5)]:
        table, rec = editor_table(base)
        back = rows_to_stream(stream_to_rows(base), K=base.shape[1], V=base.shape[2], S0=base.S0)
        assert table.to_dict("records") == stream_to_rows(base)
        for name in ("k", "v", "q", "alpha", "beta", "S0"):
            np.testing.assert_array_equal(getattr(rec.stream, name), getattr(back, name), err_msg=name)
