"""The first view: every head's gates over the prompt with the model's top-3 guesses under them, then the
per-layer overview of all heads. Every layer's gates and overview are built in the worker that runs the
prompt (app_pages/_real_model/drawn.py: RunViews, kept by the trace's identity and the language); this view
places them, and each goes to a tab once (swap.py)."""
from __future__ import annotations

import time

import streamlit as st

from app_pages._real_model import keys
from app_pages._real_model.context import ViewContext
from app_pages._real_model.drawn import RunViews
from app_pages._support import swap, ui

GUESS_CSS = f"<style>{(ui.ASSETS / 'real_model' / 'guess.css').read_text(encoding='utf-8').strip()}</style>"


def gates(c: ViewContext) -> None:
    views = c.views()
    alt, marks = views.alts[c.layer], views.marks[c.layer]
    if views.gates:
        # Every layer at once, swapped in the browser (no run per layer); HTML, not Plotly: a new layer would
        # mount a new chart, whose newPlot was most of a layer change's wait. The download is this layer's HTML.
        swap.swap(keys.LAYER, views.gates_packed, value=c.layer, default=c.run.layers[0],
                  bar_label=ui.tr("real_model.layer_bar", n=len(c.run.layers)),
                  name="gates")                               # buttons: the layer numbers, as on the axes
        ui.html_download(keys.GATES_FIG, views.gates[c.layer], alt)
    else:                       # a long prompt: its chosen layer, as Plotly (built in the worker too)
        ui.show_figure(views.figure, key=keys.GATES_FIG, alt=alt)
    st.caption(ui.tr("real_model.guesses_caption_same_script" if c.demo else "real_model.guesses_caption"))
    st.html(GUESS_CSS.replace("SIZE", "1.1rem" if c.lecture else "0.8rem") + views.guesses)
    right = views.answers
    line = [ui.tr("real_model.ran", T=c.T, **c.loaded.counts, s=f"{time.perf_counter() - c.started:.2f}")]
    if right:
        line.append(ui.tr("real_model.accuracy", right=sum(r for _, _, r in right), n=len(right)))
    if marks:
        line.append(ui.tr("real_model.marks_legend"))
    st.caption(" · ".join(line))
    ui.note(ui.tr("real_model.gates_explain"))
    overview(c, views)


def overview(c: ViewContext, views: RunViews) -> None:
    st.markdown(ui.tr("real_model.overview_explain"))
    # HTML tables: a new layer only moves the frame, and Streamlit would mount a new Plotly chart for it
    # (a three-heatmap newPlot); the download is this HTML. Its framed row follows the layer picked above
    # it (swapped with the gates, same key)
    swap.swap(keys.LAYER, views.overview_packed, value=c.layer, default=c.run.layers[0], name="overview")
    ui.html_download(keys.OVERVIEW_FIG, views.overview[c.layer], ui.tr("real_model.alt_overview"))
