"""Chunking (分块): why the parallel form exists, with live numbers on a small stream."""
import time

import streamlit as st

from gdn import timing as kernel_timing
from gdn.figures.chunking import fig_kernel_agreement, fig_timing, matrix_row_html
from gdn.lessons import chunking as ce
from gdn.lessons.memory import random_stream
from gdn.ops import CHUNK_SIZE
from gdn.units import fmt_diff
from app_pages._support import compute, ui, work

# Lecture mode: lecture.css sizes every markdown paragraph alike, which shrank the metric values (drawn as
# paragraphs too) to their labels' size; on this page the numbers are what the room reads.
if ui.lecture():
    st.html(ui.BIG_METRICS_CSS)
fs = ui.font_size()
st.title(ui.tr("chunking.title"))
st.caption(ui.tr("chunking.intro"))
KEY_DIM = ui.tr("common.key_dim")

# 1 · affine maps: the stream's controls beside the first figure, so moving one shows its effect.
st.subheader(ui.tr("chunking.h_affine"))
WIDE = [1, 4] if ui.lecture() else [1, 3]            # lecture mode: bigger numbers need wider cells
controls, figure = st.columns(WIDE, gap="medium")
with controls:
    T = st.slider(ui.tr("chunking.tokens"), 2, 16, 12, key=ui.bound("chunking_T"), bind="query-params")
    d = st.slider(ui.tr("chunking.dim"), 2, 4, 3, key=ui.bound("chunking_d"), bind="query-params")
    C = st.slider(ui.tr("chunking.chunk_size"), 2, 8, 4, key=ui.bound("chunking_C"), bind="query-params")
    seed = ui.linked_int(st, ui.tr("chunking.seed"), 0, 9999, 0, key="chunking_seed")
stream = random_stream(T=T, K=d, V=d, seed=int(seed))
dims = [str(i) for i in range(1, d + 1)]


@st.fragment
def merge_view() -> None:
    """Which two tokens are merged: a fragment, so moving it redraws only this figure and its numbers."""
    # Tokens are counted from 1: token t and t + 1 are merged, t = 1 .. T - 1.
    t = st.slider(ui.tr("chunking.token"), 1, T - 1, 1, key=ui.bound("chunking_t"), bind="query-params") if T > 2 else 1
    demo = ce.affine_demo(stream, t - 1)
    titles = [ui.tr("chunking.t_A", t=t), ui.tr("chunking.t_A", t=t + 1), ui.tr("chunking.t_merged", a=t, b=t + 1),
              ui.tr("chunking.t_swapped", a=t, b=t + 1)]
    matrices = [demo.A_t, demo.A_next, demo.merged, demo.swapped]
    # HTML tables: a slider move is a new picture (gdn/figures/tables.py); the download is the same HTML
    body = matrix_row_html(matrices, titles, ticks=dims, row_title=KEY_DIM, col_title=KEY_DIM,
                           alt=ui.tr("chunking.affine_alt"))
    st.html(body)
    ui.html_download("chunking_affine_fig", body, ui.tr("chunking.affine_alt"))
    m = st.columns(2)
    m[0].metric(ui.tr("chunking.m_assoc"), fmt_diff(demo.grouping_error))
    m[1].metric(ui.tr("chunking.m_swap"), f"{demo.order_difference:.3f}")


with figure:
    merge_view()
ui.note(ui.tr("chunking.affine_note"))

