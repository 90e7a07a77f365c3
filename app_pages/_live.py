"""The classroom page's live class: the teacher's room (code, QR code, the live question, the answers as
bars, reveal / next / reset / close, follow-me; under Room the lock, phones per network, the seats grouped
by network with a drop per group, the empty seats freed and all seats reset; a hint to lock the room once
the class seems in) and what the student's phone (_live_phone.py) shares with it.

Every replica reads and writes one store (gdn/live/store.py); nothing here is kept per process except
the store's connection pool. Both sides poll it in a fragment (the projector every REFRESH_S, a phone
every FOLLOW_S), so a vote reaches the projector and a teacher's move reaches the phones within 2 s
without anyone touching anything. The teacher's secret stays in the teacher's session and in that
browser's localStorage (so a reload or a reconnect to another replica keeps the room), never in the
address the projector shows.

The join link and its QR code point at the address phones reach (share.public_base: GDN_PUBLIC_URL, else
browser.serverAddress when set), and carry no language: each phone reads its own. On a loopback address
the room says that phones cannot open it and how to serve the class on the network; on a GDN_PUBLIC_URL
that is no usable address (share.url_problem), what is wrong and what to set, and the room goes on. A presenter's
clicker runs the room (assets/live/clicker.js): PageDown / → next (after a reveal, if the teacher chose
so), PageUp / ← back, B blanks the projector; the keys never scroll it.
"""
from __future__ import annotations

import logging
import re
import time

import streamlit as st
from sqlalchemy.exc import SQLAlchemyError
from streamlit.errors import StreamlitAPIException

from gdn.figures.live import tally_html
from gdn.i18n import t
from gdn.lessons.classroom import EXERCISES
from gdn.live.store import ADDRESS_SEATS, MAX_STUDENTS, LiveError, NoRoom, Room, Seating, Store
from gdn.lru import LRU
from app_pages._support import ui
from app_pages._support.caches import BOUNDS
from app_pages._support.client import client_address
from app_pages._support.escape import plain
from app_pages._support.pack import component_js
from app_pages._support.share import public_base, qr_png, share_url, visible_cut
from app_pages._support.share_panel import bad_public_url

REFRESH_S = 0.5             # the projector's bars: a vote shows within a second (one read, three elements)
CLASSROOM_PAGE = "classroom"  # follow-me's view of this page: the phones show the live question
FOLLOW_S = 1.0             # a phone: follows the teacher within 2 s (a poll is ~5 ms of replica CPU)
ROOM_TTL_S = 0.1            # the phones of one replica polling one room share one store read this long
SEATS_REFRESH_S = 2.0       # the teacher's seats by network: a burst shows within seconds (one grouped read)
SHOWN_GROUPS = 6            # networks listed one by one, the largest first (a burst is among them)
LOCK_HINT_SEATS = 5         # the lock hint: once this many phones joined ...
LOCK_HINT_QUIET_S = 60.0    # ... and none for this long (the class is in; a late burst is someone else's)
LOCK_HINT_CHECK_S = 5.0     # how often the join column asks whether to show it
LOG = logging.getLogger(__name__)
SHOWN_CODE_CHARS = 12       # of a code that names no room, a message echoes at most this much
QUESTIONS = {ex.id: ex for ex in EXERCISES}
STUDENT_CSS = f"<style>\n{(ui.ASSETS / 'live' / 'student.css').read_text(encoding='utf-8')}</style>"

# A random id per browser, kept in its localStorage, and the teacher's room (code + secret) for a reload.
# crypto.getRandomValues, not randomUUID: the latter needs https, and a class server is often plain http.
IDENTITY_JS = (ui.ASSETS / "live" / "identity.js").read_text(encoding="utf-8")
_identity = st.components.v2.component("gdn_live_identity", js=IDENTITY_JS)
CLICKER_JS = component_js("live/clicker.js")     # with assets/common/keys.js: the tab's one key listener
_clicker = st.components.v2.component("gdn_live_clicker", js=CLICKER_JS)
TOKEN = re.compile(r"[A-Za-z0-9_-]{8,64}")


