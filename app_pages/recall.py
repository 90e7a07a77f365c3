"""Recall (回忆): tiny models trained on multi-query associative recall, which memory rule recalls most,
a live CPU run, a trained Gated DeltaNet's gates, the write as a gradient step, and the gates' init."""
import streamlit as st

from app_pages import _recall_views as views
from app_pages._support import ui

st.title(ui.tr("recall.title"))
st.caption(ui.tr("recall.intro"))

st.subheader(ui.tr("recall.results_title"))
views.results_view()

st.subheader(ui.tr("recall.train_title"))
views.train_view()

st.subheader(ui.tr("recall.inside_title"))
views.inside_view()

st.subheader(ui.tr("recall.step_title"))
views.step_view()

st.subheader(ui.tr("recall.gates_init_title"))
views.gate_init_view()
