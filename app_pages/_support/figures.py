"""How charts are drawn and downloaded: one place sets the toolbar, the size and the offline HTML export."""
from __future__ import annotations

import hashlib

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from app_pages._support.chrome import lecture, tr


def stream_key(stream) -> str:
    """A fingerprint of a one-head stream's numbers, to share figures built from equal streams."""
    digest = hashlib.sha1()
    for name in ("k", "v", "q", "alpha", "beta", "S0"):
        array = np.ascontiguousarray(getattr(stream, name), dtype=np.float64)
        digest.update(str(array.shape).encode() + array.tobytes())
    return digest.hexdigest()


@st.cache_resource(max_entries=1024, show_spinner=False)
def shared_figure(key: tuple, _build) -> go.Figure:
    """_build() once per key for the whole server; everyone stepping through the same example gets the
    same Figure object (never mutated: st.plotly_chart only reads it). Plotly's validated build is
    most of a step's server time (the memory figure: 47 of ~95 ms), and a class steps through the
    same few examples. The key must hold everything the figure depends on (language, sizes)."""
    return _build()


def show_figure(fig: go.Figure, key: str, alt: str, export: bool = True, **events):
    """One place that sets how charts are drawn: full width, toolbar PNG at slide resolution (3x),
    and a standalone HTML download that works offline (plotly.js inlined). events: on_select and
    selection_mode, passed to st.plotly_chart; returns its selection event (None without them)."""
    config = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 3, "filename": key}}
    event = st.plotly_chart(fig, key=key, config=config, alt=alt, theme=None, **events)
    if export:
        figure_download(key, lambda: fig)
    return event if events else None


def figure_download(key: str, build) -> None:
    """The standalone HTML download (plotly.js inlined, works offline) of build()'s figure, built only when
    clicked: also for pictures the page draws as HTML tables. Not in lecture mode (the room needs no button)."""
    if not lecture():
        st.download_button(tr("common.download_html"), data=lambda: build().to_html(include_plotlyjs=True),
                           file_name=f"{key}.html", mime="text/html", key=f"{key}_html",
                           icon=":material/download:", type="tertiary", on_click="ignore")