# 2 · one chunk's triangular system, chunk picker beside it.
st.subheader(ui.tr("chunking.h_chunk"))
n_chunks = -(-T // C)


@st.fragment
def chunk_view() -> None:
    """The chunk picker and its four matrices: a fragment, so picking a chunk redraws only them."""
    picker, _ = st.columns([1, 2])                   # the figure below gets the full width: 4 matrices
    chunk = picker.slider(ui.tr("chunking.chunk"), 1, n_chunks, 1, key=ui.bound("chunking_chunk"),
                          bind="query-params") if n_chunks > 1 else 1
    lo = (chunk - 1) * C
    picker.caption(ui.tr("chunking.chunk_tokens", a=lo + 1, b=min(lo + C, T)))
    mats = ce.chunk_matrices(stream, C, chunk - 1)
    titles = [ui.tr(f"chunking.t_{n}") for n in ("decay", "strict", "inverse", "scores")]
    tokens = [str(lo + 1 + i) for i in range(mats.decay.shape[0])]
    matrices, axes = [mats.decay, mats.strict, mats.inverse, mats.scores], dict(
        ticks=tokens, row_title=ui.tr("chunking.token_i"), col_title=ui.tr("chunking.token_j"))
    body = matrix_row_html(matrices, titles, **axes, alt=ui.tr("chunking.wy_alt"))
    st.html(body)
    ui.html_download("chunking_wy_fig", body, ui.tr("chunking.wy_alt"))


chunk_view()
ui.note(ui.tr("chunking.chunk_note"))

# 3 · the same answer, in float64.
st.subheader(ui.tr("chunking.h_same"))
both = ce.run_both_kernels(stream, C)
titles = [ui.tr("chunking.t_rec"), ui.tr("chunking.t_chunk"), ui.tr("chunking.t_diff")]
ui.show_figure(fig_kernel_agreement(both["o_rec"], both["o_chunk"], C, titles=titles, token=ui.tr("chunking.token_axis"),
                                    value=ui.tr("common.value_dim"), font_size=fs),
               key="chunking_same_fig", alt=ui.tr("chunking.same_alt"))
m = st.columns(2)
m[0].metric(ui.tr("chunking.m_out"), fmt_diff(both['max_output_diff']))
m[1].metric(ui.tr("chunking.m_state"), fmt_diff(both['max_state_diff']))

# 4 · speed: the shipped reference curve at once, and a short live run on this server beside it.
st.subheader(ui.tr("chunking.h_speed"))


@st.cache_resource
def timing_store() -> dict:
    """One live measurement per server, shared by all sessions: its timing, seconds taken, threads."""
    return {"result": None}


reference = st.cache_data(kernel_timing.load_reference)     # the shipped curve, read once per server
ref, store = reference(), timing_store()
lengths = kernel_timing.LIVE_LENGTHS
text, figure = st.columns([1, 2], gap="medium")
with text:
    st.markdown(ui.tr("chunking.speed_note", d=ref["dim"], C=CHUNK_SIZE))
    st.caption(ui.tr("chunking.reference_machine", cores=ref["cores"], threads=ref["threads"], date=ref["measured"],
                     repeats=ref["repeats"]))
    st.markdown(ui.tr("chunking.live_plan", T_min=lengths[0], T_max=f"{lengths[-1]:,}", repeats=kernel_timing.LIVE_REPEATS,
                      seconds=f"{kernel_timing.estimate_seconds(ref):.0f}",
                      threads=kernel_timing.LIVE_THREADS))
    if st.button(ui.tr("chunking.measure"), key="chunking_measure", icon=":material/timer:"):
        bar = st.progress(0.0, text=ui.tr("chunking.measuring"))

        def tick(reports):
            i, n = reports[-1]
            bar.progress(i / n, text=ui.tr("chunking.measuring_at", T=f"{lengths[i - 1]:,}", i=i, n=n))
        # In a worker, through the job line: a timing run and a Run of the real model never fight over the
        # cores, and a second visitor sees their place in line instead of a frozen bar.
        start = time.perf_counter()
        try:
            timing = compute.run_job("chunking.timing", None, work.time_kernels, lengths, on_progress=tick)
            store["result"] = {"timing": timing, "seconds": time.perf_counter() - start,
                               "threads": kernel_timing.LIVE_THREADS}
        except RuntimeError:
            st.error(ui.tr("chunking.measure_failed"), icon=":material/error:")
        bar.empty()
    live = store["result"]
    if live is not None:
        st.caption(ui.tr("chunking.live_took", seconds=f"{live['seconds']:.1f}", threads=live["threads"]))
    shown = live["timing"] if live else ref["timing"]
    cross, loop = ce.crossover_length(shown), ce.loop_wins_up_to(shown)
    where = ui.tr("chunking.on_live" if live else "chunking.on_reference")
    speedup = f"{shown['recurrent'][-1] / shown['chunk'][-1]:.0f}"
    if cross is not None and loop is not None:
        st.markdown(ui.tr("chunking.crossover", where=where, loop=loop, T=cross, x=speedup, T_max=f"{shown['T'][-1]:,}"))
    elif cross is not None:
        st.markdown(ui.tr("chunking.chunk_always", where=where, T=cross, x=speedup, T_max=f"{shown['T'][-1]:,}"))
    else:
        st.markdown(ui.tr("chunking.no_crossover", where=where))
with figure:
    labels = {n: ui.tr(f"chunking.l_{n}", C=CHUNK_SIZE) for n in
              ("recurrent", "chunk", "reference", "live", "crossover", "T", "seconds")}
    ui.show_figure(fig_timing(ref["timing"], live["timing"] if live else None, cross, labels=labels, font_size=fs),
                   key="chunking_speed_fig", alt=ui.tr("chunking.speed_alt"))
