"""Streamlit glue shared by every page: language, lecture mode, URL state, chart display.

Only UI plumbing lives here; computation is in gdn/ and is called through cached wrappers.
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

import numpy as np

import plotly.graph_objects as go
import streamlit as st

from gdn.i18n import LANGS, pick_language, t, table
from gdn.lessons.classroom import NOTES_FIELDS
from app_pages._support.share import qr_png, share_url

ASSETS = Path(__file__).resolve().parents[2] / "assets"
LANG_NAMES = {"zh": "简体中文", "en": "English"}
# Read once per server process: every script run of every session draws them.
APP_CSS, LECTURE_CSS = (f"<style>{(ASSETS / name).read_text(encoding='utf-8')}</style>" for name in ("app.css", "lecture.css"))


# Language and lecture mode live under keys no widget owns ("_lang", "_lecture"): Streamlit drops a
# widget's state on a page switch made mid-run (st.switch_page), and the language fell back to the
# browser's. The sidebar widgets only copy their value in.
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


def sidebar_chrome() -> None:
    """Language picker and lecture-mode toggle; both are mirrored into the URL so links reopen them."""
    st.session_state["lang"], st.session_state["lecture"] = lang(), lecture()
    with st.sidebar:
        st.radio(t("common.language", lang()), LANGS, key="lang", format_func=LANG_NAMES.get,
                 horizontal=True, on_change=_copy_widget, args=("lang", "_lang"))
        st.toggle(tr("common.lecture_mode"), key="lecture", help=tr("common.lecture_help"),
                  on_change=_copy_widget, args=("lecture", "_lecture"))
    st.query_params["lang"] = lang()
    st.html(APP_CSS)
    if lecture():
        st.query_params["mode"] = "lecture"
        st.html(LECTURE_CSS)
    elif "mode" in st.query_params:
        del st.query_params["mode"]


def seed_from_url(key: str, options, default) -> None:
    """Before a choice widget is drawn: on a fresh session take ?key= from the link if it names an
    option; later, if the options changed under the stored value, fall back to the default."""
    if key not in st.session_state:
        wanted = st.query_params.get(key)
        st.session_state[key] = next((o for o in options if str(o) == wanted), default)
    elif st.session_state[key] not in options:
        st.session_state[key] = default


def sync_to_url(key: str, default) -> None:
    """After the widget: mirror its value into the URL, leaving defaults out to keep links short."""
    value = st.session_state.get(key)
    if value is None or value == default:
        st.query_params.pop(key, None)
    else:
        st.query_params[key] = str(value)


def relabel_after_language_switch(key: str) -> None:
    """Call before drawing a keyed choice widget with translated option labels. After a language
    switch such a widget keeps showing its chosen option in the old language until picked again;
    writing its value from code makes Streamlit send it anew, with the new label."""
    drawn_in = st.session_state.setdefault("_drawn_in_lang", {})
    if key in st.session_state and drawn_in.get(key, lang()) != lang():
        st.session_state[key] = st.session_state[key]
    drawn_in[key] = lang()


def linked(widget, label: str, options, *, key: str, default, **kwargs):
    """A choice widget whose value lives in the link: `widget(label, options, key=key, **kwargs)`
    (st.selectbox, a column's select_slider, ...) seeded from ?key=, kept valid, and mirrored back.

    Choice widgets are linked by hand, not with bind="query-params", so the URL holds the stable
    option id (?memory_preset=k1_update, ?cost_T=32768), never its translated or formatted label."""
    options = list(options)
    seed_from_url(key, options, default)
    relabel_after_language_switch(key)
    value = widget(label, options, key=key, **kwargs)
    sync_to_url(key, default)
    return value


def linked_int(where, label: str, lo: int, hi: int, default: int, *, key: str, **kwargs) -> int:
    """An integer number_input whose value lives in the link, linked by hand like `linked`: Streamlit's
    own binding raises on ?key=inf, 1e400 or 5000 digits. A link value that is not a whole number in
    [lo, hi] is ignored (the default is shown and the link corrected)."""
    if key not in st.session_state:
        text = (st.query_params.get(key) or "").strip()
        valid = re.fullmatch(r"-?\d{1,12}", text) is not None and lo <= int(text) <= hi
        st.session_state[key] = int(text) if valid else default
    value = int(where.number_input(label, lo, hi, key=key, **kwargs))
    sync_to_url(key, default)
    return value


def plain(text: str) -> str:
    """Text from outside (a file name, a repo id) shown as itself inside markdown: every markdown
    character escaped (and $ and : too: Streamlit reads $..$ as LaTeX and :name: as an icon), so a name like
    ![x](http://host/img) is not turned into an image the browser fetches."""
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|<>~$:])", r"\\\1", str(text))


