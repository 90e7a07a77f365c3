"""The playground's five experiments, one fragment each: sliders in a narrow column beside the chart they
move, the story under it. A slider reruns only its own panel; every computation is cached by its
parameters (bench/bench_pages.py times a slider change). The page (playground.py) draws the chosen one."""
import numpy as np
import streamlit as st

from gdn.figures import playground as figs
from gdn.lessons import playground as ex
from gdn.lessons.compare import RULES
from gdn.units import half_life
from app_pages._support import ui
from app_pages._support.caches import BOUNDS

DIMS = [16, 32, 64, 128]
cached = st.cache_data(max_entries=BOUNDS["playground.lessons"], show_spinner=False)
overwrite, repeated, curve = cached(ex.overwrite), cached(ex.repeated_writes), cached(ex.capacity_curve)


def sliders(panel: str):
    """The slider maker of one panel: slider(name, lo, hi, default, step, where, label), each slider linked
    to the URL as ?playground_<panel>_<name>= and labelled playground.<name> unless told."""
    def slider(name, lo, hi, default, step=None, where=st, label=None):
        return where.slider(ui.tr(label or f"playground.{name}"), lo, hi, default, step=step,
                            key=ui.bound(f"playground_{panel}_{name}"), bind="query-params")
    return slider


def rule_names() -> dict[str, str]:
    return {r: ui.tr(f"playground.rule_{r}") for r in RULES}


def metrics(values: dict[str, str]) -> None:
    for col, (label, value) in zip(st.columns(len(values)), values.items()):
        col.metric(label, value)


def beside() -> tuple:
    """(controls, chart): the sliders in a narrow column left of the chart they move."""
    return st.columns([1, 3], gap="medium")


@st.fragment
def overwrite_panel():
    controls, chart = beside()
    fs, lecture, rule_name = ui.font_size(), ui.lecture(), rule_names()
    slider = sliders("overwrite")
    with controls:
        geometry = ui.linked(st.selectbox, ui.tr("playground.geometry"), ex.GEOMETRIES, key="playground_geometry",
                             default="orthogonal", format_func=ui.label_maker("playground.geometry_"))
        angle = slider("angle", 0, 180, 60) if geometry == "angle" else 90
        n, K, V = slider("pairs", 1, 8, 3), slider("dk", 2, 8, 3), slider("dv", 1, 8, 3)
        alpha, beta = slider("alpha", 0.0, 1.0, 1.0, 0.01), slider("beta", 0.0, 1.0, 1.0, 0.01)
        knorm = slider("knorm", 0.1, 3.0, 1.0, 0.05)
    ow = overwrite(n, K, V, geometry=geometry, angle_deg=float(angle), alpha=alpha, beta=beta, knorm=knorm)
    with chart:
        labels = [ui.tr(f"playground.ow_{p}") for p in ("old", "interference", "missed")]
        rows = [ui.tr(f"playground.ow_row_{r}") for r in ("old", "target", *RULES)]
        ticks = [ui.tr(f"playground.rule_tick_{r}") for r in RULES]     # short: three fit unrotated beside the table
        fig = figs.fig_overwrite(ow.readout, ow.target, ow.old, ow.along, ow.error, rule_titles=ticks,
                                 part_labels=labels, total_label=ui.tr("playground.ow_total"), row_labels=rows,
                                 font_size=fs, height=520 if lecture else 440, value_axis=ui.tr("common.value_dim"),
                                 bars_axis=ui.tr("playground.ow_bars_axis"),
                                 titles=(ui.tr("playground.ow_bars_title"), ui.tr("playground.ow_rows_title")))
        ui.show_figure(fig, key="playground_ow_fig", alt=ui.tr("playground.ow_alt"))
        metrics({ui.tr("playground.ow_metric", rule=rule_name[r]): f"{e:.0%}" for r, e in zip(RULES, ow.error)}
                | {ui.tr("playground.ow_disturbed"): f"{ow.disturbed[-1]:.0%}"})
        ui.note(ui.tr("playground.ow_story"))
        others = np.abs(ow.cosine[0, 1:])
        if others.size:
            st.caption(ui.tr("playground.ow_cos", cos=f"{others.max():.2f}"))
        if geometry != "random" and n > K:
            st.caption(ui.tr("playground.ow_no_orth", K=K))


