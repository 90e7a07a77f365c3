"""The sidebar's share button: a link (and QR code) that reopens exactly this view.

The link holds the language, lecture mode and the page's linked widgets (url_state's registry), nothing else.
"""
from __future__ import annotations

import streamlit as st

from app_pages._support.chrome import chrome_params, tr
from app_pages._support.share import public_base, qr_png, share_url
from app_pages._support.url_state import linked_params


def share_panel(page_path: str, prefix: str) -> None:
    """Sidebar: a button that shows the link to exactly this view (copy button on the code block) and its
    QR code. Made when asked for, not on every run: stepping and the fragments' sliders rerun only part
    of a page, so a link drawn by the last full run named an older view; the button's click is a full
    run, which reads every widget as it is now."""
    if st.sidebar.button(tr("common.share"), icon=":material/qr_code_2:", key="share_open", width="stretch"):
        base = public_base(st.context.url).url          # GDN_PUBLIC_URL when the operator set it
        params = {**chrome_params(), **linked_params(prefix)}
        st.dialog(tr("common.share"), icon=":material/qr_code_2:")(_share_dialog)(share_url(base, page_path, params))


def _share_dialog(url: str) -> None:
    st.code(url, language=None, wrap_lines=True)
    st.image(qr_png(url), width=240, caption=tr("common.share_qr"))
    if "://127.0.0.1" in url or "://localhost" in url:
        st.caption(tr("common.share_local"))
