"""Memory table (记忆表): one head's table S, token by token, stage by stage."""
import pandas as pd
import streamlit as st

from gdn.figures import fig_memory_player, fig_timeline, memory_step_html
from gdn.lessons.memory import (CLOSED_FORM, PRESETS, STAGE_SYMBOLS, InputError, random_stream, replay_stream,
                                rows_to_stream, stage_formulas, stream_to_rows)
from gdn.lessons.stream import STAGES, records_csv, step_records
from app_pages._support import ui
from app_pages._support.stepper import stepper

st.title(ui.tr("memory.title"))
st.caption(ui.tr("memory.intro"))
replay = st.session_state.get("memory_replay")        # a real head sent here by the real-model page

# The example picker and its story share one row, so the stepper and the figure start in the first
# screen; lecture mode moves them to the sidebar (the teacher tells the story).
if ui.lecture():
    picker = story_box = st.sidebar
else:
    picker, story_box = st.columns([1, 2], vertical_alignment="top")
with picker:
    options = list(PRESETS) + (["replay"] if replay else [])
    preset_label = ui.label_maker("memory.preset_")
    preset = ui.linked(st.selectbox, ui.tr("memory.preset"), options, key="memory_preset", default="write_read_2d",
                       format_func=lambda p: preset_label(p) if p != "replay" else ui.tr(
                           "memory.preset_replay" if "K" in replay else "memory.preset_exercise", title=replay["title"]))
    token_names = None
    if preset == "random":
        c1, c2, c3, c4 = st.columns(4)
        K = c1.slider(ui.tr("memory.dk"), 2, 8, 4, key=ui.bound("memory_dk"), bind="query-params")
        V = c2.slider(ui.tr("memory.dv"), 2, 8, 3, key=ui.bound("memory_dv"), bind="query-params")
        T = c3.slider(ui.tr("memory.tokens"), 1, 16, 8, key=ui.bound("memory_T"), bind="query-params")
        seed = ui.linked_int(c4, ui.tr("memory.seed"), 0, 9999, 0, key="memory_seed")
        base, edit_key = random_stream(T=T, K=K, V=V, seed=int(seed)), f"memory_edit_random_{K}_{V}_{T}_{seed}"
    elif preset == "replay":
        base, edit_key, token_names = replay_stream(replay), f"memory_edit_replay_{replay['title']}", replay["tokens"]
    else:
        base, edit_key = PRESETS[preset](), f"memory_edit_{preset}"
if preset != "replay":
    story = ui.tr(f"memory.story_{preset}")
elif "K" in replay:                                  # a real head, sent by the real-model page
    story = ui.tr("memory.story_replay", title=replay["title"], K=replay["K"], V=replay["V"])
else:                                                # a hand-made stream, sent by a classroom exercise
    story = ui.tr("memory.story_exercise", title=replay["title"])
with story_box:
    ui.note(story)

# The stepper's place comes first on the screen; the token editor under it is read before the stepper draws.
stepper_area = st.container()
with st.expander(ui.tr("memory.edit"), expanded=False):
    st.caption(ui.tr("memory.edit_help", K=base.shape[1], V=base.shape[2]))
    text = {c: st.column_config.TextColumn(ui.tr(f"memory.col_{c}")) for c in ("k", "v", "q")}
    gates = {c: st.column_config.NumberColumn(ui.tr(f"memory.col_{c}"), min_value=0.0, max_value=1.0,
                                              step=0.01, format="%.2f") for c in ("alpha", "beta")}
    edited = st.data_editor(pd.DataFrame(stream_to_rows(base)), key=edit_key, num_rows="dynamic",
                            width="stretch", column_config=text | gates)
    if st.button(ui.tr("memory.undo_edits"), key="memory_undo"):
        st.session_state.pop(edit_key, None)
        st.rerun()
try:
    stream = rows_to_stream(edited.to_dict("records"), K=base.shape[1], V=base.shape[2], S0=base.S0)
except InputError as e:
    st.error(ui.tr(f"errors.{e.key}", **e.fields), icon=":material/error:")
    st.stop()
rec = step_records(stream)
T, K, V = stream.shape


TITLES = {n: ui.tr(f"memory.panel_{n}") for n in ("S_prev", "S_decayed", "write", "S_new", "keys", "read", "output")}
AXIS = {"key": ui.tr("common.key_dim"), "value": ui.tr("common.value_dim"), "dim": ui.tr("common.dim")}


def animation_html() -> str:
    stage_name = ui.label_maker("common.stage_")
    fig = fig_memory_player(rec, titles=TITLES, axis=AXIS, play=ui.tr("common.play"), pause=ui.tr("common.pause"),
                            step_label=lambda t, s: f"{ui.tr('memory.token_n', t=t + 1)} · {stage_name(s)}")
    return fig.to_html(include_plotlyjs=True, auto_play=False)


def draw(t: int, stage: str) -> None:
    """Token t (0-based; shown as t + 1) at one stage: this stage's formula with its numbers over the figure,
    and beside the figure what the stage does and the whole update, later stages without numbers."""
    name = f" · “{token_names[t]}”" if token_names and t < len(token_names) else ""
    formulas = stage_formulas(rec, t)
    head, formula = st.columns([1, 3], vertical_alignment="center")
    head.markdown(f"**{ui.tr('common.stage_' + stage)}** · {ui.tr('memory.token_n', t=t + 1)}{name}")
    formula.latex(formulas[stage])
    figure, side = st.columns([5, 2]) if not ui.lecture() else (st.container(), None)
    with figure:
        # HTML tables, not a Plotly figure: a step is a new picture, and plotly.js drawing seven heatmap
        # subplots anew was most of a key press's wait (gdn/figures/tables.py).
        st.html(memory_step_html(rec, t, stage, titles=TITLES, axis=AXIS,
                                 alt=ui.tr("memory.alt", t=t + 1, stage=ui.tr("common.stage_" + stage))))
        labels = {"alpha": "α", "beta": "β", "token": ui.tr("common.token_t")}
        timeline = ui.shared_figure(fig_timeline, rec, t, labels=labels, font_size=ui.font_size(),
                                    token_names=token_names)
        ui.show_figure(timeline, key="memory_timeline", alt=ui.tr("memory.timeline_alt"), export=False)
    if side is not None:
        with side:
            st.markdown(ui.tr(f"memory.explain_{stage}"))
            lines = [rf"\colorbox{{#fde68a}}{{${STAGE_SYMBOLS[s]}$}}" if s == stage else STAGE_SYMBOLS[s] for s in STAGES]
            st.latex(r"\begin{aligned}" + r"\\[2pt]".join(lines) + r"\end{aligned}")
            st.caption(ui.tr("memory.closed_form_label"))
            st.latex(r"\small " + CLOSED_FORM)
            st.caption(ui.tr("memory.shape_note", K=K, V=V))


with stepper_area:
    stepper("memory", T, STAGES, draw)
if not ui.lecture():
    bar = st.container(horizontal=True)
    bar.download_button(ui.tr("memory.export_player"), data=animation_html, file_name="memory_table_player.html",
                        mime="text/html", key="memory_player_html", icon=":material/movie:", on_click="ignore")
    bar.download_button(ui.tr("memory.export_csv"), data=lambda: records_csv(rec), file_name="memory_table.csv",
                        mime="text/csv", key="memory_csv", icon=":material/table:", on_click="ignore")
