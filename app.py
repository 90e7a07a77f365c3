"""Gated DeltaNet Explorer: page routing and the chrome every page shares (language, lecture mode)."""
import streamlit as st

from pages import _ui as ui

st.set_page_config(page_title="Gated DeltaNet Explorer", page_icon="🧠", layout="wide")
ui.init_session()

pages = [
    st.Page("pages/memory_table.py", title=ui.tr("nav.memory"), icon="🧮", url_path="memory", default=True),
    st.Page("pages/compare.py", title=ui.tr("nav.compare"), icon="⚖️", url_path="compare"),
]
page = st.navigation(pages, position="top")
ui.sidebar_chrome()
page.run()
