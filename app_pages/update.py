"""Update (改写): the experiment that tells the delta rule from linear attention. A key's value changes before
it is asked: trained results with every seed, a live CPU run, and inside the trained models the answer for a
rewritten key moving (or not) from its old value to the new one."""
import streamlit as st

from app_pages import _update_views as views
from app_pages._support import ui

st.title(ui.tr("update.title"))
st.caption(ui.tr("update.intro"))

st.subheader(ui.tr("update.results_title"))
views.results_view()

st.subheader(ui.tr("update.task_title"))
views.task_view()

st.subheader(ui.tr("update.train_title"))
views.train_view()

st.subheader(ui.tr("update.inside_title"))
views.inside_view()
