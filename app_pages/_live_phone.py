"""A student's phone in a live class (?join=CODE on the classroom page): the live question as big
buttons, the answer until the reveal, then the right answer (marked green) and its explanation. The board
polls the room every _live.FOLLOW_S (one shared read per replica, _live.room_now), so when the teacher
moves on or projects another page (follow-me) the phone follows within 2 s.

The phone reads its own language (its browser's, ?lang only when it chose one with the switch on top), not
the projector's: the join link carries none. It votes from a seat the server gave it (Store.join, at a
limited rate and up to a cap per network address), kept in its localStorage, so a reload or another
replica keeps it. The code it opens is looked up once per session through Store.find_room, which counts a
client's wrong codes (guessing a class's code waits a minute after CODE_TRIES); the code as the link gave it
is echoed only as a short, visible cut (no bidi override turns the page's text around).
"""
from __future__ import annotations

import streamlit as st
from sqlalchemy.exc import SQLAlchemyError

from gdn.figures.live import LETTERS
from gdn.i18n import LANGS
from gdn.live.store import LiveError, NoRoom, NoSeat, normalize_code
from app_pages._live import (
    FOLLOW_S,
    QUESTIONS,
    SHOWN_CODE_CHARS,
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
from app_pages._support.chrome import LANG_NAMES
from app_pages._support.client import client_address
from app_pages._support.escape import plain
from app_pages._support.share import visible_cut


def student_view(raw_code: str, open_view) -> None:
    """The whole page on a student's phone. open_view(code, view): open the teacher's view (follow-me)."""
    st.html(STUDENT_CSS)
    language_switch()
    try:
        code = normalize_code(raw_code)
    except NoRoom:
        st.error(ui.tr("live.err_no_room", code=shown_code(raw_code)), icon=":material/error:")
        return
    if not room_found(code):
        return
    seats = identity()["seats"]
    if seats is not None:
        st.session_state["_live_kept"] = seats
        if seat_of(code) is None and not keep_seat(code, seats.get(code)) and take_seat(code):
            st.rerun()                            # the new seat goes to the browser's localStorage
    with st.container(key="live_student"):
        student_board(code, open_view)


def shown_code(raw_code) -> str:
    """A ?join= value as the page may echo it: visible characters only, cut short, Markdown-safe."""
    return plain(visible_cut(raw_code, SHOWN_CODE_CHARS))


def room_found(code: str) -> bool:
    """Once per code in a session: whether the room is there, asked as this client (Store.find_room counts
    its wrong codes). A wrong code or one tried too often is said here; an unreachable store is left to the
    board (it says so, and retries)."""
    if st.session_state.get("_live_found") == code:
        return True
    try:
        store().find_room(code, client_address())
    except LiveError as error:
        st.error(explain(error, student=True), icon=":material/error:")
        return False
    except (SQLAlchemyError, OSError):
        return True
    st.session_state["_live_found"] = code
    return True


def language_switch() -> None:
    """The phone's own language switch (a phone's sidebar is folded away): it follows the browser's
    language until the student picks one here."""
    st.session_state["live_lang"] = ui.lang()
    st.segmented_control(ui.tr("live.phone_lang"), LANGS, format_func=LANG_NAMES.get, key="live_lang",
                         label_visibility="collapsed", on_change=_language_picked)


def _language_picked() -> None:
    if st.session_state.get("live_lang") in LANGS:
        st.session_state["_lang"] = st.session_state["live_lang"]


# --- the seat -----------------------------------------------------------------------------------------
def seat_of(code: str) -> str | None:
    seat = st.session_state.get("_live_seat")
    return seat[1] if seat and seat[0] == code else None


def keep_seat(code: str, kept: str | None) -> bool:
    """The seat this browser kept for the room, if the store still has it; one the teacher freed is
    forgotten by the browser too (a locked room gives no new seat to overwrite it)."""
    try:
        if kept and store().has_seat(code, kept):
            st.session_state["_live_seat"] = (code, kept)
            return True
        if kept:
            st.session_state["_live_save_seat"] = {"code": code, "token": None}
    except (SQLAlchemyError, OSError):
        pass                                    # the store is away: keep the token, it may still be good
    return False


def take_seat(code: str) -> bool:
    """A new seat from the store (the mint limits how fast one address gets them); the browser is told to
    keep it. A refusal (the room locked, too many at once from this network) is the phone's message."""
    return attempt(_mint, code, student=True)


def _mint(code: str) -> str:
    seat = store().join(code, client_address())
    st.session_state["_live_seat"] = (code, seat)
    st.session_state["_live_save_seat"] = {"code": code, "token": seat}
    return seat


def _cast(code: str, round_: int, choice: int) -> None:
    """The vote; a seat the teacher freed is replaced once (a new seat, if the room is open), the tap kept."""
    try:
        store().vote(code, seat_of(code), round_, choice)
    except NoSeat:
        st.session_state.pop("_live_seat", None)
        store().vote(code, _mint(code), round_, choice)


def _vote(code: str, round_: int, choice: int) -> None:
    before = seat_of(code)
    if attempt(_cast, code, round_, choice, student=True):
        st.session_state["_live_mine"] = (code, round_, choice)
    if seat_of(code) != before:
        st.rerun(scope="app")                     # a new seat: the whole page, so the browser keeps it


def my_choice(code: str, seat: str, round_: int) -> int | None:
    """This browser's answer in this round: remembered from its last vote, else read once from the store
    (a reloaded phone shows what it answered)."""
    known = st.session_state.get("_live_mine")
    if known is None or known[:2] != (code, round_):
        known = st.session_state["_live_mine"] = (code, round_, store().my_vote(code, seat, round_))
    return known[2]


# --- the board ----------------------------------------------------------------------------------------
@st.fragment(run_every=FOLLOW_S)
def student_board(code: str, open_view) -> None:
    try:
        room = room_now(code)
    except NoRoom:
        seen = st.session_state.get("_live_seen") == code
        st.info(ui.tr("live.ended")) if seen else st.error(ui.tr("live.err_no_room", code=code), icon=":material/error:")
        return
    except (SQLAlchemyError, OSError) as error:
        st.warning(explain(error, student=True), icon=":material/cloud_off:")
        return
    st.session_state["_live_seen"] = code
    if room.view and room.view.get("page") != "classroom":
        open_view(code, room.view)                 # follow-me: the page the teacher projects
        return
    st.markdown(f"#### {ui.tr('live.title', code=code)}")
    seat = seat_of(code)
    if seat is None and "_live_kept" in st.session_state and take_seat(code):
        st.rerun(scope="app")                     # a seat at last (the mint's rate, or the room unlocked)
    if room.question is None or seat is None:
        show_message()
        st.info(ui.tr("live.waiting" if seat else "live.joining"), icon=":material/hourglass_top:")
        return
    try:
        mine = my_choice(code, seat, room.round)
    except (SQLAlchemyError, OSError) as error:
        st.warning(explain(error, student=True), icon=":material/cloud_off:")
        return
    options(code, room, mine)


def options(code: str, room, mine: int | None) -> None:
    """The question, its options as buttons and, after the reveal, the verdict and the explanation."""
    ex, language = QUESTIONS[room.question], ui.lang()
    st.markdown(f"**{ui.tr(f'classroom.q_{ex.id}', **ex.fields())}**")
    if room.revealed:                              # the buttons are disabled now: the right one stays green
        st.html(f"<style>{revealed_css(room.round, ex.answer, mine)}</style>")
    for i, words in enumerate(option_words(ex, language)):
        marks = [ui.tr("live.right_mark")] * (room.revealed and i == ex.answer) + [ui.tr("live.mine_mark")] * (
            room.revealed and i == mine)
        label = f"{'✓ ' * (room.revealed and i == ex.answer)}{LETTERS[i]}  ·  {words}"
        marked = ui.tr("live.marks", marks=ui.tr("live.marks_sep").join(marks)) if marks else ""
        st.button(label + marked, key=f"live_opt_{room.round}_{i}", width="stretch",
                  type="primary" if mine == i else "secondary", disabled=room.revealed,
                  on_click=_vote, args=(code, room.round, i))
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


def revealed_css(round_: int, answer: int, mine: int | None) -> str:
    """After the reveal: the right option's disabled button in full green, a wrong answer of this phone
    outlined in red; the others stay grey."""
    right = f".st-key-live_opt_{round_}_{answer} button"
    css = (f"{right}{{background:#15803d !important;border-color:#15803d !important;opacity:1 !important}}"
           f"{right} p{{color:#fff !important;font-weight:700}}")
    if mine is not None and mine != answer:
        css += f".st-key-live_opt_{round_}_{mine} button{{border:3px solid #b91c1c !important;opacity:1 !important}}"
    return css
