"""Links that reopen a view, and their QR codes, made locally (no web service), on the address other devices
reach (public_base: GDN_PUBLIC_URL, else browser.serverAddress when set)."""
from __future__ import annotations

import io
import os
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit

import segno
from streamlit import config
from streamlit.config_option import ConfigOption


def share_url(base: str, page_path: str, params: dict) -> str:
    """base: the address the browser shows, with or without the page ("http://host:8501/compare");
    page_path: "" for the default page."""
    query = urlencode({k: v for k, v in params.items() if v is not None})
    base = base.split("?")[0].rstrip("/")
    if page_path and base.endswith("/" + page_path):                # the browser's URL already names the page
        base = base[: -len(page_path) - 1]
    return f"{base}/{page_path}" + (f"?{query}" if query else "")


def qr_png(text: str, *, scale: int = 6) -> bytes:
    """A PNG QR code of `text` (error correction M: survives a slightly blurred projector)."""
    buffer = io.BytesIO()
    segno.make(text, error="m").save(buffer, kind="png", scale=scale, border=2)
    return buffer.getvalue()


LOOPBACK = ("localhost", "127.", "::1", "0.0.0.0", "[::1]")


@dataclass(frozen=True)
class Base:
    """Where a link meant for other devices points. url: GDN_PUBLIC_URL, else Streamlit's
    browser.serverAddress when the operator set it, else the address this browser shows (`seen`);
    bad: GDN_PUBLIC_URL as given when it is no http(s) address (then ignored)."""
    url: str
    bad: str | None = None

    @property
    def host(self) -> str:
        return urlsplit(self.url).hostname or ""

    @property
    def loopback(self) -> bool:
        """Only this computer can open it (a phone reading 127.0.0.1 reaches itself)."""
        return self.host.startswith(LOOPBACK) or self.host in ("localhost", "::1", "0.0.0.0")


def public_base(seen: str | None) -> Base:
    """The base of every link another device opens (join links, QR codes, share links): see Base."""
    told = os.environ.get("GDN_PUBLIC_URL", "").strip()
    if told:
        try:
            parts = urlsplit(told)
            usable = parts.scheme in ("http", "https") and bool(parts.hostname)
        except ValueError:                          # "http://[abc:8501": no URL at all, said as a bad one
            usable = False
        if usable:
            return Base(told.rstrip("/"))
    bad = told or None
    if config.get_where_defined("browser.serverAddress") != ConfigOption.DEFAULT_DEFINITION:
        port = int(config.get_option("browser.serverPort"))
        return Base(f"http://{config.get_option('browser.serverAddress')}" + ("" if port == 80 else f":{port}"), bad)
    return Base(seen or "http://127.0.0.1:8501/", bad)
