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


def stepping_title(page: str) -> None:
    """A stepping page's title, and why its player opens where something first happens rather than at
    step 1 ("<page>.opens_at"): beside the title on a projector (lecture mode hides captions and leaves
    that room free), after the intro ("<page>.intro") otherwise."""
    if lecture():
        title, opens = st.columns([2, 1])
        title.title(tr(f"{page}.title"))
        opens.container(key=f"{page}_opens").markdown(tr(f"{page}.opens_at"))
    else:
        st.title(tr(f"{page}.title"))
        st.caption(f'{tr(f"{page}.intro")} {tr(f"{page}.opens_at")}')


def note(text: str, label: str | None = None, answer: str | None = None, fold: bool = True) -> None:
    """Explanatory text: a callout normally, folded away in lecture mode (the teacher says it) under
    `label` (default: "Explanation"); fold=False keeps it a callout there too. answer: the result the text
    asks the learner to predict, hidden until they ask for it (predict, then reveal)."""
    text = no_headings(text)
    if lecture() and fold:
        with st.expander(label or tr("common.notes")):
            st.markdown(text)
            if answer:                   # an expander cannot hold another: a popover opens over the page
                with st.popover(tr("common.reveal"), icon=":material/visibility:", help=tr("common.reveal_help")):
                    st.markdown(answer)
    else:
        st.info(text, icon=":material/lightbulb:")
        if answer:
            with st.expander(tr("common.reveal"), icon=":material/visibility:"):
                st.markdown(answer)


def story(key: str, fold: bool = True, **fields) -> None:
    """The hint box of `key`: its question shown, its result (the key + "_answer" string, when there is one)
    behind a reveal, as the classroom page does it."""
    answer = f"{key}_answer"
    note(tr(key, **fields), answer=tr(answer, **fields) if answer in table(lang()) else None, fold=fold)


def teacher_notes(page: str) -> None:
    """Sidebar: how to explain this page in five minutes (classroom.notes_<page>)."""
    key = f"classroom.notes_{page}"
    if key in table(lang()):
        with st.sidebar.expander(tr("common.teacher_notes"), icon=":material/school:"):
            st.markdown(tr(key, **NOTES_FIELDS.get(page, dict)()))
