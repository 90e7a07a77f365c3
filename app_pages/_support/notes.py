"""Explanations beside the figures: callouts for the reader, folded notes in lecture mode, teacher notes."""
from __future__ import annotations

import re

import streamlit as st

from gdn.i18n import table
from gdn.lessons.classroom import NOTES_FIELDS
from app_pages._support.chrome import lang, lecture, tr


def no_headings(text: str) -> str:
    """A note's text with a "#" that starts a line shown as itself: the demo's topic marker "###" opens
    a sentence in Chinese ("### 之后，…"), which Markdown drew as a huge heading."""
    return re.sub(r"(?m)^(\s*)#", r"\1\\#", text)


def note(text: str, label: str | None = None) -> None:
    """Explanatory text: a callout normally, folded away in lecture mode (the teacher says it) under
    `label` (default: "Explanation")."""
    text = no_headings(text)
    if lecture():
        with st.expander(label or tr("common.notes")):
            st.markdown(text)
    else:
        st.info(text, icon=":material/lightbulb:")


def teacher_notes(page: str) -> None:
    """Sidebar: how to explain this page in five minutes (classroom.notes_<page>)."""
    key = f"classroom.notes_{page}"
    if key in table(lang()):
        with st.sidebar.expander(tr("common.teacher_notes"), icon=":material/school:"):
            st.markdown(tr(key, **NOTES_FIELDS.get(page, dict)()))
