"""Playground (游乐场): overwrite vs blur, repeated writes, key norm, capacity and half-life.

One experiment at a time (app_pages/_playground_panels.py), its sliders in a column beside its chart (both
in the first screen) and its story under the chart; then the 2-D view of one write.
"""
import streamlit as st

from app_pages._geometry_view import render as geometry_view
from app_pages._playground_panels import PANELS
from app_pages._support import ui

st.title(ui.tr("playground.title"))
st.caption(ui.tr("playground.intro"))
panel = ui.linked(st.segmented_control, ui.tr("playground.panel"), tuple(PANELS), key="playground_panel",
                  default="overwrite", required=True, format_func=ui.label_maker("playground.panel_"),
                  label_visibility="collapsed")
PANELS[panel]()
geometry_view()
