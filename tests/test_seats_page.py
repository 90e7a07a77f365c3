"""Issue 49 on the classroom page (AppTest, the real Store on a temporary SQLite file): the teacher sees
the seats by network and drops a burst or resets every seat in one click, is nudged to lock a room the
class has filled, reads why a room cannot be opened; a phone reads why its code waits; a ?join= value or
a GDN_PUBLIC_URL from outside never turns the page's text around or takes the room down. Both languages."""
import re
import unicodedata

import pytest
import sqlalchemy as sa

from gdn.i18n import t
from gdn.live import store as live
from gdn.live.store import Store
from app_pages import _live, _live_phone
from tests.apptest import open_app

SCRIPT, STUDENT = "203.0.113.66", "198.51.100.7"


@pytest.fixture
def class_db(tmp_path, monkeypatch):
    monkeypatch.setenv("GDN_CLASS_DB", str(tmp_path / "class.db"))
    monkeypatch.delenv("GDN_PUBLIC_URL", raising=False)
    _live.store.clear()                       # the app keeps one store per process
    yield str(tmp_path / "class.db")
    _live.store.clear()


def teacher(lang: str, code: str, secret: str):
    """The teacher's projector on a running room (as after a reload: the room is in the session)."""
    return open_app(lang, page="app_pages/classroom.py", state={"_live_room": {"code": code, "secret": secret}})


def texts(at) -> list[str]:
    return [e.value for kind in ("markdown", "warning", "info", "error") for e in getattr(at, kind)]


def same_but_numbers(shown: str, expected: str) -> bool:
    return re.sub(r"\d+", "N", shown) == re.sub(r"\d+", "N", expected)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_teacher_drops_a_burst_and_resets_every_seat_in_one_click_each(class_db, lang):
    store = Store(class_db, mint=(500, 100, live.ADDRESS_SEATS))
    code, secret = store.create_room()
    store.ask(code, secret, "alpha_zero", 4)
    for i in range(60):                                                  # the cap stops it at 40
        try:
            store.vote(code, store.join(code, SCRIPT), 1, i % 4)
        except live.AddressFull:
            pass
    store.vote(code, store.join(code, STUDENT), 1, 2)
    at = teacher(lang, code, secret)
    assert not at.exception
    group = t("live.group", lang, seats=live.ADDRESS_SEATS, answered=live.ADDRESS_SEATS)
    assert group in texts(at) and t("live.alone_one", lang) in texts(at)
    assert SCRIPT not in " ".join(texts(at)) and STUDENT not in " ".join(texts(at))
    drop = next(b for b in at.button if str(b.key).startswith("live_drop_") and b.key != "live_drop_")
    drop.click().run()
    assert not at.exception and store.room(code).seats == 1 and store.snapshot(code)[1] == [0, 0, 1, 0]
    assert t("live.group_dropped", lang, n=live.ADDRESS_SEATS) in texts(at)
    assert t("live.barred_note", lang, n=1) in texts(at)
    with pytest.raises(live.Barred):
        store.join(code, SCRIPT)
    store.vote(code, store.join(code, "192.0.2.44"), 1, 0)                # a real student, right after
    at.run()                                       # (AppTest's tree after a fragments' rerun holds only them)
    at.button(key="live_reset_seats").click().run()
    assert not at.exception and t("live.seats_reset", lang, n=2) in texts(at)
    room, counts = store.snapshot(code)
    assert (room.seats, room.round, counts) == (0, 2, [0, 0, 0, 0])


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_teacher_sets_phones_per_network(class_db, lang):
    store = Store(class_db)
    code, secret = store.create_room()
    at = teacher(lang, code, secret)
    assert at.number_input(key="live_address_seats").value == live.ADDRESS_SEATS
    at.number_input(key="live_address_seats").set_value(120).run()
    assert not at.exception and store.room(code).address_seats == 120


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_quiet_full_room_nudges_the_teacher_to_lock_it(class_db, lang):
    store = Store(class_db)
    code, secret = store.create_room()
    for i in range(_live.LOCK_HINT_SEATS):
        store.join(code, f"192.0.2.{i + 1}")
    at = teacher(lang, code, secret)
    hint = lambda: [b for b in at.button if b.key == "live_lock_now"]
    assert not hint()                                                     # they joined just now
    with store.writer.begin() as conn:                                    # ... a quiet minute later
        conn.execute(live.seats.update().values(joined_at=sa.func.coalesce(live.seats.c.joined_at, 0) - 61))
    at.run()
    assert [(b.label, b.help) for b in hint()] == [(t("live.lock_hint", lang),
                                                    t("live.lock_hint_help", lang, seats=_live.LOCK_HINT_SEATS))]
    hint()[0].click().run()
    assert not at.exception and store.room(code).locked and at.session_state["live_lock"] is True
    at.run()
    assert not hint() and at.toggle(key="live_lock").value is True


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_client_past_its_rooms_reads_why_and_when(class_db, monkeypatch, lang):
    store = Store(class_db)
    for _ in range(live.ROOMS_PER_HOUR):
        store.create_room(SCRIPT)
    monkeypatch.setattr(_live, "client_address", lambda: SCRIPT)
    at = open_app(lang, page="app_pages/classroom.py")
    at.button(key="live_start").click().run()
    assert not at.exception and at.button(key="live_start")               # no room, the button again
    expected = t("live.err_rooms", lang, limit=live.ROOMS_PER_HOUR, minutes=60)
    assert any(same_but_numbers(w.value, expected) for w in at.warning)
    monkeypatch.setattr(_live, "client_address", lambda: STUDENT)         # another teacher: a room at once
    at.button(key="live_start").click().run()
    assert re.search(r'data-code="(\w+)"', " ".join(h.proto.body for h in at.get("html")))


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_phone_that_tried_too_many_codes_reads_that_it_waits(class_db, monkeypatch, lang):
    store = Store(class_db)
    code, secret = store.create_room()
    store.ask(code, secret, "alpha_zero", 4)
    wrong = next(c * 6 for c in live.CODE_ALPHABET if c * 6 != code)
    monkeypatch.setattr(_live_phone, "client_address", lambda: SCRIPT)
    monkeypatch.setattr(_live, "_identity", lambda **kw: {"seats": {}, "host": None})
    for _ in range(live.CODE_TRIES):
        at = open_app(lang, page="app_pages/classroom.py", join=wrong)
        assert at.error[0].value == t("live.err_no_room", lang, code=wrong)
    at = open_app(lang, page="app_pages/classroom.py", join=code)
    assert not at.exception and store.room(code).seats == 0               # no seat taken while it waits
    expected = t("live.err_tries", lang, limit=live.CODE_TRIES, wait=60, minutes=1)
    assert same_but_numbers(at.error[0].value, expected)
    monkeypatch.setattr(_live_phone, "client_address", lambda: STUDENT)   # a student elsewhere: in at once
    at = open_app(lang, page="app_pages/classroom.py", join=code)
    assert not at.error and store.room(code).seats == 1


