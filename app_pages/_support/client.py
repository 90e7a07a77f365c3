"""Who a request comes from: the network address a seat's mint rate, a room's creation and the heavy-work
line are counted against (one client, however many tabs or sessions it opens).

Two layers may read X-Forwarded-For, and both must believe it only from a proxy the operator named:
- Streamlit's server (uvicorn) replaces the peer of a connection from a host in FORWARDED_ALLOW_IPS (unset:
  loopback) with an address taken from that header, which a client that is no proxy writes itself. The
  launchers this project ships (serve-class.sh, the Dockerfile, deploy/k8s) set FORWARDED_ALLOW_IPS to ""
  so that st.context.ip_address is the TCP peer; where it is not, reported_peer distrusts what it reports.
- seat_address then follows the header only from a peer in GDN_TRUSTED_PROXIES.
"""
from __future__ import annotations

import ipaddress
import os

import streamlit as st

UVICORN_TRUSTS = "127.0.0.1,::1"     # uvicorn's FORWARDED_ALLOW_IPS when the variable is unset
LOOPBACK = "127.0.0.1"               # Streamlit reports a loopback peer as None
# A peer whose address uvicorn may have taken from a header the client wrote: no address at all, so it is
# neither this machine (exempt from the room and code limits) nor a trusted proxy, and every such client
# shares one bucket of every per-address limit.
UNVERIFIED = "unverified-peer"


def _networks(text: str) -> list:
    """The networks a comma-separated setting names; ValueError for a malformed one."""
    return [ipaddress.ip_network(net.strip(), strict=False) for net in text.split(",") if net.strip()]


def _within(address: str, networks: list) -> bool:
    ip = ipaddress.ip_address(address)
    return any(ip.version == net.version and ip in net for net in networks)


def _covered(rewriters: str, trusted: str) -> bool:
    """Whether every host uvicorn takes the header from is also a proxy the app trusts (then uvicorn's
    choice is the one seat_address would make). '*' or a malformed setting: not covered."""
    try:
        mine = _networks(trusted)
        return all(any(net.version == t.version and net.subnet_of(t) for t in mine) for net in _networks(rewriters))
    except ValueError:
        return False


def reported_peer(reported: str | None, forwarded: str, rewriters: str, trusted: str) -> str | None:
    """The peer to judge a request by, given the address Streamlit reports (st.context.ip_address, None on
    loopback) and uvicorn's FORWARDED_ALLOW_IPS (`rewriters`). Where uvicorn may have taken the reported
    address from X-Forwarded-For (it trusts some host the app does not, and the address is one the
    header names), the real peer is unknown: it is counted as UNVERIFIED, so a made-up header buys neither
    a fresh address, nor a proxy's trust, nor this machine's exemption (counting it as loopback gave all
    three). A client that is no proxy never sends the header, so only a forger (or a proxy nobody named,
    whose clients are then one client) ends up there."""
    if reported is None or not rewriters.strip() or _covered(rewriters, trusted):
        return reported
    named = {hop.strip() for hop in forwarded.split(",")}
    return UNVERIFIED if reported in named else reported


def seat_address(direct: str | None, forwarded: str, trusted: str) -> str | None:
    """The address a seat's mint rate is counted against. direct: the peer (None on loopback, as Streamlit
    reports it); forwarded: the X-Forwarded-For header; trusted: GDN_TRUSTED_PROXIES, comma-separated
    networks whose peers are proxies (serve-class.sh names loopback for its nginx; a cluster names its
    Ingress pods). Behind a proxy the address is the last one X-Forwarded-For names, the one that proxy
    saw; the ones before it are the client's own word. A peer that is no proxy (a phone on the room's
    Wi-Fi, a local process straight at a replica, whatever its address) is counted as itself, so a
    made-up header buys no fresh seats; loopback is a proxy only where the setting names it."""
    last = forwarded.split(",")[-1].strip()
    try:
        proxy = _within(direct or LOOPBACK, _networks(trusted))
    except ValueError:                      # a malformed network in the setting, or an UNVERIFIED peer: no proxy
        proxy = False
    return last if last and proxy else direct


def client_address() -> str | None:
    """The phone's network address as the server sees it (reported_peer, then seat_address)."""
    forwarded = st.context.headers.get("X-Forwarded-For") or ""
    trusted = os.environ.get("GDN_TRUSTED_PROXIES", "")
    peer = reported_peer(st.context.ip_address, forwarded, os.environ.get("FORWARDED_ALLOW_IPS", UVICORN_TRUSTS),
                         trusted)
    return seat_address(peer, forwarded, trusted)
