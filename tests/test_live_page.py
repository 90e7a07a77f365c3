"""The classroom page's live class in AppTest: the teacher's buttons drive the store, the projector shows
what the store holds, and a bad code or an unreachable store is a clear message in both languages."""
import re
import secrets

import pytest

from gdn.i18n import t
from gdn.live.store import NoRoom, Store
from app_pages import _live
from tests.apptest import open_app


@pytest.fixture
def class_db(tmp_path, monkeypatch):
    monkeypatch.setenv("GDN_CLASS_DB", str(tmp_path / "class.db"))
    _live.store.clear()                       # the app keeps one store per process
    yield str(tmp_path / "class.db")
    _live.store.clear()


def projector_html(at) -> str:
    """The page's HTML elements and markdown (the count of answers sits in the question's markdown)."""
    return " ".join([h.proto.body for h in at.get("html")] + [m.value for m in at.markdown])


def test_the_teachers_buttons_drive_the_store(class_db):
    at = open_app("en", page="app_pages/classroom.py")
    at.button(key="live_start").click().run()
    assert not at.exception
    code = re.search(r'data-code="(\w+)"', projector_html(at)).group(1)
    store = Store(class_db)
    assert store.room(code).question is None
    at.button(key="live_next").click().run()                  # no question yet: the first one
    room = store.room(code)
    assert (room.question, room.round) == ("alpha_zero", 1)
    for choice in (2, 2, 0):
        store.vote(code, secrets.token_hex(8), 1, choice)
    at.run()
    html = projector_html(at)
    assert re.findall(r'data-count="(\d+)"', html) == ["1", "0", "2", "0"] and 'data-n="3"' in html
    count = [m for m in at.markdown if "gdn-live-count" in m.value]
    assert len(count) == 1 and count[0].proto.allow_html                 # drawn as HTML, not shown as its source
    at.button(key="live_reveal").click().run()
    assert store.room(code).revealed and 'class="opt right" data-option="2"' in projector_html(at)
    at.button(key="live_close").click().run()
    with pytest.raises(NoRoom):
        store.room(code)
    assert at.button(key="live_start")                       # the start button is back


def test_next_on_a_screen_left_behind_does_not_skip_a_question(class_db):
    """The teacher's screen shows round 1; the room moves on elsewhere (a second screen, or the same click
    reaching the store twice). "next" pressed on this screen then starts no further round."""
    at = open_app("en", page="app_pages/classroom.py")
    at.button(key="live_start").click().run()
    code = re.search(r'data-code="(\w+)"', projector_html(at)).group(1)
    secret = at.session_state["_live_room"]["secret"]
    at.button(key="live_next").click().run()
    store = Store(class_db)
    assert store.room(code).round == 1
    store.ask(code, secret, "beta_zero", 3, after_round=1)                    # another screen was faster
    at.button(key="live_next").click().run()                                 # rendered while round 1 was live
    assert not at.exception
    assert (store.room(code).round, store.room(code).question) == (2, "beta_zero")
    at.button(key="live_next").click().run()                                 # now shown round 2: it moves on
    assert store.room(code).round == 3


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_bad_code_and_an_unreachable_store_are_explained(lang, monkeypatch):
    _live.store.clear()
    monkeypatch.setenv("GDN_CLASS_DB", "postgresql://nobody@127.0.0.1:1/none")   # nothing listens on port 1
    at = open_app(lang, page="app_pages/classroom.py", join="0O1I")
    assert not at.exception and at.error[0].value == t("live.err_no_room", lang, code="0O1I")
    at = open_app(lang, page="app_pages/classroom.py", join="ABC234")
    assert not at.exception
    assert at.warning[0].value == t("live.err_store", lang, what="OperationalError")
    at = open_app(lang, page="app_pages/classroom.py")
    at.button(key="live_start").click().run()
    assert not at.exception and at.warning[0].value == t("live.err_store", lang, what="OperationalError")
    _live.store.clear()


def test_a_polled_room_is_read_once_per_ttl_and_the_memory_is_bounded(monkeypatch):
    """room_now: phones polling one room within ROOM_TTL_S share one store read; the rooms remembered are
    an LRU of BOUNDS["live.rooms"] (caches.py), not a dict that grows with every code."""
    from types import SimpleNamespace

    from gdn.lru import LRU
    reads, clock = [], [100.0]
    monkeypatch.setattr(_live, "store", lambda: SimpleNamespace(
        room=lambda code: reads.append(code) or SimpleNamespace(expires_at=float("inf"), code=code)))
    monkeypatch.setattr(_live, "time", SimpleNamespace(monotonic=lambda: clock[0], time=lambda: 0.0))
    monkeypatch.setattr(_live, "_recent_rooms", LRU(2))
    first = _live.room_now("AAAA")
    assert _live.room_now("AAAA") is first and reads == ["AAAA"]          # within the TTL: no second read
    clock[0] += 2 * _live.ROOM_TTL_S
    assert _live.room_now("AAAA") is not first and reads == ["AAAA"] * 2  # past it: read again
    for code in ("BBBB", "CCCC"):
        _live.room_now(code)
    assert len(_live._recent_rooms) == 2 and "AAAA" not in _live._recent_rooms
