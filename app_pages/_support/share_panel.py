"""The sidebar's share button: a link (and QR code) that reopens exactly this view.

The link holds the language, lecture mode and the page's linked widgets (url_state's registry), nothing else.
"""
from __future__ import annotations

import streamlit as st

from app_pages._support.chrome import chrome_params, tr
from app_pages._support.escape import plain
from app_pages._support.share import MAX_PUBLIC_URL, Base, public_base, qr_png, share_url, visible_cut
from app_pages._support.url_state import linked_params


def share_panel(page_path: str, prefix: str) -> None:
    """Sidebar: a button that shows the link to exactly this view (copy button on the code block) and its
    QR code. Made when asked for, not on every run: stepping and the fragments' sliders rerun only part
    of a page, so a link drawn by the last full run named an older view; the button's click is a full
    run, which reads every widget as it is now."""
    if st.sidebar.button(tr("common.share"), icon=":material/qr_code_2:", key="share_open", width="stretch"):
        base = public_base(st.context.url)              # GDN_PUBLIC_URL when the operator set it
        params = {**chrome_params(), **linked_params(prefix)}
        url = share_url(base.url, page_path, params)
        st.dialog(tr("common.share"), icon=":material/qr_code_2:")(_share_dialog)(url, base)


def bad_public_url(base: Base) -> str:
    """The operator's message when GDN_PUBLIC_URL is unusable: what is wrong, the value (a short, visible
    cut of it), and what to set."""
    why = tr(f"live.url_{base.why}", n=len(base.bad or ""), most=MAX_PUBLIC_URL)
    return tr("live.bad_public_url", why=why, value=plain(visible_cut(base.bad or "", 80)))


def _share_dialog(url: str, base: Base) -> None:
    if base.bad:
        st.error(bad_public_url(base), icon=":material/link_off:")
    st.code(url, language=None, wrap_lines=True)
    png = qr_png(url)                                   # None: a link too long for a QR code
    if png is not None:
        st.image(png, width=240, caption=tr("common.share_qr"))
    if "://127.0.0.1" in url or "://localhost" in url:
        st.caption(tr("common.share_local"))
