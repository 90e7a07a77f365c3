"""Follow me: the students' screens open the view the teacher projects (page, example, step), so a room
steps through the memory table together.

The store is the shared truth (gdn/live/store.py, Store.follow), whichever replica each browser reached:
- the teacher (follow-me switched on in the live session's controls): the view is the address, because
  the views write their positions into it (assets/common/view.js) and the linked widgets their values. A tiny
  component watches the address and reports it once it has held still for SETTLE_MS: a burst of key
  presses costs one message, a quiet teacher none. Its fragment writes the view to the room. A page switch
  is written at once, before the new page runs (announce): the room hears of it without waiting for that run.
- a student: the phone view (?join=CODE) polls the room as it polls the question and, when the teacher
  projects another page, loads it with ?follow=CODE. On that page a fragment polls the room every
  STEP_S (one shared read per replica and 0.1 s, a few ms of CPU). Another step of the same example
  goes to the browser's views directly as follow-me's position message {seq, params} (view.js's followTo:
  the player moves, with the write's animation, no page run); another
  example or page is loaded afresh with the view's query, which sets the example and the step.
A student who leaves the followed page through the navigation stops following; the join link again
starts it again. When the teacher switches follow-me off or goes back to the classroom page, the
students return to the live question.
"""
from __future__ import annotations

import hashlib
import json
from urllib.parse import parse_qsl, urlencode, urlsplit

import streamlit as st
from sqlalchemy.exc import SQLAlchemyError

from gdn.live.store import LiveError, NoRoom, normalize_code
from app_pages import _live
from app_pages._support import path, ui
from app_pages._support.chrome import chrome_params, put_param
from app_pages._support.pack import component_js
from app_pages._support.player import PLAYER_PARAMS

SETTLE_MS = 120             # the teacher's address must hold still this long before it is reported
STEP_S = 0.3                # a followed page polls the room this often: a step shows within about 1 s (~13 ms of CPU a second per student)
OWN = ("lang", "mode", "join", "follow")     # the teacher's own settings, never imposed on a student
CLASSROOM = "classroom"

_lead = st.components.v2.component("gdn_follow_lead", js=component_js("follow/lead.js"))
_follow = st.components.v2.component("gdn_follow", js=component_js("follow/follow.js"))


def view_of(address: str) -> dict:
    """"memory_table?memory_t=3" -> {"page": "memory_table", "params": {"memory_t": "3"}}; a page that is
    no stop of the path (the default page's "start-default") is its stop or "start"."""
    parts = urlsplit(address)
    stop = path.stop_of(parts.path.strip("/").removesuffix("-default"))
    return {"page": stop.url_path if stop else "start",
            "params": {k: v for k, v in parse_qsl(parts.query) if k not in OWN}}


def steps_only(old: dict | None, new: dict) -> bool:
    """True when `new` is `old` at another step: same page, same params but the players' positions."""
    if old is None or old["page"] != new["page"]:
        return False
    rest = lambda view: {k: v for k, v in view["params"].items() if k not in PLAYER_PARAMS}
    return rest(old) == rest(new)


# --- the teacher ----------------------------------------------------------------------------------
def _report(code: str, secret: str) -> None:
    address = (st.session_state.get("live_follow_lead") or {}).get("view")
    if not isinstance(address, str) or len(address) > 4000:
        return
    view = view_of(address)
    st.session_state["_follow_page"] = view["page"]
    keep_address(view["params"])
    _live.attempt(_live.store().follow, code, secret, view)