INVISIBLE = "\u202e\u202d\u2066\u2067\u2068\u2069\u200b\u200e\u200f\u061c\ufeff\u0000\u001b\u0301\u2028"


@pytest.mark.parametrize("raw", ["AB\u202eC234", "\u202eABC234", "Z" * 3 + INVISIBLE * 40 + "evil.example/" * 30],
                         ids=["inside", "first", "long"])
def test_a_join_value_with_bidi_or_invisible_characters_is_echoed_as_a_short_visible_cut(class_db, raw):
    at = open_app("en", page="app_pages/classroom.py", join=raw)
    assert not at.exception
    shown = at.error[0].value
    assert not [c for c in shown if unicodedata.category(c)[0] in "CM" or c in "\u2028\u2029"]
    echoed = re.search(r"code (.*?):", shown).group(1).replace("\\", "")
    visible = "".join(c for c in raw if unicodedata.category(c)[0] not in "CM" and c not in "\u2028\u2029")
    assert len(echoed) <= _live_phone.SHOWN_CODE_CHARS + 1 and visible.startswith(echoed.rstrip("…"))


def test_a_full_width_code_from_a_chinese_keyboard_joins():
    assert live.normalize_code("ａｂｃ ２３４") == "ABC234"


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("bad,why", [("http://class.example.org/" + "x" * 2300, "long"), ("http://a b/", "space"),
                                     ("http://h:port/", "malformed"), ("ftp://class.example.org", "scheme"),
                                     ("http:///classroom", "host"), ("http://a\u202eb.example/", "space")])
def test_a_bad_public_url_is_explained_and_the_room_and_share_dialog_still_work(class_db, monkeypatch, lang, bad, why):
    monkeypatch.setenv("GDN_PUBLIC_URL", bad)
    at = open_app(lang, page="app_pages/classroom.py")
    at.button(key="live_start").click().run()
    assert not at.exception
    reason = t(f"live.url_{why}", lang, n=len(bad), most=512)
    message = next(e.value for e in at.error if "GDN_PUBLIC_URL" in e.value)
    assert reason.replace("`", "") in message.replace("\\", "").replace("`", "")
    assert "GDN_PUBLIC_URL=http://192.168.1.20:8501" in message.replace("\\", "")       # what to set
    assert len(message) < 600 and "\u202e" not in message
    code = re.search(r'data-code="(\w+)"', " ".join(h.proto.body for h in at.get("html"))).group(1)
    assert at.code[0].value == f"http://127.0.0.1:8501/classroom?join={code}"            # the local address
    page = open_app(lang, page="app_pages/memory_table.py")
    page.button(key="share_open").click().run()
    assert not page.exception
    assert any(c.value.startswith("http://127.0.0.1:8501/") for c in page.code)
    assert any(reason.replace("`", "") in e.value.replace("\\", "").replace("`", "") for e in page.error)