@st.cache_resource(show_spinner=False)
def store() -> Store:
    """One store (and connection pool) per replica process, at GDN_CLASS_DB."""
    return Store.from_env()


_recent_rooms = LRU(BOUNDS["live.rooms"])     # code -> (monotonic time read, Room); thread-safe, bounded


def room_now(code: str) -> Room:
    """The room as the store had it at most ROOM_TTL_S ago: 50 phones on a replica polling every second
    cost one read per ROOM_TTL_S, not 50 a second. A closed or unknown room is never remembered."""
    now = time.monotonic()
    seen = _recent_rooms.get(code)
    if seen is not None and now - seen[0] < ROOM_TTL_S and seen[1].expires_at > time.time():
        return seen[1]
    room = store().room(code)
    _recent_rooms.put(code, (now, room))          # rooms come and go: the least recently polled goes first
    return room


def explain(error: Exception, student: bool = False) -> str:
    """A refused or failed request, in the student's or teacher's language. An unreachable store is the
    operator's to fix: the teacher reads what to check, a student only that the class will be back."""
    if isinstance(error, LiveError):
        fields = {"code": plain(visible_cut(str(error), SHOWN_CODE_CHARS)), "n": MAX_STUDENTS, **error.details}
        return ui.tr(f"live.err_{error.reason}", **fields)
    return ui.tr("live.err_store_student") if student else ui.tr("live.err_store", what=type(error).__name__)


def attempt(action, *args, student: bool = False, **kwargs) -> bool:
    """Run a store action; a refusal or an unreachable store becomes a message under the buttons."""
    try:
        action(*args, **kwargs)
        return True
    except (LiveError, SQLAlchemyError, OSError, ValueError) as error:
        if not isinstance(error, LiveError):
            LOG.warning("live class: %s failed: %s", getattr(action, "__name__", action), error)
        st.session_state["_live_message"] = explain(error, student)
        return False


def show_message() -> None:
    if message := st.session_state.pop("_live_message", None):
        st.warning(message, icon=":material/info:")


def identity() -> dict:
    """Mount the localStorage component; returns {"seats": {code: seat} or None before the browser has
    reported, "host": {"code", "secret"} or None}. What the browser reports is checked here too: a value
    edited by hand (a number for the secret) is dropped, never used."""
    data = {"host": st.session_state.pop("_live_save_host")} if "_live_save_host" in st.session_state else {}
    if "_live_save_seat" in st.session_state:
        data["seat"] = st.session_state.pop("_live_save_seat")
    result = _identity(key="live_identity", data=data, on_seats_change=lambda: None, on_host_change=lambda: None)
    seats, host = result.get("seats"), result.get("host")
    seats = {c: s for c, s in seats.items() if isinstance(s, str) and TOKEN.fullmatch(s)} if isinstance(
        seats, dict) else None
    ok_host = isinstance(host, dict) and all(isinstance(host.get(k), str) for k in ("code", "secret"))
    return {"seats": seats, "host": {"code": host["code"], "secret": host["secret"]} if ok_host else None}


# A widget's label or option and the tally's HTML show plain text: no KaTeX there, so $math$ is written out.
TEX_WORDS = {r"\neq": "≠", r"\times": "×", r"\approx": "≈", r"\cdot": "·", r"\top": "ᵀ", r"\le": "≤",
             r"\ge": "≥", r"\alpha": "α", r"\beta": "β"}
SUBSCRIPT = dict(zip("aehijklmnoprstuvx0123456789", "ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ₀₁₂₃₄₅₆₇₈₉"))


