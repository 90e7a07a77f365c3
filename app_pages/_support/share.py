"""Links that reopen a view, and their QR codes, made locally (no web service), on the address other devices
reach (public_base: GDN_PUBLIC_URL, else browser.serverAddress when set), and text from a link shown back
(visible_cut)."""
from __future__ import annotations

import io
import ipaddress
import os
import re
import unicodedata
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


def qr_png(text: str, *, scale: int = 6) -> bytes | None:
    """A PNG QR code of `text` (error correction M: survives a slightly blurred projector), or None when
    `text` is longer than a QR code holds (about 2.3 kB): the link is then shown without one."""
    buffer = io.BytesIO()
    try:
        code = segno.make(text, error="m")
    except segno.DataOverflowError:
        return None
    code.save(buffer, kind="png", scale=scale, border=2)
    return buffer.getvalue()


def visible_cut(text, limit: int) -> str:
    """Text from a link (a ?join= value) as a page may echo it: compatibility forms folded (NFKC), every
    invisible or control character dropped (bidi overrides such as U+202E would turn the rest of the line
    around, zero-width ones hide text, combining marks pile up), then at most `limit` characters, "…" when
    cut. Markdown escaping is still the caller's (escape.plain)."""
    kept = "".join(c for c in unicodedata.normalize("NFKC", str(text))
                   if unicodedata.category(c)[0] not in "CM" and unicodedata.category(c) not in ("Zl", "Zp"))
    return kept if len(kept) <= limit else kept[:limit] + "…"


LOOPBACK = ("localhost", "127.", "::1", "0.0.0.0", "[::1]")
MAX_PUBLIC_URL = 512            # an address, not a document: a QR code of the join link stays readable
HOST_NAME = re.compile(r"[\w.-]+")       # a name (letters of any script: a domain as typed) or an IPv4


def url_problem(text: str) -> str | None:
    """What is wrong with `text` as GDN_PUBLIC_URL, as the tail of its message's i18n key (live.url_long,
    url_space, url_malformed, url_scheme, url_host), or None when it is an http(s) address with a host."""
    if len(text) > MAX_PUBLIC_URL:
        return "long"
    if any(c.isspace() or unicodedata.category(c)[0] == "C" for c in text):
        return "space"
    try:
        parts = urlsplit(text)
        host, _ = parts.hostname, parts.port             # .port: "http://h:x/" is no port
    except ValueError:                                    # "http://[abc:8501": no URL at all
        return "malformed"
    if parts.scheme not in ("http", "https"):
        return "scheme"
    if not host or not (HOST_NAME.fullmatch(host) or _is_ipv6(host)):
        return "host"
    return None


def _is_ipv6(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).version == 6
    except ValueError:
        return False


@dataclass(frozen=True)
class Base:
    """Where a link meant for other devices points. url: GDN_PUBLIC_URL, else Streamlit's
    browser.serverAddress when the operator set it, else the address this browser shows (`seen`);
    bad: GDN_PUBLIC_URL as given when it is unusable (then ignored), why: what is wrong (url_problem)."""
    url: str
    bad: str | None = None
    why: str | None = None

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
    why = url_problem(told) if told else None
    if told and why is None:
        return Base(told.rstrip("/"))
    bad = told or None
    if config.get_where_defined("browser.serverAddress") != ConfigOption.DEFAULT_DEFINITION:
        port = int(config.get_option("browser.serverPort"))
        return Base(f"http://{config.get_option('browser.serverAddress')}" + ("" if port == 80 else f":{port}"),
                    bad, why)
    return Base(seen or "http://127.0.0.1:8501/", bad, why)
