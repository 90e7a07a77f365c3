"""What the browser components (player, explorer, swap) are sent, and the JS every component runs.

Python computes every number and draws every view; a component only unpacks and swaps. The payload is
JSON, gzip-packed and base64-encoded (a few hundred HTML frames repeat most of their markup: megabytes
pack to tens of KB), named by a hash so the browser unpacks each payload once. assets/common/pack.js
unpacks it; component_js puts that shared file, after the views' protocol (assets/common/view.js), in
front of each component's own module. No streamlit: the workers pack the views they build
(app_pages/_real_model/drawn.py).
"""
from __future__ import annotations

import base64
import gzip
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

ASSETS = Path(__file__).resolve().parents[2] / "assets"      # chrome.ASSETS, read here without streamlit
# What every component's module starts with, in this order (assets/common/fake_tab.mjs and eslint.config.mjs
# list the same files): the views' protocol, the keys, the linked hovers, unpacking.
SHARED_JS = ("common/view.js", "common/keys.js", "common/hover.js", "common/pack.js")


@dataclass(frozen=True)
class Packed:
    """A payload ready to send: gz is base64 of gzip(JSON); hash names it; n_frames: how many views it holds."""
    gz: str
    hash: str
    n_frames: int


def pack_json(payload, n_frames: int = 0) -> Packed:
    """Any JSON payload (a dict of frames, a list...), packed for assets/common/pack.js's unpack."""
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
    return Packed(gz=base64.b64encode(gzip.compress(body, 6, mtime=0)).decode("ascii"),
                  hash=hashlib.sha1(body).hexdigest()[:16], n_frames=n_frames)


def component_js(js: str, css: str | None = None, css_name: str | None = None) -> str:
    """A component's module text: the shared files of SHARED_JS (assets/common/view.js: the address, the
    handshake with Python, payloads sent once, the flush before a click elsewhere, the relay; keys.js: the
    one keydown listener and its typing rule; hover.js: the one hover linker; pack.js: the payload loader,
    style injection), then the stylesheet `css` as the constant `css_name`, then the component's own `js`
    (paths under assets/). The stylesheet rides in the script, which puts it in the page's head once: a
    component drawn into the page (isolate_styles=False, so its HTML gets the app's CSS) has its css=
    applied nowhere."""
    parts = [(ASSETS / name).read_text(encoding="utf-8") for name in SHARED_JS]
    if css is not None:
        parts.append(f"const {css_name} = {json.dumps((ASSETS / css).read_text(encoding='utf-8'))};")
    parts.append((ASSETS / js).read_text(encoding="utf-8"))
    return "\n".join(parts)