def plain_math(text: str) -> str:
    """Text with its $math$ as a plain-text reader sees it: "$d_k \\neq d_v$" -> "dₖ ≠ dᵥ"."""
    def one(match: re.Match) -> str:
        math = match.group(1)
        for tex, char in sorted(TEX_WORDS.items(), key=lambda kv: -len(kv[0])):
            math = math.replace(tex, char)
        math = math.replace("^ᵀ", "ᵀ")
        math = re.sub(r"_\{?(\w+)\}?", lambda m: "".join(SUBSCRIPT[c] for c in m.group(1))
                      if all(c in SUBSCRIPT for c in m.group(1)) else "_" + m.group(1), math)
        return re.sub(r"[{}\\]", "", math)
    return re.sub(r"\$([^$]+)\$", one, text)


def question_words(ex, language: str) -> str:
    """A question as a widget shows it (the picker's option): plain text."""
    return plain_math(t(f"classroom.q_{ex.id}", language, **ex.fields()))


def option_words(ex, language: str) -> list[str]:
    """A question's options as the phone's buttons and the tally show them: plain text."""
    fields = ex.fields()
    return [plain_math(t(f"classroom.o_{ex.id}_{i}", language, **fields)) for i in range(ex.n_options)]


# --- the teacher --------------------------------------------------------------------------------------
def _start() -> None:
    try:
        code, secret = store().create_room(client_address())
    except LiveError as error:                                    # this client opened its rooms for the hour
        st.session_state["_live_message"] = explain(error)
        return
    except (SQLAlchemyError, OSError, ValueError) as error:
        LOG.warning("live class: the store cannot open a room: %s", error)
        st.session_state["_live_message"] = explain(error)
        return
    st.session_state["_live_room"] = st.session_state["_live_save_host"] = {"code": code, "secret": secret}


def teacher_panel(open_demo) -> None:
    """Above the exercises: the start button, or the running room with its projector board."""
    saved = identity()["host"]
    room = st.session_state.get("_live_room")
    if room is None and saved is not None:                                   # a reload: the room goes on
        try:
            if store().is_teacher(saved["code"], saved.get("secret", "")):
                store().room(saved["code"])
                room = st.session_state["_live_room"] = {"code": saved["code"], "secret": saved["secret"]}
        except (LiveError, SQLAlchemyError, OSError):
            pass
    if room is None:
        st.button(ui.tr("live.start"), icon=":material/podcasts:", key="live_start", on_click=_start,
                  help=ui.tr("live.start_help"))
        show_message()
        return
    st.html(STUDENT_CSS)
    with st.container(border=True, key="live_teacher"):
        join, board = st.columns([1, 3], gap="medium")
        with join:
            join_card(room["code"], room["secret"])
        with board:
            controls(room["code"], room["secret"])
            bars(room["code"], open_demo)


def join_link(code: str) -> str:
    """The link phones open: on the public address, with no language (a phone reads its own)."""
    return share_url(public_base(st.context.url).url, "classroom", {"join": code})


def reachability() -> bool:
    """In place of the QR code when phones cannot open the join link (it names this computer): the
    warning, and how to serve the class on the network. Also says when GDN_PUBLIC_URL is no address.
    True when the link is unreachable."""
    base = public_base(st.context.url)
    if base.bad:
        st.error(bad_public_url(base), icon=":material/link_off:")
    if base.loopback:
        st.warning(ui.tr("live.loopback", host=plain(base.host)), icon=":material/wifi_off:")
        with st.popover(ui.tr("live.loopback_fix"), icon=":material/help:", width="stretch"):
            st.markdown(ui.tr("live.loopback_how"))
    return base.loopback


