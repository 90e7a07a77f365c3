"""Explanations beside the figures: callouts for the reader, folded notes in lecture mode, teacher notes."""
from __future__ import annotations

import streamlit as st

from gdn.i18n import table
from gdn.lessons.classroom import NOTES_FIELDS
from app_pages._support.chrome import lang, lecture, tr


def note(text: str) -> None:
    """Explanatory text: a callout normally, folded away in lecture mode (the teacher says it)."""
    if lecture():
        with st.expander(tr("common.notes")):
            st.markdown(text)
    else:
        st.info(text, icon=":material/lightbulb:")


def teacher_notes(page: str) -> None:
    """Sidebar: how to explain this page in five minutes (classroom.notes_<page>)."""
    key = f"classroom.notes_{page}"
    if key in table(lang()):
        with st.sidebar.expander(tr("common.teacher_notes"), icon=":material/school:"):
            st.markdown(tr(key, **NOTES_FIELDS.get(page, dict)()))
