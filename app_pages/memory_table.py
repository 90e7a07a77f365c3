"""Memory table (记忆表): one head's table S, token by token, stage by stage."""
import streamlit as st

from gdn.figures import fig_memory_player
from gdn.lessons.memory import PRESETS, InputError, random_stream, replay_stream, rows_to_stream
from gdn.lessons.stream import STAGES, opening_step, records_csv, step_records
from app_pages._memory_frames import PANELS, editor_table, packed_frames, unedited
from app_pages._real_model import replay_link
from app_pages._support import ui
from app_pages._support.escape import plain_fields
from app_pages._support.player import player

ui.stepping_title("memory")         # the player opens past step 1 and says why
replay = st.session_state.get("memory_replay")        # a real head sent here by the real-model page
if replay is None and "memory_preset" not in st.session_state and st.query_params.get("memory_preset") == "replay":
    # a link to a replay, opened in a fresh session: made again on the real-model page, or said why not
    st.warning(replay_link.reopen_from_link(), icon=":material/link_off:")

# The example picker and its story share one row, so the player and the figure start in the first
# screen; lecture mode moves them to the sidebar (the teacher tells the story).
if ui.lecture():
    picker = story_box = st.sidebar
else:
    picker, story_box = st.columns([1, 2], vertical_alignment="top")
with picker:
    options = list(PRESETS) + (["replay"] if replay else [])
    preset_label = ui.label_maker("memory.preset_")
    # the labels made now: the picker may call format_func later, outside this run (and its language)
    labels = {p: preset_label(p) for p in PRESETS} | ({"replay": ui.tr(
        "memory.preset_replay" if "K" in replay else "memory.preset_exercise", title=replay["title"])} if replay else {})
    preset = ui.linked(st.selectbox, ui.tr("memory.preset"), options, key="memory_preset", default="write_read_2d",
                       format_func=labels.get)
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
    # what a replay was made of lives in the link (the replay itself is too long for one)
    st.session_state[replay_link.LINK] = replay.get("link") if preset == "replay" else None
    ui.sync_to_url(replay_link.LINK, None)
if preset != "replay":
    story = (f"memory.story_{preset}", {})
elif "K" in replay:                                  # a real head, sent by the real-model page
    story = ("memory.story_replay", {"title": ui.plain(replay["title"]), "K": replay["K"], "V": replay["V"]})
else:                                                # a hand-made stream, sent by a classroom exercise
    story = ("memory.story_exercise", {"title": ui.plain(replay["title"])})
with story_box:
    ui.story(story[0], **story[1])                   # a result the story states waits behind "Show the answer"

# The player's place comes first on the screen; the token editor under it is read before the player draws.
player_area = st.container()
with st.expander(ui.tr("memory.edit"), expanded=False):
    st.caption(ui.tr("memory.edit_help", K=base.shape[1], V=base.shape[2]))
    text = {c: st.column_config.TextColumn(ui.tr(f"memory.col_{c}")) for c in ("k", "v", "q")}
    gates = {c: st.column_config.NumberColumn(ui.tr(f"memory.col_{c}"), min_value=0.0, max_value=1.0,
                                              step=0.01, format="%.2f") for c in ("alpha", "beta")}
    table, rec = editor_table(base)               # rec: the stream read back while nothing is edited
    edited = st.data_editor(table, key=edit_key, num_rows="dynamic", width="stretch", column_config=text | gates)
    if st.button(ui.tr("memory.undo_edits"), key="memory_undo"):
        st.session_state.pop(edit_key, None)
        st.rerun()
if rec is None or not unedited(edit_key):
    try:
        stream = rows_to_stream(edited.to_dict("records"), K=base.shape[1], V=base.shape[2], S0=base.S0)
    except InputError as e:
        st.error(ui.tr(f"errors.{e.key}", **plain_fields(e.fields)), icon=":material/error:")   # a cell's text, as typed
        st.stop()
    rec = step_records(stream)
T = rec.stream.shape[0]


def animation_html() -> str:
    """The offline Plotly player for slides (the download)."""
    titles = {n: ui.tr(f"memory.panel_{n}") for n in PANELS}
    axis = {"key": ui.tr("common.key_dim"), "value": ui.tr("common.value_dim"), "dim": ui.tr("common.dim")}
    stage_name = ui.label_maker("common.stage_")
    fig = fig_memory_player(rec, titles=titles, axis=axis, play=ui.tr("common.play"), pause=ui.tr("common.pause"),
                            step_label=lambda t, s: f"{ui.tr('memory.token_n', t=t + 1)} · {stage_name(s)}")
    return fig.to_html(include_plotlyjs=True, auto_play=False)


with player_area:
    # Every step of the stream goes to the browser at once: stepping, playing and scrubbing answer there.
    title = preset_label(preset) if preset != "replay" else replay["title"]
    player("memory", packed_frames(rec, token_names, title), T, STAGES, opening=opening_step(rec))
if not ui.lecture():
    bar = st.container(horizontal=True)
    bar.download_button(ui.tr("memory.export_player"), data=animation_html, file_name="memory_table_player.html",
                        mime="text/html", key="memory_player_html", icon=":material/movie:", on_click="ignore")
    bar.download_button(ui.tr("memory.export_csv"), data=lambda: records_csv(rec), file_name="memory_table.csv",
                        mime="text/csv", key="memory_csv", icon=":material/table:", on_click="ignore")