def join_card(code: str, secret: str) -> None:
    link = join_link(code)
    st.markdown(f"**{ui.tr('live.join_title')}**")
    st.html(f'<div class="gdn-live-code" data-code="{code}">{code}</div>')
    if "live_follow" not in st.session_state:      # the store says whether follow-me is on (a reload, a page switch)
        try:
            st.session_state["live_follow"] = st.session_state["_live_follow_on"] = store().room(code).view is not None
        except (LiveError, SQLAlchemyError, OSError):
            pass
    # Outside the controls' fragment: switching it is a full run, which starts (or stops) the report.
    st.toggle(ui.tr("live.follow"), key="live_follow", help=ui.tr("live.follow_help"), on_change=_follow_switched,
              args=(code, secret))
    room_settings(code, secret)
    lock_hint(code, secret)
    png = None if reachability() else qr_png(link, scale=5)   # a code no phone can open is no use
    if png is not None:                            # (nor one too long to read: qr_png gives none)
        st.image(png, width=200)
    st.markdown(ui.tr("live.join_hint" if png is not None else "live.join_hint_link"))   # no code shown: no "scan"
    st.code(link, language=None, wrap_lines=True)


def _ask(code: str, secret: str, key: str, shown_round: int) -> None:
    index = st.session_state.get(key)
    if index is not None:
        _act(store().ask, code, secret, EXERCISES[index].id, EXERCISES[index].n_options, after_round=shown_round)


def _close(code: str, secret: str) -> None:
    """Close: the room ends for everyone; this run (a full one: the button asks for it) draws the start
    button. Not a fragment rerun: the room's fragments are gone from the page it draws."""
    if attempt(store().close, code, secret):
        _forget_room()
    st.rerun(scope="app")


def _act(action, *args, **kwargs) -> None:
    """A teacher's button: the store action, then the controls and the bars redrawn at once (not at the
    bars' next tick). A new round names the round it follows (after_round): a click that reaches the
    store twice (a double click on a slow projector, or a callback run again after its run was cut
    short) starts one round, not two."""
    attempt(action, *args, **kwargs)
    redraw_room()


def redraw_room() -> None:
    """From a callback of the room's widgets: rerun the controls and the bars only. A callback that runs
    in a full run of a page without them (the room closed meanwhile, a late click) reruns the page."""
    try:
        st.rerun(scope=["live_controls", "live_bars", "live_seats"])
    except StreamlitAPIException:                 # no such fragment in this page's last run
        pass


def _step(code: str, secret: str, room: Room, direction: int) -> None:
    """Next (+1) or back (-1) from the round the room shows. Back shows the round asked before it as it
    was (its answers, its reveal), and next the one after it; next from the latest round asks the next
    question (revealing first when the teacher asked the clicker to, live_reveal_first, and the answer is
    still hidden). Asking a shown question again is the picker's own button, never a key."""
    ids = [ex.id for ex in EXERCISES]
    if direction > 0 and room.question and not room.revealed and st.session_state.get("live_reveal_first"):
        _act(store().reveal, code, secret)
        return
    shown = []

    def revisit() -> None:
        shown.append(store().revisit(code, secret, direction, after_round=room.round))

    if not attempt(revisit) or shown[0] is not None or direction < 0:
        redraw_room()                      # moved; or nothing asked before it; or the store's message says why
        return
    at = ids.index(room.question) + 1 if room.question in ids else 0
    target = EXERCISES[at % len(ids)]
    _act(store().ask, code, secret, target.id, target.n_options, after_round=room.round)


def _clicked(code: str, secret: str, room: Room) -> None:
    """The clicker's key (assets/live/clicker.js): {"go": "next" or "back", "round": the round the room
    showed when it was pressed}. A key pressed on an older round (a message delivered twice, a press
    while the room redrew) moves nothing: the store's after_round refuses it. Blanking never reaches Python."""
    key = getattr(st.session_state.get("live_clicker"), "key", None)
    if not isinstance(key, dict) or key.get("go") not in ("next", "back") or key.get("round") != room.round:
        return
    _step(code, secret, room, 1 if key["go"] == "next" else -1)


