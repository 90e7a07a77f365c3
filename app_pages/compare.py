"""Compare (对比): one stream through linear attention, DeltaNet and Gated DeltaNet, stepped together;
the variants (β per channel, α per key dim, two calls with the state carried or reset); the transpose bug."""

import numpy as np
import streamlit as st

from gdn.figures.compare import fig_transpose_bug, fig_two_calls
from gdn.i18n import prompt
from gdn.lessons.compare import (
    COMPARE_PRESETS,
    RULES,
    VARIANT_PRESETS,
    VARIANTS,
    bug_stream,
    gated_final_state,
    run_all,
    two_calls,
)
from gdn.lessons.memory import k1_update
from gdn.lessons.stream import STAGES, opening_step, step_records
from gdn.qwen35.analysis import two_call_run
from gdn.qwen35.sources import TRAINED_PATH
from app_pages._compare_frames import packed_frames
from app_pages._support import compute, ui
from app_pages._support.player import player

st.title(ui.tr("compare.title"))
st.caption(ui.tr("compare.intro"))
variant = ui.linked(st.segmented_control, ui.tr("compare.variant"), VARIANTS, key="compare_variant", default="rules",
                    required=True, format_func=ui.label_maker("compare.variant_"), label_visibility="collapsed")
axis = {"key": ui.tr("common.key_dim"), "value": ui.tr("common.value_dim"), "dim": ui.tr("common.dim")}


@st.cache_data
def compare_run(preset: str):
    p = COMPARE_PRESETS[preset]()
    return p, run_all(p.stream)


@st.cache_data
def variant_run(name: str):
    p = VARIANT_PRESETS[name]()
    return p.target, {col: step_records(s) for col, s in p.streams.items()}


def side_by_side(story: str, recs: dict, target: np.ndarray, titles: dict[str, str], names: dict[str, str],
                 values=np.zeros((0, 0)), value_labels: tuple[str, ...] = ()) -> None:
    """One stream's versions (recs: column -> StepRecords) stepped together in the browser: tables, vectors,
    readouts, and the rules x tokens error grid."""
    packed = packed_frames(story, recs, target, titles, names, values, value_labels)
    player("compare", packed, len(target), STAGES, opening=opening_step(*recs.values()))
    st.caption(ui.tr("compare.stage_note"))


def two_calls_panel() -> None:
    """Variant "stream": the k1 story fed in two calls, with the state carried or reset (toy, then the model)."""
    ui.note(ui.tr("compare.stream_story"))
    s, target = k1_update(), COMPARE_PRESETS["k1_update"]().target
    T = s.shape[0]
    cut = st.slider(ui.tr("compare.stream_cut"), 1, T - 1, 2, key=ui.bound("compare_stream_cut"), bind="query-params")
    run = two_calls(s, int(cut))
    names = {n: ui.tr(f"compare.stream_{n}") for n in ("one", "carried", "reset")}
    panels = {"one": run.one_call, "carried": run.carried, "reset": run.reset}
    tokens = [ui.tr(f"compare.tok_k1_update_{t}").split(":")[0].split("：")[0] for t in range(T)]
    ui.show_figure(fig_two_calls(panels, run.cut, titles=names, token_labels=tokens, axis=axis,
                                 font_size=ui.font_size(), height=420 if ui.lecture() else 340),
                   key="compare_stream_fig", alt=ui.tr("compare.stream_alt"))
    m = st.columns(2)
    m[0].metric(ui.tr("compare.stream_diff"), f"{run.max_diff:.1e}")
    m[1].metric(ui.tr("compare.stream_reset_err"), f"{np.linalg.norm(run.reset[-1] - target[-1]):.2f}")
    model_two_calls()


def streaming_prompt(lang: str) -> tuple[str, str]:
    """The trained model's recall preset, cut before its first question: (the facts, the question up to "?")."""
    text = prompt("recall", lang)
    ask, mark = {"en": (" ask ", "?"), "zh": (" 问 ", "？")}[lang]
    start = text.index(ask)
    return text[:start], text[start + 1:text.index(mark, start) + 1]


