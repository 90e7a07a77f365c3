"""A bad input on the real-model page: a translated headline, the precise reason, and nothing more."""
import streamlit as st

from gdn.qwen35.errors import error_kind
from app_pages._support import ui


def fail(message: str | Exception, kind: str | None = None) -> None:
    """Show the headline of `kind` (or the error's own kind, gdn.qwen35.errors) and the message itself, then
    stop the page."""
    st.error(ui.tr(f"real_model.err_{kind or error_kind(message)}"), icon=":material/error:")
    st.code(str(message), language=None, wrap_lines=True)
    st.stop()