@st.fragment(key="live_controls")
def controls(code: str, secret: str) -> None:
    """The teacher's picker and buttons. Redrawn when the teacher uses them, not on a timer: they change
    only when the teacher acts, and the bars (below) are what the room's votes move."""
    try:
        room = store().room(code)
    except NoRoom:                                # closed (here or on another screen) or expired
        _forget_room()
        st.rerun(scope="app")
    except (SQLAlchemyError, OSError) as error:
        st.warning(explain(error), icon=":material/cloud_off:")
        return
    language = ui.lang()
    ids = [ex.id for ex in EXERCISES]
    pick_key = f"live_pick_{room.round}"          # a new round draws a new picker showing the live question
    st.selectbox(ui.tr("live.pick"), range(len(ids)), index=ids.index(room.question) if room.question else None,
                 format_func=lambda i: f"{i + 1}. " + question_words(EXERCISES[i], language),
                 placeholder=ui.tr("live.pick_placeholder"), key=pick_key, on_change=_ask,
                 args=(code, secret, pick_key, room.round))
    # The teacher's buttons under the picker: on a 1280x720 projector they stay above the fold.
    reveal, ahead, again, close = st.columns(4)
    reveal.button(ui.tr("live.reveal"), icon=":material/visibility:", type="primary", width="stretch",
                  key="live_reveal", disabled=room.question is None or room.revealed,
                  on_click=_act, args=(store().reveal, code, secret))
    ahead.button(ui.tr("live.next"), icon=":material/skip_next:", width="stretch", key="live_next",
                 on_click=_step, args=(code, secret, room, 1))
    again.button(ui.tr("live.reset"), icon=":material/restart_alt:", width="stretch", key="live_reset",
                 disabled=room.question is None, on_click=_act, args=(store().reset, code, secret),
                 kwargs={"after_round": room.round})
    close.button(ui.tr("live.close"), icon=":material/stop_circle:", width="stretch", key="live_close",
                 on_click=_close, args=(code, secret))
    _clicker(key="live_clicker", data={"round": room.round}, on_key_change=lambda: _clicked(code, secret, room),
             width="content", height=0)
    show_message()


def room_settings(code: str, secret: str) -> None:
    """Who may join (the lock, phones per network, the seats by network with their drop buttons, the empty
    seats freed, all seats reset) and what the clicker does, in a popover."""
    with st.popover(ui.tr("live.room"), icon=":material/tune:", width="stretch", help=ui.tr("live.room_help")):
        if "live_lock" not in st.session_state or "_live_address_seats" not in st.session_state:
            try:                                         # the store says (a reload, another screen)
                room = store().room(code)
                st.session_state["live_lock"] = room.locked
                st.session_state["_live_address_seats"] = room.address_seats
            except (LiveError, SQLAlchemyError, OSError):
                pass
        st.toggle(ui.tr("live.lock"), key="live_lock", help=ui.tr("live.lock_help"),
                  on_change=lambda: attempt(store().lock, code, secret, bool(st.session_state.get("live_lock"))))
        # The store's number as the widget's value, not seeded into its state: the popover's widgets mount
        # when it opens, and a number input seeded that way reported its minimum then (the cap fell to 1).
        st.number_input(ui.tr("live.address_seats"), min_value=1, max_value=MAX_STUDENTS, step=1,
                        value=st.session_state.get("_live_address_seats", ADDRESS_SEATS), key="live_address_seats",
                        help=ui.tr("live.address_seats_help"), on_change=_address_seats_set, args=(code, secret))
        seat_groups(code, secret)
        drop, reset = st.columns(2)
        drop.button(ui.tr("live.drop"), icon=":material/event_seat:", key="live_drop", help=ui.tr("live.drop_help"),
                    on_click=_drop, args=(code, secret), width="stretch")
        reset.button(ui.tr("live.reset_seats"), icon=":material/group_remove:", key="live_reset_seats",
                     help=ui.tr("live.reset_seats_help"), on_click=_reset_seats, args=(code, secret), width="stretch")
        st.toggle(ui.tr("live.reveal_first"), key="live_reveal_first", help=ui.tr("live.reveal_first_help"))
        st.markdown(ui.tr("live.clicker"))          # not a caption: lecture mode hides those


