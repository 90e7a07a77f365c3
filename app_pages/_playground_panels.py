"""The playground's five experiments, one fragment each: sliders in a narrow column beside the chart they
move, the story under it. Four are answered in the browser (_playground_toys.py); the capacity view runs
kernels and stays here: a slider reruns only its panel, every computation cached by its parameters
(bench/bench_pages.py times a slider change). The page (playground.py) draws the chosen one."""
import numpy as np
import streamlit as st

from gdn.figures import playground as figs
from gdn.lessons import playground as ex
from gdn.lessons.compare import rule_of
from app_pages._playground_toys import halflife_panel, knorm_panel, overwrite_panel, repeat_panel
from app_pages._support import ui
from app_pages._support.caches import BOUNDS

DIMS = [16, 32, 64, 128]
cached = st.cache_data(max_entries=BOUNDS["playground.lessons"], show_spinner=False)
curve = cached(ex.capacity_curve)


def sliders(panel: str):
    """The slider maker of one panel: slider(name, lo, hi, default, step, where, label), each slider linked
    to the URL as ?playground_<panel>_<name>= and labelled playground.<name> unless told."""
    def slider(name, lo, hi, default, step=None, where=st, label=None):
        return where.slider(ui.tr(label or f"playground.{name}"), lo, hi, default, step=step,
                            key=ui.bound(f"playground_{panel}_{name}"), bind="query-params")
    return slider


def rule_names() -> dict[str, str]:
    return {r: ui.tr(f"playground.rule_{r}") for r in ex.RULES}


def beside() -> tuple:
    """(controls, chart): the sliders in a narrow column left of the chart they move."""
    return st.columns([1, 3], gap="medium")


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
    curves = {r: curve(r, K, V, alpha=alpha if rule_of(r).decays else 1.0, seed=int(seed), geometry=geometry)
              for r in ex.RULES}                               # alpha = 1 for the others: one cached curve for every alpha
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
        table |= {s: [f"{curves[r][i, j]:.1%}" for r in ex.RULES] for j, s in enumerate(split)}
        st.dataframe(table, hide_index=True, key="playground_cap_table")
        ui.note(ui.tr("playground.cap_story"))
        st.caption(ui.tr("playground.cap_protocol", seed=int(seed)))


PANELS = {"overwrite": overwrite_panel, "repeat": repeat_panel, "knorm": knorm_panel, "capacity": capacity_panel,
          "halflife": halflife_panel}
