"""The memory page's frames: every (token, stage) of one stream as the player shows it (app_pages/_support/player.py).

Built once per stream, language and mode for the whole server (a class steps through the same few
examples); a random 16-token 8 x 8 stream takes about a third of a second, the presets a few ms.
"""
from __future__ import annotations

import html

import pandas as pd
import streamlit as st

from gdn.figures.memory import memory_step_html, rules_html, timeline_html
from gdn.lessons.memory import InputError, changed_rows, rows_to_stream, stage_numbers, stream_to_rows
from gdn.lessons.stream import STAGES, StepRecords, Stream, step_records
from app_pages._support import ui
from app_pages._support.caches import BOUNDS
from app_pages._support.figures import fingerprint
from app_pages._support.pack import Packed
from app_pages._support.player import Frame, pack

PANELS = ("S_prev", "S_decayed", "write", "S_new", "keys", "read", "output")
# The write's animation: k (row 0 of "keys") and beta * e (row 3 of "read") fly into the write panel.
FLY = {"from": [["keys", 0], ["read", 3]], "to": "write"}


def narration(rec: StepRecords, t: int, stage: str) -> str:
    """One line that says what this stage did to token t, with its numbers (escaped: plain text)."""
    numbers = stage_numbers(rec, t, dim=ui.tr("common.dim"))
    key = f"memory.narrate_{stage}"
    if stage == "write":
        rows, K = len(changed_rows(rec, t)), rec.stream.shape[1]
        # every row of a wider table: "all 4 rows", where the list of dims took a second line on a projector
        key = "memory.narrate_write_none" if not rows else "memory.narrate_write_all" if rows == K > 2 else key
        numbers["K"] = str(K)
    return html.escape(ui.tr(key, **numbers))


def frames(rec: StepRecords, token_names: list[str] | None, title: str = "") -> list[Frame]:
    """title: the example's name, leading each frame's head (lecture mode: the picker is in the sidebar)."""
    titles = {n: ui.tr(f"memory.panel_{n}") for n in PANELS}
    axis = {"key": ui.tr("common.key_dim"), "value": ui.tr("common.value_dim"), "dim": ui.tr("common.dim")}
    stage_name = ui.label_maker("common.stage_")
    out = []
    for t in range(rec.stream.shape[0]):
        name = f" · “{html.escape(token_names[t])}”" if token_names and t < len(token_names) else ""
        for stage in STAGES:
            head = (f"{html.escape(title)} · " if title else "") + \
                f"<b>{html.escape(stage_name(stage))}</b> · {html.escape(ui.tr('memory.token_n', t=t + 1))}{name}"
            alt = ui.tr("memory.alt", t=t + 1, stage=stage_name(stage))
            figure = memory_step_html(rec, t, stage, titles=titles, axis=axis, alt=alt)
            out.append(Frame(head=head, narration=narration(rec, t, stage), html=figure,
                             fly=FLY if stage == "write" else None))
    return out


def sides(K: int, V: int) -> dict[str, str]:
    """Beside the panels (not in lecture mode, where the narration says it): each stage's rules."""
    return {stage: rules_html(stage, explain=ui.tr(f"memory.explain_{stage}"),
                              closed_label=ui.tr("memory.closed_form_label"), note=ui.tr("memory.shape_note", K=K, V=V))
            for stage in STAGES}


@st.cache_resource(max_entries=BOUNDS["player.memory"], show_spinner=False)
def _packed(stream_key: tuple, language: str, lecture: bool, token_names: tuple[str, ...], title: str,
            _rec: StepRecords) -> Packed:
    T, K, V = _rec.stream.shape
    labels = {"alpha": "α", "beta": "β", "token": ui.tr("common.token_t"), "alt": ui.tr("memory.timeline_alt")}
    return pack(frames(_rec, list(token_names) or None, title if lecture else ""),
                fixed=timeline_html(_rec, labels=labels, token_names=list(token_names) or None),
                sides={} if lecture else sides(K, V))


def packed_frames(rec: StepRecords, token_names: list[str] | None, title: str) -> Packed:
    """The stream's frames, packed once per server for this stream (its numbers), language and mode.
    title: the example's name (shown in lecture mode, where the picker is folded into the sidebar)."""
    return _packed(fingerprint(rec.stream), ui.lang(), ui.lecture(), tuple(token_names or ()), title, rec)


@st.cache_resource(max_entries=BOUNDS["memory.editor"], show_spinner=False)
def _unedited(stream_key: tuple, _base: Stream) -> tuple[pd.DataFrame, StepRecords | None]:
    table = pd.DataFrame(stream_to_rows(_base))
    try:
        back = rows_to_stream(table.to_dict("records"), K=_base.shape[1], V=_base.shape[2], S0=_base.S0)
    except InputError:                                   # the page reads it again and says what is wrong
        return table, None
    return table, step_records(back)


def editor_table(base: Stream) -> tuple[pd.DataFrame, StepRecords | None]:
    """The token editor's table of `base` (st.data_editor copies it), and the records of the stream that
    table reads back while nobody edited it (its cells are rounded to 4 digits, so a random stream reads
    back rounded; None if it does not read back): made once per stream for the server, not at every run
    (a fifth of the page's run)."""
    return _unedited(fingerprint(base), base)


def unedited(edit_key: str) -> bool:
    """No cell changed, added or deleted in the editor under edit_key (its state as st.data_editor keeps it)."""
    edits = st.session_state.get(edit_key) or {}
    return not any(edits.get(part) for part in ("edited_rows", "added_rows", "deleted_rows"))