@st.fragment(run_every=SEATS_REFRESH_S, key="live_seats")
def seat_groups(code: str, secret: str) -> None:
    """The seats by the network address that took them, counts only (the store keeps no address): the
    largest groups one by one, each with its drop button, then the phones alone on their network."""
    try:
        seating = store().seating(code, secret)
    except (LiveError, SQLAlchemyError, OSError):
        return                                      # the bars say what is wrong with the room or the store
    st.markdown(f"**{ui.tr('live.by_network')}**")
    for line in seating_lines(seating):
        if isinstance(line, str):
            st.markdown(line)
            continue
        words, drop = st.columns([3, 2], vertical_alignment="center")
        words.markdown(ui.tr("live.group", seats=line.seats, answered=line.answered))
        # Keyed by the group (its keyed hash, which names no address): a click between two redraws
        # drops the group the teacher saw, not whichever is now in that row.
        drop.button(ui.tr("live.drop_group", seats=line.seats), key=f"live_drop_{line.key[:16]}",
                    icon=":material/person_remove:", help=ui.tr("live.drop_group_help"), width="stretch",
                    on_click=_drop_group, args=(code, secret, line.key))


def seating_lines(seating: Seating) -> list:
    """What the seats panel lists: the groups of two or more phones (SeatGroup, the largest SHOWN_GROUPS),
    then as sentences the networks left out, the phones alone on theirs and the networks barred."""
    shared = [g for g in seating.groups if g.seats > 1]
    alone = len(seating.groups) - len(shared)
    lines: list = shared[:SHOWN_GROUPS]
    if not seating.groups:
        lines.append(ui.tr("live.no_seats"))
    if len(shared) > SHOWN_GROUPS:
        rest = shared[SHOWN_GROUPS:]
        lines.append(ui.tr("live.more_groups", n=len(rest), seats=sum(g.seats for g in rest)))
    if alone:
        lines.append(ui.tr("live.alone_one" if alone == 1 else "live.alone", n=alone))
    if seating.barred:
        lines.append(ui.tr("live.barred_note", n=seating.barred))
    return lines


def _address_seats_set(code: str, secret: str) -> None:
    limit = int(st.session_state.get("live_address_seats") or 1)
    if attempt(store().set_address_seats, code, secret, limit):
        st.session_state["_live_address_seats"] = limit


def _drop(code: str, secret: str) -> None:
    dropped = []
    if attempt(lambda: dropped.append(store().drop_empty(code, secret))):
        st.session_state["_live_message"] = ui.tr("live.dropped", n=dropped[0])


def _drop_group(code: str, secret: str, group: str) -> None:
    """One network's seats and their answers gone, that network barred; the bars and the panel redrawn."""
    dropped = []
    if attempt(lambda: dropped.append(store().drop_group(code, secret, group))):
        st.session_state["_live_message"] = ui.tr("live.group_dropped", n=dropped[0])
    redraw_room()


def _reset_seats(code: str, secret: str) -> None:
    """Every seat and answer gone, the bars lifted, the question asked again from zero."""
    freed = []
    if attempt(lambda: freed.append(store().reset_seats(code, secret))):
        st.session_state["_live_message"] = ui.tr("live.seats_reset", n=freed[0])
    redraw_room()


def _lock_now(code: str, secret: str) -> None:
    """The lock hint's button: the room locked, and the Room popover's switch shown on."""
    if attempt(store().lock, code, secret):
        st.session_state["live_lock"] = True


