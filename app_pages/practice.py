"""Practice (练习): six exercises, easy to hard, written in the page's editor and judged in a sandboxed child
process; the verdict names the first token and stage where the code leaves the reference."""
import streamlit as st

from gdn.practice.exercises import EXERCISES
from app_pages import _practice as practice
from app_pages._support import ui

st.title(ui.tr("practice.title"))
if not ui.lecture():
    st.caption(ui.tr("practice.intro"))
practice.relabel_picker()

# Lecture mode keeps the first screen for the statement and the editor: the picker goes to the sidebar. A new
# learner starts at exercise 1: the list goes from easy to hard.
picker = st.sidebar if ui.lecture() else st
eid = ui.linked(picker.selectbox, ui.tr("practice.pick"), EXERCISES, key="practice_exercise", default=next(iter(EXERCISES)),
                format_func=practice.exercise_labels(), help=ui.tr("practice.share_note"))
judge_off = st.empty()

# the statement beside the code, so neither scrolls the other away (a phone stacks the two columns)
statement_col, code_col = st.columns([2, 3], gap="large")
with statement_col:
    practice.statement(eid)
# After the statement: a server's first look at its sandbox starts Python in it (~1 s), and the first visitor
# reads the exercise meanwhile instead of a blank page.
mode, why = practice.judge_mode()
if mode is None:
    judge_off.warning(f"**{ui.tr('practice.off_title')}** · " + ui.tr("practice.off_text", why=why),
                      icon=":material/lock:")
with code_col:
    practice.editor(eid, disabled=mode is None)
    if mode is not None:
        st.caption(ui.tr(f"practice.mode_{mode}"))
    pending = st.session_state.get("practice_pending")
    if mode is not None and pending is not None and pending[0] == eid:
        practice.run_pending(mode)
    practice.verdict_view(eid)
    practice.hints_view(eid)

with st.expander(ui.tr("practice.cli_title"), icon=":material/terminal:"):
    st.markdown(ui.tr("practice.cli_text", id=eid))
practice.keep_progress()
