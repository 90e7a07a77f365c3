"""Chunking (分块): why the parallel form exists, with live numbers on a small stream."""
import streamlit as st

from gdn.figures.chunking import fig_kernel_agreement, fig_matrix_row, fig_timing
from gdn.lessons import chunking as ce
from gdn.lessons.memory import random_stream
from gdn.ops import CHUNK_SIZE
from app_pages._support import compute, ui

TIMING_LENGTHS = (64, 128, 256, 512, 1024, 2048, 4096, 8192)
fs = ui.font_size()
st.title(ui.tr("chunking.title"))
st.caption(ui.tr("chunking.intro"))

c = st.columns(4)
T = c[0].slider(ui.tr("chunking.tokens"), 2, 16, 12, key="chunking_T", bind="query-params")
d = c[1].slider(ui.tr("chunking.dim"), 2, 4, 3, key="chunking_d", bind="query-params")
C = c[2].slider(ui.tr("chunking.chunk_size"), 2, 8, 4, key="chunking_C", bind="query-params")
seed = ui.linked_int(c[3], ui.tr("chunking.seed"), 0, 9999, 0, key="chunking_seed")
stream = random_stream(T=T, K=d, V=d, seed=int(seed))

st.header(ui.tr("chunking.h_affine"))
ui.note(ui.tr("chunking.affine_note"))
t = st.slider(ui.tr("chunking.token"), 0, T - 2, 0, key="chunking_t", bind="query-params") if T > 2 else 0
demo = ce.affine_demo(stream, t)
titles = [ui.tr("chunking.t_A", t=t), ui.tr("chunking.t_A", t=t + 1), ui.tr("chunking.t_merged", a=t, b=t + 1),
          ui.tr("chunking.t_swapped", a=t, b=t + 1)]
ui.show_figure(fig_matrix_row([demo.A_t, demo.A_next, demo.merged, demo.swapped], titles, font_size=fs),
               key="chunking_affine_fig", alt=ui.tr("chunking.affine_alt"))
m = st.columns(2)
m[0].metric(ui.tr("chunking.m_assoc"), f"{demo.grouping_error:.1e}")
m[1].metric(ui.tr("chunking.m_swap"), f"{demo.order_difference:.3f}")

st.header(ui.tr("chunking.h_chunk"))
ui.note(ui.tr("chunking.chunk_note"))
n_chunks = -(-T // C)
chunk = st.slider(ui.tr("chunking.chunk"), 0, n_chunks - 1, 0, key="chunking_chunk", bind="query-params") \
    if n_chunks > 1 else 0
mats = ce.chunk_matrices(stream, C, chunk)
titles = [ui.tr(f"chunking.t_{n}") for n in ("decay", "strict", "inverse", "scores")]
ui.show_figure(fig_matrix_row([mats.decay, mats.strict, mats.inverse, mats.scores], titles, font_size=fs,
                              row_label="i", col_label="j"), key="chunking_wy_fig", alt=ui.tr("chunking.wy_alt"))

st.header(ui.tr("chunking.h_same"))
both = ce.run_both_kernels(stream, C)
titles = [ui.tr("chunking.t_rec"), ui.tr("chunking.t_chunk"), ui.tr("chunking.t_diff")]
ui.show_figure(fig_kernel_agreement(both["o_rec"], both["o_chunk"], C, titles=titles, token=ui.tr("common.token"),
                                    value=ui.tr("common.value_dim"), font_size=fs),
               key="chunking_same_fig", alt=ui.tr("chunking.same_alt"))
m = st.columns(2)
m[0].metric(ui.tr("chunking.m_out"), f"{both['max_output_diff']:.2e}")
m[1].metric(ui.tr("chunking.m_state"), f"{both['max_state_diff']:.2e}")

st.header(ui.tr("chunking.h_speed"))
st.caption(ui.tr("chunking.speed_note", H=ce.TIMING_HEADS, d=ce.TIMING_DIM, T_min=f"{TIMING_LENGTHS[0]:,}",
                 T_max=f"{TIMING_LENGTHS[-1]:,}"))


@st.cache_resource
def timing_store() -> dict:
    """One measurement per server, shared by all sessions."""
    return {"result": None}


store = timing_store()
if st.button(ui.tr("chunking.measure"), key="chunking_measure", icon=":material/timer:"):
    bar = st.progress(0.0, text=ui.tr("chunking.measuring"))
    # The shared slot pool: a timing run and a real-model forward pass never fight over the cores,
    # and a second user sees their place in line instead of a frozen bar.
    store["result"] = compute.in_slot(lambda: ce.time_kernels(
        list(TIMING_LENGTHS), repeats=1, progress=lambda i, n: bar.progress(i / n, text=ui.tr("chunking.measuring"))))
    bar.empty()
if store["result"] is not None:
    cross = ce.crossover_length(store["result"])
    labels = {n: ui.tr(f"chunking.l_{n}", C=CHUNK_SIZE) for n in ("recurrent", "chunk", "crossover", "T", "seconds")}
    ui.show_figure(fig_timing(store["result"], cross, labels=labels, font_size=fs), key="chunking_speed_fig",
                   alt=ui.tr("chunking.speed_alt"))
    st.markdown(ui.tr("chunking.crossover", T=cross) if cross else ui.tr("chunking.no_crossover"))
