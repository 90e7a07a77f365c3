"""Memory cost (内存账): GDN state vs KV cache for every released Qwen3.5 size."""
import numpy as np
import streamlit as st

from gdn.figures.cost import fig_cost
from gdn.lessons import cost
from app_pages._support import ui

SIZES = cost.load_sizes()
INTERVALS = [1, 2, 3, 4, 6, 8, 0]                       # 1 full-attention layer every n; 0 = none
LENGTHS = [2 ** p for p in range(0, 19)]                # 1 .. 262144 tokens

# Lecture mode: lecture.css sizes every markdown paragraph alike, which shrank the metric values (drawn as
# paragraphs too) to their labels' size; on this page the numbers are what the room reads.
if ui.lecture():
    st.html(ui.BIG_METRICS_CSS)
title = st.empty()
st.caption(ui.tr("cost.intro"))
# Lecture mode keeps the screen for the chart and its two sliders: model, format and batch go to the sidebar,
# and the title says which model the curves are for (the room does not see the folded sidebar).
c1, c2, c3 = [st.sidebar] * 3 if ui.lecture() else st.columns([3, 3, 2])
name = ui.linked(c1.selectbox, ui.tr("cost.model"), SIZES, key="cost_model", default="Qwen3.5-0.8B")
title.title(ui.tr("cost.title_for", model=name) if ui.lecture() else ui.tr("cost.title"))
dtype = ui.linked(c2.segmented_control, ui.tr("cost.dtype"), cost.DTYPE_BYTES, key="cost_dtype", default=cost.SHIPPED_DTYPE,
                  required=True, format_func=ui.label_maker("cost.dtype_"))
batch = ui.linked_int(c3, ui.tr("cost.batch"), 1, 1024, 1, key="cost_batch")

# Everything under the model pickers is one fragment: moving the context or interval slider reruns and
# re-sends only this part (chart, numbers, formulas, table), not the page's header, pickers and sidebar.
@st.fragment
def curves_view() -> None:
    # The two sliders that move the curves sit beside the chart, with the numbers they change under them.
    controls, chart = st.columns([1.2, 3], gap="medium")
    interval_labels = {n: ui.tr(f"cost.interval_{n}") if n in (0, 1) else ui.tr("cost.interval_n", n=n) for n in INTERVALS}
    interval = ui.linked(controls.select_slider, ui.tr("cost.interval"), INTERVALS, key="cost_interval", default=4,
                         format_func=interval_labels.get)
    T_read = ui.linked(controls.select_slider, ui.tr("cost.context"), LENGTHS, key="cost_T", default=32768,
                       format_func=lambda n: f"{n:,}")

    cfg = SIZES[name]
    n_gdn, n_attn = cost.layer_counts(cfg, interval)
    T = np.unique(np.geomspace(1, LENGTHS[-1], 64).round())          # straight lines and one bend on log-log axes: 64 points draw them
    curves = cost.memory_curves(cfg, T, batch=batch, dtype=dtype, interval=interval)
    cross, kv_pass = cost.crossover_tokens(cfg), cost.kv_passes_state_tokens(cfg, interval)
    prompt = st.session_state.get("real_model_prompt_tokens")
    has_prompt = isinstance(prompt, (int, np.integer)) and prompt > 0
    marks = [(cross, ui.tr("cost.mark_crossover", n=f"{cross:,.0f}"), "#dc2626"),
             (T_read, ui.tr("cost.mark_T", n=f"{T_read:,}"), "#64748b")]
    if 0 < kv_pass < np.inf:
        marks.insert(1, (kv_pass, ui.tr("cost.mark_kv", n=f"{kv_pass:,.0f}"), "#f59e0b"))
    if has_prompt:
        marks.append((float(prompt), ui.tr("cost.mark_prompt", n=f"{prompt:,}"), "#7c3aed"))
    shown = {k: v for k, v in curves.items() if (k != "state" or n_gdn) and (k != "kv" or n_attn)}
    labels = {k: ui.tr(f"cost.curve_{k}") for k in curves} | {"x": ui.tr("cost.x"), "y": ui.tr("cost.y")}
    # lecture: drawn at the window's height (show_figure's fit_top), the legend one curve a row
    fig = fig_cost(T, shown, marks, labels=labels, font_size=ui.font_size(), height=640 if ui.lecture() else 500,
                   stacked_legend=ui.lecture())

    at = cost.memory_curves(cfg, np.array([T_read]), batch=batch, dtype=dtype, interval=interval)
    with controls:
        per_layer = cost.layer_memory(cfg, batch=batch, dtype=dtype)
        st.caption(ui.tr("cost.layers", gdn=n_gdn, attn=n_attn, L=cfg["num_hidden_layers"])
                   + ui.tr("cost.sizes_in", dtype=dtype, s=per_layer["element_bytes"]))
        # the format is named where a size is shown: in the caption above, and (lecture mode hides captions,
        # but has one metric a row, room for it) in the two per-layer labels
        named = (lambda k: ui.tr("cost.with_dtype", label=ui.tr(k), dtype=dtype)) if ui.lecture() else ui.tr
        # Two metrics a row; one in lecture mode, where a narrow column would cut the labels short.
        m = [st] * 4 if ui.lecture() else [*st.columns(2), *st.columns(2)]
        m[0].metric(ui.tr("cost.total_at"), cost.fmt_bytes(at["hybrid"][0]))
        m[1].metric(ui.tr("cost.full_at"), cost.fmt_bytes(at["full"][0]))
        m[2].metric(named("cost.state_per_layer"), cost.fmt_bytes(per_layer["state"]))
        m[3].metric(named("cost.kv_per_token"), cost.fmt_bytes(per_layer["kv_per_token"]))
        st.caption(ui.tr("cost.prompt_note", n=f"{prompt:,}") if has_prompt else ui.tr("cost.no_prompt"))
    with chart:
        ui.show_figure(fig, key="cost_fig", alt=ui.tr("cost.alt", model=name), fit_top=130)

    # The arithmetic behind the two per-layer numbers, as formulas with this model's numbers put in.
    latex = cost.formula_latex(cfg, batch=batch, dtype=dtype)
    st.markdown(ui.tr("cost.formula_state", expr=latex["state"]))
    st.markdown(ui.tr("cost.formula_kv", expr=latex["kv"]))
    st.markdown(ui.tr("cost.formula_cross", expr=latex["cross"]))
    with st.expander(ui.tr("cost.leaves_out_title"), icon=":material/info:"):
        st.markdown(ui.tr("cost.leaves_out", conv=cost.fmt_bytes(cost.conv_cache_bytes(cfg, batch=batch, dtype=dtype))))

    st.subheader(ui.tr("cost.table_title", dtype=dtype, batch=batch))
    rows = cost.summary(SIZES, T_read, batch=batch, dtype=dtype, interval=interval)
    col = lambda k: ui.tr(f"cost.col_{k}")
    # a plain table, not st.dataframe: its canvas grid redrew on every context-slider move (the browser's
    # time, not the server's), and its text does not follow lecture mode's larger font
    st.table([{col("model"): r["model"], col("layers"): f"{r['layers'][0]} + {r['layers'][1]}",
               col("state"): cost.fmt_bytes(r["state"]), col("kv"): cost.fmt_bytes(r["kv"]),
               col("cross"): f"{r['crossover']:,.0f}", col("hybrid"): cost.fmt_bytes(r["hybrid"]),
               col("full"): cost.fmt_bytes(r["full"])} for r in rows], hide_index=True)
    st.caption(ui.tr("cost.source_note"))


curves_view()