@st.fragment
def model_two_calls() -> None:
    """The same on the shipped trained model: a recall prompt split before its question."""
    folder = str(TRAINED_PATH)
    st.subheader(ui.tr("compare.stream_real_header", model=TRAINED_PATH.name))
    model = compute.model(folder)
    first, second = streaming_prompt(ui.lang())
    ids_first = model.tokenizer.encode(first, max_tokens=512).ids
    ids = model.tokenizer.encode(first + " " + second, max_tokens=512).ids
    st.markdown(ui.tr("compare.stream_real_story", first=first, second=second))
    run = compute.cached("compare.stream", (folder, tuple(ids), len(ids_first)),
                         lambda: two_call_run(model, ids, len(ids_first)))
    word = lambda top: ", ".join(f"“{model.tokenizer.tok.decode([i]).strip()}” {p:.0%}" for i, p in top)
    rows = {ui.tr(f"compare.stream_{n}"): word(top) for n, top in
            (("one", run.top_one), ("carried", run.top_carried), ("reset", run.top_reset))}
    st.dataframe({"": list(rows), ui.tr("compare.stream_pred"): list(rows.values())}, hide_index=True,
                 key="compare_stream_table")
    st.caption(ui.tr("compare.stream_real_diff", logits=f"{run.max_logit_diff:.1e}", states=f"{run.max_state_diff:.1e}"))
    st.info(ui.tr("compare.stream_request_note"), icon=":material/lock:")


if variant == "rules":
    picker, story_box = st.columns([1, 2]) if not ui.lecture() else (st.sidebar, st.sidebar)
    with picker:
        name = ui.linked(st.selectbox, ui.tr("compare.preset"), COMPARE_PRESETS, key="compare_preset",
                         default="k1_update", format_func=ui.label_maker("compare.preset_"))
    with story_box:
        ui.note(ui.tr(f"compare.story_{name}"))
    preset, recs = compare_run(name)
    titles = {r: f"<b>{ui.tr(f'compare.rule_short_{r}')}</b><br>{ui.tr(f'compare.rule_{r}')}" for r in RULES}
    side_by_side(name, recs, preset.target, titles, {r: ui.tr(f"compare.rule_short_{r}") for r in RULES},
                 preset.values, preset.value_labels)
elif variant in VARIANT_PRESETS:
    target, recs = variant_run(variant)
    titles = {c: f"<b>{ui.tr(f'compare.col_{c}')}</b><br>{ui.tr(f'compare.col_{c}_rule')}" for c in recs}
    side_by_side(variant, recs, target, titles, {c: ui.tr(f"compare.col_{c}") for c in recs})
    st.info(ui.tr(f"compare.story_{variant}"), icon=":material/lightbulb:")   # under the figure: it stays on screen
else:
    two_calls_panel()

st.divider()
st.subheader(ui.tr("compare.bug_title"))
st.markdown(ui.tr("compare.bug_intro"))
c1, c2, c3 = st.columns([1, 1, 3])
K = c1.slider(ui.tr("compare.bug_dk"), 2, 4, 2, key=ui.bound("compare_bug_dk"), bind="query-params")
V = c2.slider(ui.tr("compare.bug_dv"), 2, 4, 2, key=ui.bound("compare_bug_dv"), bind="query-params")
c3.code("S += k[:, None] * e[None, :]  # [K,1]·[1,V] → [K,V] ✓\n"       # short lines: the ✓/✗ stay in view
        "S += k[None, :] * e[:, None]  # [1,K]·[V,1] → [V,K] ✗", language="python", wrap_lines=True)
stream = bug_stream(K, V)
right = gated_final_state(stream)
try:
    wrong = gated_final_state(stream, transpose_bug=True)
except ValueError as e:
    st.error(ui.tr("compare.bug_fails", K=K, V=V), icon=":material/error:")
    st.code(f"ValueError: {e}", language=None)
    st.success(ui.tr("compare.bug_why"), icon=":material/check_circle:")
else:
    st.warning(ui.tr("compare.bug_runs", K=K, diff=f"{np.abs(wrong - right).max():.2f}"), icon=":material/warning:")
    titles = (ui.tr("compare.bug_right"), ui.tr("compare.bug_wrong"), ui.tr("compare.bug_diff"))
    ui.show_figure(fig_transpose_bug(right, wrong, titles=titles, axis=axis, font_size=ui.font_size(),
                                     height=380 if ui.lecture() else 320),
                   key="compare_bug_fig", alt=ui.tr("compare.bug_alt"))
