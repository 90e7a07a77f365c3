"""Open the app in Streamlit's AppTest with a language and link parameters already set."""
from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parent.parent / "app.py")


def open_app(lang: str = "en", page: str | None = None, state: dict | None = None, **params) -> AppTest:
    """page: e.g. "app_pages/compare.py"; params become ?key=value in the link; state is put in
    st.session_state before the first run (what a user's earlier clicks would have left there)."""
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["lang"] = lang
    for key, value in (state or {}).items():
        at.session_state[key] = value
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    if page:
        at.switch_page(page)
        for key, value in [("lang", lang), *params.items()]:
            at.query_params[key] = value
        at.run()
    return at