@st.fragment
def repeat_panel():
    controls, chart = beside()
    fs, lecture, rule_name = ui.font_size(), ui.lecture(), rule_names()
    slider = sliders("repeat")
    with controls:
        beta, alpha = slider("beta", 0.0, 1.0, 0.5, 0.01), slider("alpha", 0.0, 1.0, 1.0, 0.01)
        T = slider("writes", 1, 20, 8)
    dist = repeated(T, beta=beta, alpha=alpha)
    with chart:
        fig = figs.fig_repeated(dist, rule_titles=rule_name, xlabel=ui.tr("playground.rw_x"),
                                ylabel=ui.tr("playground.rw_y"), font_size=fs, height=460 if lecture else 380)
        ui.show_figure(fig, key="playground_rw_fig", alt=ui.tr("playground.rw_alt"))
        metrics({ui.tr("playground.rw_metric", rule=rule_name[r], T=T): f"{dist[r][-1]:.1%}" for r in RULES})
        ui.story("playground.rw_story")


@st.fragment
def knorm_panel():
    controls, chart = beside()
    fs, lecture = ui.font_size(), ui.lecture()
    slider = sliders("knorm")
    with controls:
        # beta in [0, 2): the "negative eigenvalue" opt-in. Off, beta stays in Qwen3.5's [0, 1].
        negative = st.toggle(ui.tr("playground.kn_negative"), key=ui.bound("playground_knorm_negative"),
                             bind="query-params", help=ui.tr("playground.kn_negative_help"))
        beta_max = 1.99 if negative else 1.0
        if st.session_state.get("playground_knorm_beta", 0.0) > beta_max:    # turned off above 1: back in range
            st.session_state["playground_knorm_beta"] = beta_max
        knorm, beta = slider("knorm", 0.1, 3.0, 1.0, 0.05), slider("beta", 0.0, beta_max, 1.0, 0.01)
        T = slider("writes", 1, 30, 10)
    grid = np.linspace(0.0, 3.0, 121)
    errors, clipped = ex.clip_for_display(repeated(T, beta=beta, knorm=knorm)["delta"])
    labels = {n: ui.tr(f"playground.kn_{n}") for n in ("factor_title", "error_title", "factor", "knorm", "distance",
                                                       "shrink", "overshoot", "diverge", "clipped")}
    labels["writes"] = ui.tr("playground.rw_x")
    x = beta * knorm ** 2
    state = ("none" if np.isclose(x, 0) else "exact" if np.isclose(x, 1) else "edge" if np.isclose(x, 2) else
             "shrink" if x < 1 else "overshoot" if x < 2 else "diverge")
    with chart:
        fig = figs.fig_key_norm(grid, ex.along_k_factor(grid, beta), knorm, errors, clipped=clipped, labels=labels,
                                font_size=fs, height=500 if lecture else 420)
        ui.show_figure(fig, key="playground_kn_fig", alt=ui.tr("playground.kn_alt"))
        metrics({ui.tr("playground.kn_new_term"): f"× {knorm:.2f}", ui.tr("playground.kn_correction"): f"× {knorm ** 2:.2f}",
                 ui.tr("playground.kn_factor_metric"): f"{1 - x:.2f}"})
        show = {"diverge": st.error, "edge": st.warning, "overshoot": st.warning, "none": st.info}.get(state, st.success)
        show(ui.tr(f"playground.kn_state_{state}", x=f"{x:.2f}"))
        if negative:
            st.info(ui.tr("playground.kn_negative_note", beta=f"{beta:.2f}", eig=f"{1 - beta:.2f}"), icon=":material/science:")
        ui.note(ui.tr("playground.kn_story"))


