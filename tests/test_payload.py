"""A packed payload goes to a tab once, then by its hash (app_pages/_support/payload.py): the memory page's
player, compare's variants and the start page's explorer, read from what each run actually sent."""
import json

from app_pages._support.payload import KEEP, SENT
from tests.apptest import open_app


def sent(at, key: str) -> dict:
    """The data a component mounted under `key` was sent in the last run, as it was sent (no tab's copy)."""
    return json.loads(next(e.proto for e in at.get("bidi_component") if e.proto.id.endswith(key)).json)


def test_the_players_frames_go_once_per_session_and_again_when_the_tab_lacks_them():
    at = open_app("en", "app_pages/memory_table.py", memory_preset="k1_update")
    first = sent(at, "memory_player")
    assert len(first["gz"]) > 1000
    at.run()                                       # the next run of the same page (a scrub, a click)
    again = sent(at, "memory_player")
    assert "gz" not in again and again["hash"] == first["hash"]
    assert {k: v for k, v in again.items() if k != "hash"} == {k: v for k, v in first.items() if k not in ("gz", "hash")}
    other = open_app("en", "app_pages/memory_table.py", memory_preset="k1_update")   # another tab
    assert sent(other, "memory_player")["gz"] == first["gz"]
    at.session_state[SENT] = {}                   # what the relay's "need" does (payload.resend_all)
    at.run()
    assert sent(at, "memory_player")["gz"] == first["gz"]


def test_another_example_is_sent_in_full_and_the_first_stays_known():
    at = open_app("en", "app_pages/memory_table.py", memory_preset="k1_update")
    k1 = sent(at, "memory_player")["hash"]
    at.selectbox(key="memory_preset").set_value("write_read_2d").run()
    other = sent(at, "memory_player")
    assert other["hash"] != k1 and "gz" in other
    at.selectbox(key="memory_preset").set_value("k1_update").run()
    assert "gz" not in sent(at, "memory_player")
    assert list(at.session_state[SENT])[-1] == k1 and len(at.session_state[SENT]) <= KEEP


def test_compare_variants_and_the_start_explorer_send_hashes_after_the_first_run():
    at = open_app("en", "app_pages/compare.py")
    first = sent(at, "compare_player")
    held = [v for v in first["variants"] if "hash" in v]
    assert held and all(len(v["gz"]) > 1000 for v in held)
    at.run()
    again = sent(at, "compare_player")
    assert "gz" not in again and all("gz" not in v for v in again["variants"])
    assert [v.get("hash") for v in again["variants"]] == [v.get("hash") for v in first["variants"]]
    start = open_app("en")                         # the start page is the default page
    assert len(sent(start, "start_attention_explorer")["gz"]) > 10_000
    start.run()
    assert "gz" not in sent(start, "start_attention_explorer")
