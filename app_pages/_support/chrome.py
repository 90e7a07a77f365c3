"""Language and lecture mode: the two choices every page reads, and the sidebar that sets them.

Both live under keys no widget owns ("_lang", "_lecture"): Streamlit drops a widget's state on a page
switch made mid-run (st.switch_page), and the language fell back to the browser's. The sidebar widgets
only copy their value in; both are mirrored into the URL (?lang=zh|en, ?mode=lecture) so links reopen them.
"""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from gdn.i18n import LANGS, pick_language, t

ASSETS = Path(__file__).resolve().parents[2] / "assets"
LANG_NAMES = {"zh": "简体中文", "en": "English"}
# Read once per server process: every script run of every session draws them.
APP_CSS, LECTURE_CSS = (f"<style>{(ASSETS / name).read_text(encoding='utf-8')}</style>" for name in ("app.css", "lecture.css"))
# The cost and chunking pages in lecture mode: their metric values read as large as the room needs.
BIG_METRICS_CSS = f"<style>{(ASSETS / 'common' / 'big_metrics.css').read_text(encoding='utf-8').strip()}</style>"


def lang() -> str:
    return st.session_state.get("_lang") or pick_language(st.query_params.get("lang"), st.context.locale)


def tr(key: str, **fields) -> str:
    """The user-facing string `key` in the current language."""
    return t(key, lang(), **fields)


def label_maker(prefix: str):
    """format_func for options: option -> tr(prefix + option), with today's language captured
    (so the function stays right when called later, outside this script run)."""
    language = lang()
    return lambda option: t(f"{prefix}{option}", language)


def lecture() -> bool:
    return bool(st.session_state.get("_lecture"))


def font_size() -> int:
    """Figure font size: lecture mode is read from the back of a room."""
    return 22 if lecture() else 14


def init_session() -> None:
    """Language and mode come from the URL on a fresh session (?lang=zh|en, ?mode=lecture),
    else the language follows the browser locale."""
    if "_lang" not in st.session_state:
        st.session_state["_lang"] = pick_language(st.query_params.get("lang"), st.context.locale)
    if "_lecture" not in st.session_state:
        st.session_state["_lecture"] = st.query_params.get("mode") == "lecture"


def _copy_widget(widget_key: str, key: str) -> None:
    st.session_state[key] = st.session_state[widget_key]


def chart_button_css() -> str:
    """Streamlit adds a full-screen button to every chart's toolbar, titled in English and outside plotly.js's
    locale (figures.toolbar_locale); plotly draws a button's tooltip from its data-title with CSS, so the
    translated words are put there by CSS."""
    rules = [f'.js-plotly-plot .plotly .modebar-btn[data-title="{t(f"toolbar.{key}", "en")}"]:after '
             f'{{content: "{tr(f"toolbar.{key}")}"}}' for key in ("fullscreen", "close_fullscreen")]
    return "<style>" + "\n".join(rules) + "</style>"


def sidebar_chrome() -> None:
    """Language picker and lecture-mode toggle; both are mirrored into the URL so links reopen them."""
    st.session_state["lang"], st.session_state["lecture"] = lang(), lecture()
    with st.sidebar:
        st.radio(t("common.language", lang()), LANGS, key="lang", format_func=LANG_NAMES.get,
                 horizontal=True, on_change=_copy_widget, args=("lang", "_lang"))
        st.toggle(tr("common.lecture_mode"), key="lecture", help=tr("common.lecture_help"),
                  on_change=_copy_widget, args=("lecture", "_lecture"))
    put_param("lang", lang())
    st.html(APP_CSS)
    if lang() != "en":
        st.html(chart_button_css())
    if lecture():
        put_param("mode", "lecture")
        st.html(LECTURE_CSS)
    elif "mode" in st.query_params:
        del st.query_params["mode"]


def put_param(key: str, value: str) -> None:
    """Write ?key=value into the address unless it already says exactly that: every write sends the tab a
    message (page_info_changed), and a class's answers queue behind the messages the server sends
    (bench/README.md, "Where a class's answers wait")."""
    if st.query_params.get_all(key) != [value]:
        st.query_params[key] = value


def chrome_params() -> dict[str, str]:
    """The query parameters every page keeps: language, and lecture mode when it is on."""
    return {"lang": lang(), **({"mode": "lecture"} if lecture() else {})}