def note(text: str) -> None:
    """Explanatory text: a callout normally, folded away in lecture mode (the teacher says it)."""
    if lecture():
        with st.expander(tr("common.notes")):
            st.markdown(text)
    else:
        st.info(text, icon=":material/lightbulb:")


def stream_key(stream) -> str:
    """A fingerprint of a one-head stream's numbers, to share figures built from equal streams."""
    digest = hashlib.sha1()
    for name in ("k", "v", "q", "alpha", "beta", "S0"):
        array = np.ascontiguousarray(getattr(stream, name), dtype=np.float64)
        digest.update(str(array.shape).encode() + array.tobytes())
    return digest.hexdigest()


@st.cache_resource(max_entries=1024, show_spinner=False)
def shared_figure(key: tuple, _build) -> go.Figure:
    """_build() once per key for the whole server; everyone stepping through the same example gets the
    same Figure object (never mutated: st.plotly_chart only reads it). Plotly's validated build is
    most of a step's server time (the memory figure: 47 of ~95 ms), and a class steps through the
    same few examples. The key must hold everything the figure depends on (language, sizes)."""
    return _build()


def show_figure(fig: go.Figure, key: str, alt: str, export: bool = True, **events):
    """One place that sets how charts are drawn: full width, toolbar PNG at slide resolution (3x),
    and a standalone HTML download that works offline (plotly.js inlined). events: on_select and
    selection_mode, passed to st.plotly_chart; returns its selection event (None without them)."""
    config = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 3, "filename": key}}
    event = st.plotly_chart(fig, key=key, config=config, alt=alt, theme=None, **events)
    if export:
        figure_download(key, lambda: fig)
    return event if events else None


def figure_download(key: str, build) -> None:
    """The standalone HTML download (plotly.js inlined, works offline) of build()'s figure, built only when
    clicked: also for pictures the page draws as HTML tables. Not in lecture mode (the room needs no button)."""
    if not lecture():
        st.download_button(tr("common.download_html"), data=lambda: build().to_html(include_plotlyjs=True),
                           file_name=f"{key}.html", mime="text/html", key=f"{key}_html",
                           icon=":material/download:", type="tertiary", on_click="ignore")


def page_params(prefix: str) -> dict:
    """The plain values (numbers, strings) of the current page's widgets, for a link that reopens them.
    Keys are page-prefixed ("memory_t"); editors and internal play state are left out."""
    skip = ("_edit", "_playing", "_tick", "_html", "_csv", "_widgets", "_keys",
            "_source", "_prompt_tokens")                                  # a local folder path; derived state
    return {k: v for k, v in st.session_state.items()
            if k.startswith(prefix + "_") and isinstance(v, (int, float, str)) and not isinstance(v, bool)
            and not any(s in k for s in skip) and not re.search(r"_w\d+$", k)}   # the stepper's widget copies


def share_panel(page_path: str, prefix: str) -> None:
    """Sidebar: a button that shows the link to exactly this view (copy button on the code block) and its
    QR code. Made when asked for, not on every run: stepping and the fragments' sliders rerun only part
    of a page, so a link drawn by the last full run named an older view; the button's click is a full
    run, which reads every widget as it is now."""
    if st.sidebar.button(tr("common.share"), icon=":material/qr_code_2:", key="share_open", width="stretch"):
        base = st.context.url or "http://127.0.0.1:8501/"
        params = {"lang": lang(), **({"mode": "lecture"} if lecture() else {}), **page_params(prefix)}
        st.dialog(tr("common.share"), icon=":material/qr_code_2:")(_share_dialog)(share_url(base, page_path, params))


def _share_dialog(url: str) -> None:
    st.code(url, language=None, wrap_lines=True)
    st.image(qr_png(url), width=240, caption=tr("common.share_qr"))
    if "://127.0.0.1" in url or "://localhost" in url:
        st.caption(tr("common.share_local"))


def teacher_notes(page: str) -> None:
    """Sidebar: how to explain this page in five minutes (classroom.notes_<page>)."""
    key = f"classroom.notes_{page}"
    if key in table(lang()):
        with st.sidebar.expander(tr("common.teacher_notes"), icon=":material/school:"):
            st.markdown(tr(key, **NOTES_FIELDS.get(page, dict)()))
