"""Links that reopen a view, and their QR codes, made locally (no web service)."""
from __future__ import annotations

import io
from urllib.parse import urlencode

import segno


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
