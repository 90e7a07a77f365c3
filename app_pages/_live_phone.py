"""A student's phone in a live class (?join=CODE on the classroom page): the live question as big
buttons, the answer until the reveal, then the right answer and its explanation. The board polls the room
every _live.FOLLOW_S (one shared read per replica, _live.room_now), so when the teacher moves on or
projects another page (follow-me) the phone follows within 2 s.
"""
from __future__ import annotations

import streamlit as st
from sqlalchemy.exc import SQLAlchemyError

from gdn.figures.live import LETTERS
from gdn.live.store import NoRoom, normalize_code
from app_pages._live import (
    FOLLOW_S,
    QUESTIONS,
    STUDENT_CSS,
    attempt,
    explain,
    identity,
    option_words,
    room_now,
    show_message,
    store,
)
from app_pages._support import ui


def student_view(raw_code: str, open_view) -> None:
    """The whole page on a student's phone. open_view(code, view): open the teacher's view (follow-me)."""
    st.html(STUDENT_CSS)
    try:
        code = normalize_code(raw_code)
    except NoRoom:
        st.error(ui.tr("live.err_no_room", code=str(raw_code)[:12]), icon=":material/error:")
        return
    voter = identity()["voter"]
    if voter:
        st.session_state["_live_voter"] = voter
    with st.container(key="live_student"):
        student_board(code, open_view)


def _vote(code: str, voter: str, round_: int, choice: int) -> None:
    if attempt(store().vote, code, voter, round_, choice):
        st.session_state["_live_mine"] = (code, round_, choice)


def my_choice(code: str, voter: str, round_: int) -> int | None:
    """This browser's answer in this round: remembered from its last vote, else read once from the store
    (a reloaded phone shows what it answered)."""
    known = st.session_state.get("_live_mine")
    if known is None or known[:2] != (code, round_):
        known = st.session_state["_live_mine"] = (code, round_, store().my_vote(code, voter, round_))
    return known[2]


@st.fragment(run_every=FOLLOW_S)
def student_board(code: str, open_view) -> None:
    try:
        room = room_now(code)
    except NoRoom:
        seen = st.session_state.get("_live_seen") == code
        st.info(ui.tr("live.ended")) if seen else st.error(ui.tr("live.err_no_room", code=code), icon=":material/error:")
        return
    except (SQLAlchemyError, OSError) as error:
        st.warning(explain(error), icon=":material/cloud_off:")
        return
    st.session_state["_live_seen"] = code
    if room.view and room.view.get("page") != "classroom":
        open_view(code, room.view)                 # follow-me: the page the teacher projects
        return
    st.markdown(f"#### {ui.tr('live.title', code=code)}")
    voter = st.session_state.get("_live_voter")
    if room.question is None or voter is None:
        st.info(ui.tr("live.waiting" if voter else "live.connecting"), icon=":material/hourglass_top:")
        return
    ex, language = QUESTIONS[room.question], ui.lang()
    mine = my_choice(code, voter, room.round)
    st.markdown(f"**{ui.tr(f'classroom.q_{ex.id}', **ex.fields())}**")
    for i, words in enumerate(option_words(ex, language)):
        marks = [ui.tr("live.right_mark")] * (room.revealed and i == ex.answer) + [ui.tr("live.mine_mark")] * (
            room.revealed and i == mine)                       # after the reveal the buttons are grey: say which
        label = f"{'✓ ' * (room.revealed and i == ex.answer)}{LETTERS[i]}  ·  {words}"
        marked = ui.tr("live.marks", marks=ui.tr("live.marks_sep").join(marks)) if marks else ""
        st.button(label + marked, key=f"live_opt_{room.round}_{i}", width="stretch",
                  type="primary" if mine == i else "secondary", disabled=room.revealed,
                  on_click=_vote, args=(code, voter, room.round, i))
    show_message()
    if room.revealed:
        right = f"{LETTERS[ex.answer]} · {option_words(ex, language)[ex.answer]}"
        if mine == ex.answer:
            st.success(ui.tr("classroom.right"), icon=":material/check_circle:")
        else:
            st.error(ui.tr("classroom.wrong", answer=right) if mine is not None else
                     f"{ui.tr('live.no_answer')} {ui.tr('classroom.wrong', answer=right)}", icon=":material/cancel:")
        st.markdown(ui.tr(f"classroom.e_{ex.id}", **ex.fields()))
    elif mine is not None:
        st.success(ui.tr("live.your_answer", letter=LETTERS[mine]), icon=":material/how_to_vote:")
