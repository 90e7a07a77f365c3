"""The tab keeps the packed payloads it was sent (payloadOf in assets/common/view.js, app_pages/_support/payload.py):
back on a page, its figures are drawn from that copy; a tab that lost one asks and gets it again; and a
page link right after a moved explorer slider switches pages in one run (no values sent first)."""
import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg

from devtools.app_server import wait_for_app

pytestmark = pytest.mark.browser
BARS = "document.querySelectorAll('.gdn-att .att-bar').length"
BLOCK = "document.querySelectorAll('.st-key-start_block_explorer .gdn-explorer-figure *').length"
CELLS = "document.querySelectorAll('.gdn-player-figure td[data-panel]').length"


def back_msg(frame) -> BackMsg:
    msg = BackMsg()
    msg.ParseFromString(frame if isinstance(frame, bytes) else frame.encode())
    return msg


def nav(page, path: str, ready: str) -> None:
    page.locator(f'[data-testid="stTopNavLink"][href$="/{path}"]').click()
    page.wait_for_function(f"() => ({ready}) > 0", timeout=60_000)
    wait_for_app(page)


def test_pages_revisited_draw_from_the_tabs_copy_and_a_lost_payload_is_sent_again(page, app_url):
    page.goto(f"{app_url}/start?lang=en")
    wait_for_app(page)
    page.wait_for_function(f"{BARS} === 6")
    kept = page.evaluate("[...window.__gdnView.payloads.keys()]")
    assert len(kept) == 2                                    # the attention figure's grid, the layer diagram
    nav(page, "compare", CELLS)
    with_compare = page.evaluate("[...window.__gdnView.payloads.keys()]")
    assert with_compare[:2] == kept and len(with_compare) == 5        # its rules and two variants' frames
    nav(page, "", BARS)                                       # back on start: both figures drawn again
    assert page.evaluate(BARS) == 6 and page.evaluate(BLOCK) > 0
    # The tab loses every payload (as if evicted): the next page it opens asks, and is sent them again.
    page.evaluate("window.__gdnView.payloads.clear()")
    nav(page, "memory_table", CELLS)
    assert page.evaluate("window.__gdnView.payloads.size") >= 1
    page.keyboard.press("ArrowRight")                        # the player steps on the frames it was sent
    page.wait_for_function("document.querySelector('.gdn-counter').textContent.length > 0")
    assert not page.problems


def test_a_page_link_after_a_moved_slider_switches_in_one_run(page, app_url):
    page.goto(f"{app_url}/start?lang=en")
    wait_for_app(page)
    page.wait_for_function(f"{BARS} === 6")
    page.locator(".gdn-x-start_T").focus()
    page.keyboard.press("ArrowLeft")
    page.wait_for_function(f"{BARS} === 5")
    sent = []
    page.app_socket.on("framesent", lambda payload: sent.append(payload))
    nav(page, "memory_table", CELLS)
    reruns = [m for m in map(back_msg, sent) if m.WhichOneof("type") == "rerun_script"]
    assert len(reruns) == 1, len(reruns)
    relayed = [w.json_value for w in reruns[0].rerun_script.widget_states.widgets if "values" in w.json_value]
    assert not relayed                                        # no values relayed with (or before) the switch
    assert "/memory_table" in page.url
