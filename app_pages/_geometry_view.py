"""A 2-D view of one delta-rule write (keys as arrows, the write as a projection), drawn inside a page.

Answered in the browser by the explorer (app_pages/_support/explorer.py): Python draws the view at every
point of its three sliders' grid, so a move paints in the next frame and reruns nothing. The sliders are
k1's angle (30° steps: turning both keys together only rotates the picture), the angle from k1 to k2 (15°
steps: 0°, 45°, 90°, 180° among them, the angles whose interference the lesson names) and beta: 12 x 13 x
11 frames. Widget keys start with the host page's prefix, so the page's share link carries them.
"""
import numpy as np
import streamlit as st

from gdn.figures.geometry_html import write_2d_html
from gdn.lessons.geometry import scene
from app_pages._support import ui
from app_pages._support.caches import BOUNDS
from app_pages._support.explorer import Control, explorer, pack_grid
from app_pages._support.pack import Packed

K1_ANGLES = tuple(range(0, 360, 30))
BETWEEN = tuple(range(0, 181, 15))          # k2 = k1 turned this far counter-clockwise
BETAS = tuple(round(0.1 * i, 1) for i in range(11))
NAMES = ("key_plane", "value_plane", "k1", "k2", "v1", "v2", "along", "across", "read1", "read2", "angle",
         "interference", "dim1", "dim2")


def pair(r: np.ndarray) -> str:
    r = np.where(np.abs(r) < 0.005, 0.0, r) + 0.0                # never print -0.00
    return f"({r[0]:.2f}, {r[1]:.2f})"


def words() -> dict[str, str]:
    """The view's strings in the page's language, looked up once per grid rather than at every frame."""
    return {n: ui.tr(f"geometry.{n}") for n in (*NAMES, "m_angle", "m_read2", "m_read1", "m_interference", "alt")}


def write_2d_frame(k1: int, between: int, beta: float, w: dict[str, str]) -> str:
    """The view at one grid point: the lesson's scene, drawn, with its numbers above. w: words()."""
    s = scene(k1, k1 + between, beta)
    metrics = [("angle", w["m_angle"], w["angle"].format(deg=f"{s.angle:.0f}", cos=f"{s.cos:.2f}")),
               ("read2", w["m_read2"], pair(s.read_k2[1])), ("read1", w["m_read1"], pair(s.read_k1[1])),
               ("interference", w["m_interference"], f"{s.interference:.2f}")]
    return write_2d_html(s, labels=w, metrics=metrics, alt=w["alt"])


def write_2d_controls(prefix: str) -> list[Control]:
    deg = lambda xs: tuple(f"{d}°" for d in xs)
    return [Control(f"{prefix}_delta2d_k1", ui.tr("geometry.k1_angle"), K1_ANGLES, deg(K1_ANGLES), 0),
            Control(f"{prefix}_delta2d_between", ui.tr("geometry.between"), BETWEEN, deg(BETWEEN), 60, play=True),
            Control(f"{prefix}_delta2d_beta", ui.tr("geometry.beta"), BETAS, tuple(f"{b:.1f}" for b in BETAS), 1.0)]


@st.cache_resource(max_entries=BOUNDS["explorer.geometry"], show_spinner=False)
def _packed(prefix: str, language: str, lecture: bool) -> Packed:
    w = words()
    return pack_grid(write_2d_controls(prefix), lambda k1, between, beta: write_2d_frame(k1, between, beta, w))


@st.fragment
def render(prefix: str = "playground") -> None:
    """The section: a heading, the explorer (three sliders over the two planes and the numbers), the story."""
    st.subheader(ui.tr("geometry.title"))
    st.caption(ui.tr("geometry.intro"))
    explorer(f"{prefix}_delta2d", write_2d_controls(prefix), _packed(prefix, ui.lang(), ui.lecture()),
             alt=ui.tr("geometry.alt"), side=True)
    st.caption(ui.tr("geometry.story"))              # a caption, not a callout: the panels above own st.info