def _follow_switched(code: str, secret: str) -> None:
    """Follow-me on: the students open the view this browser shows (app_pages/_follow.py reports it from
    every page); off: they return to the live question."""
    on = bool(st.session_state.get("live_follow"))
    st.session_state["_live_follow_on"] = st.session_state["_live_follow_resend"] = on
    st.session_state["_follow_page"] = CLASSROOM_PAGE if on else None       # what the room was told (_follow.announce)
    attempt(store().follow, code, secret, {"page": CLASSROOM_PAGE, "params": {}} if on else None)


def _forget_room() -> None:
    st.session_state.pop("_live_room", None)
    st.session_state.pop("live_lock", None)
    st.session_state.pop("_live_address_seats", None)
    st.session_state["_live_save_host"] = None


@st.fragment(run_every=REFRESH_S, key="live_bars")
def bars(code: str, open_demo) -> None:
    """The live question and its answers as bars, redrawn every REFRESH_S: one store read and three small
    elements, so a vote shows on the projector within about a second."""
    try:
        room, counts = store().snapshot(code)
    except NoRoom:
        _forget_room()
        st.rerun(scope="app")
    except (SQLAlchemyError, OSError) as error:
        st.warning(explain(error), icon=":material/cloud_off:")
        return
    if room.question is None:
        st.info(ui.tr("live.no_question"), icon=":material/touch_app:")
        return
    ex = QUESTIONS[room.question]
    n = sum(counts)
    # The count under the question, in the same element (no gap between elements): on a 1280x720 projector,
    # under the bars it fell on the screen's bottom edge. As HTML: the question is the project's own text
    # (assets/i18n, its $math$ kept for KaTeX), never a user's.
    answers = ui.tr("live.answers_one" if n == 1 else "live.answers", n=n)
    seated = ui.tr("live.seats_one" if room.seats == 1 else "live.seats", seats=room.seats)
    seated += f" · {ui.tr('live.locked_note')}" if room.locked else ""
    st.markdown(f"**{[e.id for e in EXERCISES].index(ex.id) + 1}. {ui.tr(f'classroom.q_{ex.id}', **ex.fields())}**\n\n"
                f'<div class="gdn-live-count" data-n="{n}" data-seats="{room.seats}">{answers}'
                f'<span class="gdn-live-seats"> · {seated}</span></div>', unsafe_allow_html=True)
    st.html(tally_html(option_words(ex, ui.lang()), counts, ex.answer if room.revealed else None,
                       ui.tr("live.right_mark")))
    if room.revealed:
        st.markdown(ui.tr(f"classroom.e_{ex.id}", **ex.fields()))
        if st.button(ui.tr("classroom.show_demo"), key="live_demo", icon=":material/play_circle:"):
            open_demo(ex.demo)


def wants_lock(room: Room, now: float) -> bool:
    """The class seems in: LOCK_HINT_SEATS phones or more, none for LOCK_HINT_QUIET_S, the room open. A
    seat taken after that is more likely a script's or a neighbour's than a student's."""
    quiet = room.last_join is not None and now - room.last_join >= LOCK_HINT_QUIET_S
    return not room.locked and room.seats >= LOCK_HINT_SEATS and quiet


@st.fragment(run_every=LOCK_HINT_CHECK_S, key="live_lock_hint")
def lock_hint(code: str, secret: str) -> None:
    """Under the Room button, once the class seems in (wants_lock): a button that asks and locks. In
    the join column, not under the bars: there it fell below a 1280x720 projector's edge, and here it
    only pushes down the QR code, which the class no longer needs."""
    try:
        room = store().room(code)
    except (LiveError, SQLAlchemyError, OSError):
        return                                      # the bars say what is wrong with the room or the store
    if wants_lock(room, time.time()):                # one button, its question the hint: short on a projector
        st.button(ui.tr("live.lock_hint"), icon=":material/lock:", key="live_lock_now", on_click=_lock_now,
                  args=(code, secret), type="primary", width="stretch",
                  help=ui.tr("live.lock_hint_help", seats=room.seats))
