"""A 2-D view of one delta-rule write (keys as arrows, the write as a projection), drawn inside a page.

Angle sliders, not draggable arrows: a slider is keyboard-operable (arrow keys), bound to the link, and
needs no component of our own in the browser. Widget keys start with the host page's prefix, so the
page's share link carries them.
"""
import numpy as np
import streamlit as st

from gdn.figures.geometry import fig_write_2d
from gdn.lessons.geometry import scene
from app_pages._support import ui

ANGLES = list(range(0, 360, 5))
BETAS = [round(0.1 * i, 1) for i in range(11)]


@st.fragment
def render(prefix: str = "playground") -> None:
    """The section: a heading, three sliders (k1's angle, k2's angle, beta), the figure, one line of numbers."""
    st.subheader(ui.tr("geometry.title"))
    st.caption(ui.tr("geometry.intro"))
    c = st.columns(3)
    deg = lambda d: f"{d}°"
    k1 = ui.linked(c[0].select_slider, ui.tr("geometry.k1_angle"), ANGLES, key=f"{prefix}_delta2d_k1", default=0,
                   format_func=deg)
    k2 = ui.linked(c[1].select_slider, ui.tr("geometry.k2_angle"), ANGLES, key=f"{prefix}_delta2d_k2", default=60,
                   format_func=deg)
    beta = ui.linked(c[2].select_slider, ui.tr("geometry.beta"), BETAS, key=f"{prefix}_delta2d_beta", default=1.0)
    s = scene(k1, k2, beta)
    names = ("key_plane", "value_plane", "k1", "k2", "v1", "v2", "along", "across", "read1", "read2", "angle",
             "interference", "dim1", "dim2")
    labels = {n: ui.tr(f"geometry.{n}") for n in names}
    fig = ui.shared_figure(fig_write_2d, s, labels=labels, font_size=ui.font_size(), height=560 if ui.lecture() else 440)
    ui.show_figure(fig, key=f"{prefix}_delta2d_fig", alt=ui.tr("geometry.alt"))
    r1, r2 = s.read_k1[1] + 0.0, s.read_k2[1] + 0.0              # + 0.0: never print -0.00
    r1, r2 = (np.where(np.abs(r) < 0.005, 0.0, r) for r in (r1, r2))
    st.markdown(ui.tr("geometry.numbers", deg=f"{s.angle:.0f}", cos=f"{s.cos:.2f}", beta=f"{beta:.1f}",
                      r2=f"({r2[0]:.2f}, {r2[1]:.2f})", r1=f"({r1[0]:.2f}, {r1[1]:.2f})", x=f"{s.interference:.2f}"))
    st.caption(ui.tr("geometry.story"))              # a caption, not a callout: the panels above own st.info
