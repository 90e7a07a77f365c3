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
        store.vote(code, store.join(code, secrets.token_hex(4)), 1, choice)
    at.run()
    html = projector_html(at)
    assert re.findall(r'data-count="(\d+)"', html) == ["1", "0", "2", "0"] and 'data-n="3"' in html
    assert 'data-seats="3"' in html and "3 phones joined" in html
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
    """A student reads that the class will be back; the teacher reads what the operator must check."""
    _live.store.clear()
    monkeypatch.setenv("GDN_CLASS_DB", "postgresql://nobody@127.0.0.1:1/none")   # nothing listens on port 1
    at = open_app(lang, page="app_pages/classroom.py", join="0O1I")
    assert not at.exception and at.error[0].value == t("live.err_no_room", lang, code="0O1I")
    at = open_app(lang, page="app_pages/classroom.py", join="ABC234")
    assert not at.exception
    assert at.warning[0].value == t("live.err_store_student", lang)
    assert "GDN_CLASS_DB" not in " ".join(w.value for w in at.warning)
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


def test_join_text_is_shown_as_typed_never_as_markdown(class_db):
    """?join= is the visitor's text: an image, a link or $math$ in it stays text (no image fetched)."""
    raw = "![x](http://127.0.0.1:1/x.png)"
    at = open_app("en", page="app_pages/classroom.py", join=raw)
    assert not at.exception
    shown = at.error[0].value
    assert "\\!\\[x\\]" in shown and "![x](" not in shown                 # every punctuation escaped


def phone(monkeypatch, lang: str = "en", told: list | None = None, **query):
    """A student's phone: the browser's localStorage component (AppTest runs no JS) reports no seat yet;
    what the page tells it to keep is appended to `told`."""
    told = [] if told is None else told
    monkeypatch.setattr(_live, "_identity", lambda **kw: told.append(kw["data"]) or {"seats": {}, "host": None})
    return open_app(lang, page="app_pages/classroom.py", **query)


def test_a_phone_takes_one_seat_votes_with_it_and_the_teacher_locks_and_frees_seats(class_db, monkeypatch):
    store = Store(class_db)
    code, secret = store.create_room()
    store.ask(code, secret, "alpha_zero", 4)
    told = []
    at = phone(monkeypatch, told=told, join=code)
    assert not at.exception and store.room(code).seats == 1
    seat = next(d["seat"]["token"] for d in told if "seat" in d)         # the new seat, sent to localStorage
    assert store.has_seat(code, seat)
    at.button(key="live_opt_1_2").click().run()
    assert store.snapshot(code)[1] == [0, 0, 1, 0] and at.success
    at.run()
    assert store.room(code).seats == 1                                 # polls and reruns take no new seat
    store.lock(code, secret)
    late = phone(monkeypatch, join=code)
    assert store.room(code).seats == 1 and t("live.err_locked", "en") in [w.value for w in late.warning]
    store.lock(code, secret, False)
    assert phone(monkeypatch, join=code) and store.room(code).seats == 2
    assert store.drop_empty(code, secret) == 1                           # the third phone never answered


def test_a_phone_reads_its_browsers_language_and_switches_it(class_db, monkeypatch):
    store = Store(class_db)
    code, secret = store.create_room()
    store.ask(code, secret, "alpha_zero", 4)
    at = phone(monkeypatch, lang="en", join=code)
    assert t("classroom.q_alpha_zero", "en")[:20] in " ".join(m.value for m in at.markdown)
    at.segmented_control(key="live_lang").set_value("zh").run()
    assert not at.exception
    assert t("classroom.q_alpha_zero", "zh")[:10] in " ".join(m.value for m in at.markdown)


def test_a_hand_edited_local_storage_never_breaks_the_page(class_db, monkeypatch):
    """A number for the teacher's secret, a list for the seats: dropped, the page draws as for a newcomer."""
    monkeypatch.setattr(_live, "_identity", lambda **kw: {"host": {"code": "ABC234", "secret": 12345},
                                                          "seats": ["x"]})
    at = open_app("en", page="app_pages/classroom.py")
    assert not at.exception and at.button(key="live_start")
    monkeypatch.setattr(_live, "_identity", lambda **kw: {"host": "ABC234", "seats": {"ABC234": 7}})
    at = open_app("en", page="app_pages/classroom.py", join="ABC234")
    assert not at.exception


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_join_link_uses_the_public_address_and_loopback_is_warned(class_db, monkeypatch, lang):
    at = open_app(lang, page="app_pages/classroom.py")
    at.button(key="live_start").click().run()
    code = re.search(r'data-code="(\w+)"', projector_html(at)).group(1)
    assert at.code[0].value == f"http://127.0.0.1:8501/classroom?join={code}"     # no language in it
    assert t("live.loopback", lang, host="127.0.0.1").replace("\\", "") in [w.value.replace("\\", "") for w in at.warning]
    assert "GDN_PUBLIC_URL=http://" in " ".join(m.value for m in at.markdown)        # and how to serve the network
    said = lambda: [m.value for m in at.markdown]
    assert t("live.join_hint_link", lang) in said() and t("live.join_hint", lang) not in said()   # no QR: no "scan"
    monkeypatch.setenv("GDN_PUBLIC_URL", "https://class.example.org/gdn/")
    at.run()
    assert at.code[0].value == f"https://class.example.org/gdn/classroom?join={code}"
    assert t("live.join_hint", lang) in said()                               # a QR code shown: "scan" it
    assert not [w for w in at.warning if "127.0.0.1" in w.value.replace("\\", "")]
    for bad in ("class.example.org", "http://[abc:8501"):                   # no scheme; no URL at all
        monkeypatch.setenv("GDN_PUBLIC_URL", bad)                                 # said, not used
        at.run()
        assert not at.exception
        assert at.code[0].value.startswith("http://127.0.0.1:8501/") and "GDN_PUBLIC_URL" in at.error[0].value


def test_a_seat_is_counted_against_the_proxy_s_peer_never_a_phone_s_own_header():
    """The mint rate's address: a phone that reaches the server itself (the room's Wi-Fi, a private
    address) or a local process straight at a replica (a loopback peer, which Streamlit reports as None)
    is counted as itself whatever X-Forwarded-For it sends; behind a proxy GDN_TRUSTED_PROXIES names
    (serve-class's nginx on loopback, a cluster's Ingress network), the last forwarded hop."""
    from app_pages._support.client import seat_address
    assert seat_address("192.168.1.23", "203.0.113.9", "") == "192.168.1.23"          # a made-up header
    assert seat_address("192.168.1.23", "1.2.3.4, 203.0.113.9", "") == "192.168.1.23"
    assert seat_address(None, "1.2.3.4, 192.168.1.40", "") is None                   # loopback, not named
    assert seat_address(None, "1.2.3.4, 192.168.1.40", "10.0.0.0/8") is None
    assert seat_address(None, "1.2.3.4, 192.168.1.40", "127.0.0.1/32,::1/128") == "192.168.1.40"   # serve-class
    assert seat_address("::1", "192.168.1.40", "127.0.0.1/32,::1/128") == "192.168.1.40"
    assert seat_address("10.2.0.7", "1.2.3.4, 192.168.1.40", "10.0.0.0/8") == "192.168.1.40"
    assert seat_address("10.2.0.7", "", "10.0.0.0/8") == "10.2.0.7"                  # no header: the peer
    assert seat_address("172.16.0.5", "192.168.1.40", "10.0.0.0/8") == "172.16.0.5"  # not a trusted proxy
    assert seat_address("10.2.0.7", "192.168.1.40", "not-a-network") == "10.2.0.7"   # bad setting: no trust
