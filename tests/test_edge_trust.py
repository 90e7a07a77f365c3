"""Who a request comes from, when the client lies (issue 49): a forged X-Forwarded-For from a client that
is no configured proxy is ignored, in app_pages/_support/client.py's logic and on a real Streamlit
server reached straight on 127.0.0.1, where Streamlit's own server (uvicorn) rewrites a loopback peer's
address from that header unless FORWARDED_ALLOW_IPS is empty. (Through nginx: tests/test_edge_nginx.py.)"""
from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib

import pytest

from gdn.live.store import is_local
from app_pages._support.client import UNVERIFIED, UVICORN_TRUSTS, reported_peer, seat_address
from devtools.app_server import ROOT, start_server

SERVE_CLASS = "127.0.0.1/32,::1/128"       # what deploy/serve_class.py gives its replicas
FORGED = "203.0.113.9"


def address(reported, forwarded, rewriters, trusted):
    """client_address()'s decision, from what Streamlit reports and the settings."""
    return seat_address(reported_peer(reported, forwarded, rewriters, trusted), forwarded, trusted)


def test_uvicorn_s_rewrite_of_a_loopback_peer_is_not_believed():
    """Streamlit's server, left to its default (FORWARDED_ALLOW_IPS unset: loopback), reports a loopback
    client that sent X-Forwarded-For as the header's address: that address is not the client's, and the
    client counts as UNVERIFIED, one client whatever it writes, and not this machine (which the room and
    code limits exempt). Where the operator trusts loopback too (serve-class's replicas), uvicorn's choice
    is the app's own."""
    assert address(FORGED, FORGED, UVICORN_TRUSTS, "") == UNVERIFIED
    assert address("198.51.100.7", f"1.2.3.4, {FORGED}, 198.51.100.7", UVICORN_TRUSTS, "") == UNVERIFIED
    assert address(FORGED, FORGED, UVICORN_TRUSTS, "10.0.0.0/8") == UNVERIFIED     # loopback still not named
    assert address(FORGED, FORGED, "*", "") == UNVERIFIED                          # uvicorn trusts anyone
    # a LAN client naming itself, or an operator trusting 127.0.0.1 but not ::1 (uvicorn's default trusts
    # both): counted as loopback, that once bought the operator's exemption, or a proxy's trust and with it
    # an address of the client's choosing on every request
    assert address("192.168.1.50", "192.168.1.50", UVICORN_TRUSTS, "") == UNVERIFIED
    assert address("10.0.0.5", "192.168.1.50, 10.0.0.5", UVICORN_TRUSTS, "127.0.0.1") == UNVERIFIED
    assert not is_local(UNVERIFIED)
    assert address(FORGED, FORGED, UVICORN_TRUSTS, SERVE_CLASS) == FORGED          # named: nginx's hop
    assert address("192.168.1.23", "", UVICORN_TRUSTS, "") == "192.168.1.23"       # no header: the peer
    assert address("192.168.1.23", "10.9.9.9", UVICORN_TRUSTS, "") == "192.168.1.23"   # a phone's own word
    assert address(None, "", UVICORN_TRUSTS, "") is None                           # the teacher's own browser


def test_with_uvicorn_s_rewrite_off_the_peer_is_the_tcp_peer():
    """FORWARDED_ALLOW_IPS empty (serve-class, the Dockerfile, deploy/k8s): what Streamlit reports is the
    TCP peer, and the header is believed only from GDN_TRUSTED_PROXIES' networks."""
    assert address(None, FORGED, "", "") is None                                   # straight at a replica
    assert address(None, FORGED, "", SERVE_CLASS) == FORGED                        # nginx (it overwrites)
    assert address("10.2.0.7", f"{FORGED}, 192.168.1.40", "", "10.0.0.0/8") == "192.168.1.40"   # an Ingress
    assert address("172.16.0.5", FORGED, "", "10.0.0.0/8") == "172.16.0.5"        # a pod that is no proxy
    assert address(FORGED, FORGED, "", "") == FORGED                               # a peer that is that address


PROBE_PAGE = """
import streamlit as st
from app_pages._support.client import client_address
st.markdown(f"reported={st.context.ip_address} counted={client_address()}")
"""


async def what_the_page_says(url: str, headers: dict) -> str:
    """Open a session on the probe page over Streamlit's websocket, sending `headers`, and return the
    markdown it draws."""
    import websockets
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    uri = url.replace("http://", "ws://") + "/_stcore/stream"
    async with websockets.connect(uri, subprotocols=["streamlit"], additional_headers=headers) as ws:
        msg = BackMsg()
        msg.rerun_script.query_string = ""
        await ws.send(msg.SerializeToString())
        while True:
            forward = ForwardMsg()
            forward.ParseFromString(await asyncio.wait_for(ws.recv(), 30))
            if forward.WhichOneof("type") == "delta" and forward.delta.WhichOneof("type") == "new_element":
                element = forward.delta.new_element
                if element.WhichOneof("type") == "markdown":
                    return element.markdown.body


def in_a_thread(coroutine):
    """asyncio.run in a thread of its own: a browser test before this one (Playwright's sync API) may
    have left an event loop running in this one."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


@contextlib.contextmanager
def probe_server(tmp_path, env: dict):
    page = tmp_path / "probe_page.py"
    page.write_text(PROBE_PAGE, encoding="utf-8")
    env = {"PYTHONPATH": str(ROOT), "GDN_TRUSTED_PROXIES": "", **env}
    with start_server(script=str(page), env=env) as (url, _proc):
        yield url


@pytest.mark.browser                  # starts app servers of its own
@pytest.mark.parametrize("rewrite", ["uvicorn's default", "off, as serve-class sets it"])
def test_a_forged_header_straight_at_a_replica_is_ignored(tmp_path, rewrite, monkeypatch):
    """A local process straight at a replica on 127.0.0.1 (no proxy GDN_TRUSTED_PROXIES names) sends
    X-Forwarded-For: whether Streamlit reports the forged address (uvicorn's default) or the loopback
    peer (None: FORWARDED_ALLOW_IPS empty), the app never counts it as the forged address."""
    env = {"FORWARDED_ALLOW_IPS": ""} if rewrite.startswith("off") else {}
    if not env:
        monkeypatch.delenv("FORWARDED_ALLOW_IPS", raising=False)          # the server inherits os.environ
    with probe_server(tmp_path, env) as url:
        forged = in_a_thread(what_the_page_says(url, {"X-Forwarded-For": FORGED}))
        honest = in_a_thread(what_the_page_says(url, {}))
    reported, counted = (part.split("=")[1] for part in forged.split())
    assert counted in ("None", UNVERIFIED) and FORGED not in counted, forged
    assert reported == (FORGED if not env else "None"), forged       # what uvicorn does, seen for real
    assert honest == "reported=None counted=None", honest
