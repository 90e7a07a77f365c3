"""Compare (对比): one stream through linear attention, DeltaNet and Gated DeltaNet, stepped together."""
import numpy as np
import streamlit as st

from gdn.figures.compare import VECTOR_ROWS, fig_compare_step, fig_transpose_bug
from gdn.lessons.compare import (COMPARE_PRESETS, RULES, bug_stream, gated_final_state, nearest_labels, readout_error,
                                 run_all)
from gdn.lessons.fmt import cell_text
from gdn.lessons.stream import STAGES
from app_pages._support import ui
from app_pages._support.stepper import stepper

st.title(ui.tr("compare.title"))
st.caption(ui.tr("compare.intro"))

name = ui.linked(st.selectbox, ui.tr("compare.preset"), COMPARE_PRESETS, key="compare_preset", default="k1_update",
                 format_func=ui.label_maker("compare.preset_"))
st.info(ui.tr(f"compare.story_{name}"), icon=":material/lightbulb:")


@st.cache_data
def compare_run(preset: str):
    p = COMPARE_PRESETS[preset]()
    return p, run_all(p.stream)


preset, recs = compare_run(name)
errors = {rule: readout_error(rec, preset.target) for rule, rec in recs.items()}
T = preset.stream.shape[0]
vec = lambda x: "(" + ", ".join(cell_text(x)) + ")"


def answer(o: np.ndarray) -> str:
    """The readout as a labelled value (city story) or as numbers."""
    if not preset.value_labels:
        return ui.tr("compare.readout", o=vec(o))
    best = nearest_labels(o, preset.values)
    label = lambda i: ui.tr(f"compare.label_{preset.value_labels[i]}")
    if not best:
        return ui.tr("compare.nothing")
    (a, sa), (b, sb) = best
    if sa - sb < 0.01:
        return ui.tr("compare.blend", a=label(a), b=label(b), sa=f"{sa:.2f}", sb=f"{sb:.2f}")
    return ui.tr("compare.nearest", label=label(a), sim=f"{sa:.2f}", norm=f"{np.linalg.norm(o):.2f}")


def draw(t: int, stage: str) -> None:
    st.markdown(f"**{ui.tr(f'compare.tok_{name}_{t}')}** · {ui.tr('common.stage_' + stage)}")
    titles = {r: f"<b>{ui.tr(f'compare.rule_short_{r}')}</b><br>{ui.tr(f'compare.rule_{r}')}" for r in RULES}
    rows = {n: ui.tr(f"compare.row_{n}") for n in VECTOR_ROWS}
    axis = {"key": ui.tr("common.key_dim"), "value": ui.tr("common.value_dim")}
    fig = fig_compare_step(recs, preset.target, t, stage, titles=titles, row_labels=rows, axis=axis,
                           font_size=ui.font_size(), height=640 if ui.lecture() else 540,
                           value_names=[ui.tr(f"compare.label_{n}") for n in preset.value_labels])
    ui.show_figure(fig, key="compare_fig", alt=ui.tr("compare.alt", t=t, stage=ui.tr("common.stage_" + stage)))
    for col, rule in zip(st.columns(len(RULES)), RULES):
        o = recs[rule].output[t]
        col.markdown(f"**{ui.tr(f'compare.rule_short_{rule}')}**  \n{answer(o)}  \n"
                     + ui.tr("compare.error", err=f"{errors[rule][t]:.2f}"))
    st.caption(ui.tr("compare.stage_note"))


stepper("compare", T, STAGES, draw)

st.divider()
st.subheader(ui.tr("compare.bug_title"))
st.markdown(ui.tr("compare.bug_intro"))
c1, c2, c3 = st.columns([1, 1, 2])
K = c1.slider(ui.tr("compare.bug_dk"), 2, 4, 2, key="compare_bug_dk", bind="query-params")
V = c2.slider(ui.tr("compare.bug_dv"), 2, 4, 2, key="compare_bug_dv", bind="query-params")
c3.code("S = S + k[:, None] * e[None, :]   # [K,1]*[1,V] = [K,V]  ✓\n"
        "S = S + k[None, :] * e[:, None]   # [1,K]*[V,1] = [V,K]  ✗", language="python")
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
    axis = {"key": ui.tr("common.key_dim"), "value": ui.tr("common.value_dim")}
    ui.show_figure(fig_transpose_bug(right, wrong, titles=titles, axis=axis, font_size=ui.font_size(),
                                     height=380 if ui.lecture() else 320),
                   key="compare_bug_fig", alt=ui.tr("compare.bug_alt"))
