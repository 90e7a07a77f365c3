"""The views' protocol, Python's side (app_pages/_support/view.py): the relay's typed batch reaches the
handler of each kind (player, explorer, swap) and nothing else does, and the handshake's seq changes only
when Python moves a view itself. The browser's side has its own unit tests (assets/common/view.test.mjs)."""
from streamlit.testing.v1 import AppTest

from app_pages._support import view


def relayed(batch) -> AppTest:
    """A script run in which the relay delivered `batch`: the player, explorer and swapper state it may set."""
    def script(batch):
        import streamlit as st

        from app_pages._support import explorer, player, swap, view  # noqa: F401  (their kinds)

        st.session_state[explorer.DOMAINS] = {"start_attention": {"start_T": [2, 3, 4], "start_seed": [0, 1]}}
        st.session_state["_swap_keys"] = {"real_model_layer": [0, 2, 5]}
        st.session_state[view.RELAY] = {"sent": batch}
        view._heard()
        st.session_state["seq_after"] = {name: view.seq(name, position) for name, position in
                                         [("player_memory", (3, "write")), ("explorer_start_attention", (2, 1)),
                                          ("pick_real_model_layer", "5")]}
    return AppTest.from_function(script, args=(batch,), default_timeout=30).run()


def test_each_kind_reaches_its_handler_and_the_browsers_position_is_no_move():
    at = relayed({"n": 1, "messages": [
        {"kind": "position", "id": "memory", "t": 3, "stage": "write"},
        {"kind": "values", "id": "start_attention", "values": {"start_T": "4", "start_seed": "1"}},
        {"kind": "pick", "id": "real_model_layer", "value": "5"},
    ]})
    assert not at.exception
    state = at.session_state
    assert (state["memory_t"], state["memory_stage"]) == (3, "write")
    assert (state["start_T"], state["start_seed"]) == (4, 1)
    assert state["real_model_layer"] == 5
    # what the browser reported is what it shows (a new session, say, after a replica changed): no move
    assert state["seq_after"] == {"player_memory": 0, "explorer_start_attention": 0, "pick_real_model_layer": 0}


def test_unknown_kinds_bad_values_and_junk_change_nothing():
    at = relayed({"n": 2, "messages": [
        {"kind": "teleport", "id": "memory", "t": 9},               # no such kind
        {"kind": "pick", "id": "real_model_layer", "value": "7"},  # not one of the options
        {"kind": "position", "id": "memory", "t": "x", "stage": "write"},
        {"kind": "position", "id": "start", "t": 3, "stage": "write"},   # no player: would write start_t
        {"kind": "values", "id": "start_attention", "values": {"start_T": "99", "rm": "1"}},
        "junk", {"id": "memory"}, {"kind": 3, "id": "memory"},
    ]})
    assert not at.exception
    assert not [k for k in ("memory_t", "start_T", "start_t", "real_model_layer", "rm") if k in at.session_state]
    assert relayed("not a batch").session_state["seq_after"]["player_memory"] == 1     # Python's own first draw


def test_messages_keeps_only_typed_messages():
    assert view.messages(None) == [] and view.messages({"messages": "x"}) == []
    ok = {"kind": "pick", "id": "real_model_layer", "value": "2"}
    assert view.messages({"n": 1, "messages": [ok, {"kind": "pick"}, {"id": "a"}, 5]}) == [ok]


def test_seq_changes_only_when_python_moves_the_view():
    def script():
        import streamlit as st

        from app_pages._support import view

        seqs = [view.seq("player_x", (1, "decay")), view.seq("player_x", (1, "decay"))]   # reruns: no move
        seqs.append(view.seq("player_x", (4, "read")))        # a link or a classroom demo moved it
        view.heard("player_x", (5, "write"))                   # the browser stepped there and said so
        seqs.append(view.seq("player_x", (5, "write")))
        st.session_state["seqs"] = seqs

    at = AppTest.from_function(script, default_timeout=30).run()
    assert at.session_state["seqs"] == [1, 1, 2, 2]


def test_a_position_set_on_purpose_is_a_move_even_when_python_last_synced_it():
    """A classroom demo sets the memory player to (3, "query") while Python's copy is already (3, "query"):
    the tab may have stepped on to token 6 and left by a page link, which reports nothing. The demo's set is
    a new seq, so the player takes it; a view whose keys the demo does not set keeps its number."""
    def script():
        import streamlit as st

        from app_pages._support import view

        first = view.seq("player_memory", (3, "query"), ("memory_t", "memory_stage"))
        other = view.seq("explorer_start", (1,), ("start_T",))
        view.set_on_purpose({"memory_t": 3, "memory_stage": "query", "unowned_key": 1})
        st.session_state["seqs"] = [first, view.seq("player_memory", (3, "query"), ("memory_t", "memory_stage")),
                                    other, view.seq("explorer_start", (1,), ("start_T",))]

    at = AppTest.from_function(script, default_timeout=30).run()
    assert not at.exception
    assert at.session_state["seqs"] == [1, 2, 1, 1]
    assert at.session_state["memory_t"] == 3 and at.session_state["unowned_key"] == 1