def announce(url_path: str) -> None:
    """Before the page runs (app.py): a teacher who follows-me and has just switched pages tells the room
    at once, with the address as it stands (the page's own example and step come with the settled report
    after the run). Waiting for that report cost the new page's whole run, the settle and a round trip of
    the component before a phone heard of the switch (1.4-3 s on an idle server, far more under load)."""
    room = st.session_state.get("_live_room")
    if not (room and st.session_state.get("_live_follow_on")):
        return
    stop = path.stop_of(url_path.removesuffix("-default"))
    page = stop.url_path if stop else "start"
    if st.session_state.get("_follow_page") in (None, page):
        st.session_state["_follow_page"] = page       # the first page after switching on: the report says it
        return
    st.session_state["_follow_page"] = page
    view = {"page": page, "params": {k: v for k, v in st.query_params.items() if k not in OWN}}
    _live.attempt(_live.store().follow, room["code"], room["secret"], view)


def keep_address(params: dict) -> None:
    """The server's copy of the address follows the players' positions in it: Streamlit writes its copy
    back into the address after every run, fragments included, so a copy without the step the browser
    stepped to would move the address back to step 1 (and the next report with it)."""
    for name in PLAYER_PARAMS:
        if name in params:
            put_param(name, params[name])
        else:
            st.query_params.pop(name, None)


@st.fragment
def _leader(code: str, secret: str, page: str) -> None:
    _lead(key="live_follow_lead", data={"own": list(OWN), "settleMs": SETTLE_MS, "page": page,
                                        "resend": st.session_state.pop("_live_follow_resend", False)},
          on_view_change=lambda: _report(code, secret), width="content", height=0)


# --- a student ------------------------------------------------------------------------------------
def open_view(code: str, view: dict) -> None:
    """Open the teacher's view on this student's screen, still following: a fresh load of its address in
    this language (the view's query sets the example and the players' positions). Not a page switch from
    this polling fragment: under load the poll's next tick, sent from the old page, was merged with the
    switch by the server and undid it, again and again."""
    stop = path.stop_of(view["page"])
    if stop is None or stop.key == CLASSROOM:
        stop, params = path.stop_of(CLASSROOM), {"join": code}
    else:
        params = {**{k: str(v) for k, v in view["params"].items()}, "follow": code}
    address = f"./{stop.address}?{urlencode({**chrome_params(), **params})}"
    _follow(key="live_follow_open", data={"navigate": address}, width="content", height=0)


def shown_here(here: str) -> dict:
    """The view this page shows: the one it last followed, else its own address (a page just opened)."""
    return st.session_state.get("_follow_view") or {
        "page": here, "params": {k: v for k, v in st.query_params.items() if k not in OWN}}


@st.fragment(run_every=STEP_S)
def _follower(code: str, here: str) -> None:
    try:
        view = _live.room_now(code).view
    except NoRoom:
        st.caption(ui.tr("live.ended"))
        return
    except (SQLAlchemyError, OSError) as error:
        st.caption(_live.explain(error))
        return
    shown = shown_here(here)
    if view is None or view.get("page") == CLASSROOM or not steps_only(shown if shown["page"] == here else None,
                                                                       view):
        open_view(code, view or {"page": CLASSROOM})
        return
    st.session_state["_follow_view"] = view
    keep_address(view["params"])                   # the step the player is sent to, in this address too
    seq = hashlib.sha1(json.dumps(view, sort_keys=True).encode()).hexdigest()[:12]
    _follow(key="live_follow_step", data={"seq": seq, "params": view["params"]}, width="content", height=0)
    st.caption(ui.tr("live.following", code=code))


def lead_or_follow(url_path: str) -> None:
    """After every page (app.py): the teacher's reporter when follow-me is on; a student's poll on a
    page opened with ?follow=CODE."""
    room = st.session_state.get("_live_room")
    if room and st.session_state.get("_live_follow_on"):
        with st.sidebar:
            _leader(room["code"], room["secret"], url_path)
        return
    raw = st.query_params.get("follow")
    if raw and not st.query_params.get("join"):
        stop = path.stop_of(url_path.removesuffix("-default"))        # "/" is the start page's "start-default"
        try:
            _follower(normalize_code(raw), stop.url_path if stop else url_path)
        except LiveError:
            st.query_params.pop("follow", None)
