"""Who a request comes from: the network address a seat's mint rate, a room's creation and the heavy-work
line are counted against (one client, however many tabs or sessions it opens)."""
from __future__ import annotations

import ipaddress
import os

import streamlit as st


def seat_address(direct: str | None, forwarded: str, trusted: str) -> str | None:
    """The address a seat's mint rate is counted against. direct: the peer Streamlit saw (None on
    loopback: serve-class.sh's nginx on this machine); forwarded: the X-Forwarded-For header; trusted:
    GDN_TRUSTED_PROXIES, comma-separated networks whose peers are proxies (a cluster's Ingress). Behind a
    proxy the address is the last one X-Forwarded-For names, the one that proxy saw; the ones before it
    are the client's own word. A peer that is no proxy (a phone on the room's Wi-Fi, whatever its
    address) is counted as itself, so a made-up header buys no fresh seats."""
    last = forwarded.split(",")[-1].strip()
    try:
        proxy = direct is None or any(ipaddress.ip_address(direct) in ipaddress.ip_network(net.strip(), strict=False)
                                      for net in trusted.split(",") if net.strip())
    except ValueError:                      # a malformed network in the setting trusts nobody
        proxy = direct is None
    return last if last and proxy else direct


def client_address() -> str | None:
    """The phone's network address as the server sees it (seat_address)."""
    return seat_address(st.context.ip_address, st.context.headers.get("X-Forwarded-For") or "",
                        os.environ.get("GDN_TRUSTED_PROXIES", ""))