@st.fragment
def capacity_panel():
    controls, chart = beside()
    fs, lecture, rule_name = ui.font_size(), ui.lecture(), rule_names()
    slider = sliders("capacity")
    with controls:
        K = st.select_slider(ui.tr("playground.dk"), DIMS, 128, key=ui.bound("playground_cap_dk"), bind="query-params")
        V = st.select_slider(ui.tr("playground.dv"), DIMS, 128, key=ui.bound("playground_cap_dv"), bind="query-params")
        N = st.select_slider(ui.tr("playground.cap_N"), ex.CAPACITY_NS, 256, key=ui.bound("playground_cap_N"),
                             bind="query-params")
        alpha = slider("alpha", 0.8, 1.0, 0.99, 0.005, label="playground.cap_alpha")
        geometry = ui.linked(st.selectbox, ui.tr("playground.geometry"), ["random", "orthogonal"],
                             key="playground_cap_geometry", default="random", format_func=ui.label_maker("playground.geometry_"))
        seed = ui.linked_int(st, ui.tr("playground.seed"), 0, 9999, 0, key="playground_cap_seed")
    curves = {r: curve(r, K, V, alpha=alpha if r == "gated" else 1.0, seed=int(seed), geometry=geometry)
              for r in RULES}
    split = [ui.tr(f"playground.cap_{s}") for s in ("all", "recent", "oldest")]
    labels = {"curve_title": ui.tr("playground.cap_curve_title"), "split_title": ui.tr("playground.cap_split_title", N=N),
              "knee": ui.tr("playground.cap_knee", K=K), "N": ui.tr("playground.cap_x"),
              "error": ui.tr("playground.cap_error")}
    with chart:
        fig = figs.fig_capacity(np.array(ex.CAPACITY_NS), curves, K, N, rule_titles=rule_name, split_labels=split,
                                labels=labels, font_size=fs, height=520 if lecture else 440)
        ui.show_figure(fig, key="playground_cap_fig", alt=ui.tr("playground.cap_alt"))
        i = ex.CAPACITY_NS.index(N)
        table = {ui.tr("playground.cap_table_rule"): list(rule_name.values())}
        table |= {s: [f"{curves[r][i, j]:.1%}" for r in RULES] for j, s in enumerate(split)}
        st.dataframe(table, hide_index=True, key="playground_cap_table")
        ui.note(ui.tr("playground.cap_story"))
        st.caption(ui.tr("playground.cap_protocol", seed=int(seed)))


@st.fragment
def halflife_panel():
    controls, chart = beside()
    fs, lecture = ui.font_size(), ui.lecture()
    slider = sliders("halflife")
    alpha = slider("alpha", 0.0, 1.0, 0.97, 0.01, where=controls, label="playground.hl_alpha")
    half = half_life(alpha)
    refs = [a for a in (0.5, 0.9, 0.97, 0.99) if not np.isclose(a, alpha)]
    curves = ex.decay_curves([*refs, alpha], 100)
    labels = {"n": ui.tr("playground.hl_n"), "kept": ui.tr("playground.hl_kept"), "half_at": ui.tr("playground.hl_half_at")}
    text = (ui.tr("playground.hl_never") if np.isinf(half) else ui.tr("playground.hl_at_once") if half == 0
            else ui.tr("playground.hl_tokens", n=f"{half:.1f}"))
    with controls:
        st.metric(ui.tr("playground.hl_half"), text)
        for n in (10, 50):
            st.metric(ui.tr("playground.hl_after", n=n), f"{curves[-1, n]:.3g}")
    with chart:
        fig = figs.fig_half_life(curves, refs, alpha, half, labels=labels, font_size=fs, height=460 if lecture else 380)
        ui.show_figure(fig, key="playground_hl_fig", alt=ui.tr("playground.hl_alt"))
        ui.story("playground.hl_story")


PANELS = {"overwrite": overwrite_panel, "repeat": repeat_panel, "knorm": knorm_panel, "capacity": capacity_panel,
          "halflife": halflife_panel}
