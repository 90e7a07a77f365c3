"""Classroom (课堂): predict-then-reveal exercises with live demos, teacher notes, history, glossary."""
import pandas as pd
import streamlit as st

from gdn.i18n import t
from gdn.lessons.classroom import EXERCISES, GLOSSARY, NOTES_FIELDS, NOTES_PAGES, TIMELINE, arxiv_url
from app_pages import _follow, _live, _live_phone
from app_pages._support import path, ui, view

if st.query_params.get("join"):                  # a student's phone: the live question, nothing else
    _live_phone.student_view(st.query_params["join"], _follow.open_view)
    st.stop()
st.title(ui.tr("classroom.title"))
st.caption(ui.tr("classroom.intro"))


def demo_target(demo) -> tuple[str, dict]:
    """The lesson names a stop and its settings; here they become the page file and its widget keys
    (every page's widgets are keyed <stop>_<setting>)."""
    stop = next(s for s in path.PATH if s.key == demo.page)
    return stop.file, {f"{stop.key}_{name}": value for name, value in demo.settings.items()}


def open_demo(demo) -> None:
    """Put the demo's widget values in the session (a page reads them on its first run), then go. Set on
    purpose: a player or slider the tab had moved since (unreported) takes them too."""
    page, state = demo_target(demo)
    view.set_on_purpose(state)
    path.go(page)


def exercise_card(n: int, ex) -> None:
    with st.container(border=True):
        fields = ex.fields()                         # numbers the texts state, computed (e.g. from the sizes file)
        st.markdown(f"**{n}. {ui.tr(f'classroom.q_{ex.id}', **fields)}**")
        language = ui.lang()                         # captured: the radio calls this outside the script run too
        option = lambda i: t(f"classroom.o_{ex.id}_{i}", language, **fields)
        choice = st.radio(ui.tr("classroom.your_answer"), range(ex.n_options), index=None, format_func=option,
                          key=f"classroom_pick_{ex.id}", label_visibility="collapsed")
        revealed = st.session_state.get(f"classroom_shown_{ex.id}", False)
        if st.button(ui.tr("classroom.check"), key=f"classroom_check_{ex.id}", icon=":material/visibility:"):
            if choice is None:
                st.warning(ui.tr("classroom.pick_first"))
            else:
                st.session_state[f"classroom_shown_{ex.id}"] = revealed = True
        if revealed and choice is not None:
            if choice == ex.answer:
                st.success(ui.tr("classroom.right"), icon=":material/check_circle:")
            else:
                st.error(ui.tr("classroom.wrong", answer=option(ex.answer)), icon=":material/cancel:")
            st.markdown(ui.tr(f"classroom.e_{ex.id}", **fields))
            if st.button(ui.tr("classroom.show_demo"), key=f"classroom_demo_{ex.id}", icon=":material/play_circle:",
                         type="primary"):
                open_demo(ex.demo)


_live.teacher_panel(open_demo)
exercises, notes, history, glossary = st.tabs([ui.tr(f"classroom.tab_{n}") for n in
                                               ("exercises", "notes", "timeline", "glossary")])
with exercises:
    left, right = st.columns(2)
    for n, ex in enumerate(EXERCISES, start=1):
        with left if n % 2 else right:
            exercise_card(n, ex)
with notes:
    for page in NOTES_PAGES:
        st.subheader(ui.tr(f"nav.{page}"))
        st.markdown(ui.tr(f"classroom.notes_{page}", **NOTES_FIELDS.get(page, dict)()))
with history:
    for year, event, arxiv_id in TIMELINE:
        st.markdown(f"**{year}** · {ui.tr(f'classroom.timeline_{event}')} "
                    f"[{ui.tr('classroom.paper', id=arxiv_id)}]({arxiv_url(arxiv_id)})")
with glossary:
    rows = [{ui.tr("classroom.col_zh"): t(f"classroom.term_{g}", "zh"), ui.tr("classroom.col_en"): t(f"classroom.term_{g}", "en"),
             ui.tr("classroom.col_meaning"): ui.tr(f"classroom.def_{g}")} for g in GLOSSARY]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="classroom_glossary")
