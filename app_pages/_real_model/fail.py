"""A bad input on the real-model page: a translated headline, the precise reason, and nothing more."""
import streamlit as st

from gdn.qwen35.analysis import error_kind
from app_pages._support import ui


def fail(message: str, kind: str | None = None) -> None:
    """Show the headline of `kind` (or the kind the message names) and the message itself, then stop the page."""
    st.error(ui.tr(f"real_model.err_{kind or error_kind(message)}"), icon=":material/error:")
    st.code(message, language=None, wrap_lines=True)
    st.stop()
