"""How charts are drawn and downloaded: one place sets the toolbar, the size and the offline HTML export."""
from __future__ import annotations

import dataclasses
import hashlib
import html
from collections.abc import Callable

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from gdn.figures.scale import scale_figure
from gdn.i18n import table
from app_pages._support import screen
from app_pages._support.caches import BOUNDS
from app_pages._support.chrome import APP_CSS, ASSETS, lang, lecture, tr

# A standalone HTML file's own page style (standalone_html).
STANDALONE_CSS = f"<style>{(ASSETS / 'common' / 'standalone.css').read_text(encoding='utf-8').strip()}</style>"

# plotly.js writes its toolbar's tooltips and notices in English; the English table holds its exact
# sentences (assets/i18n/en/toolbar.json), so a language's translations become a plotly.js locale.
TOOLBAR = "toolbar."


def toolbar_locale(language: str) -> dict:
    """Config entries that make the chart toolbar speak `language` (none for English, plotly's own)."""
    if language == "en":
        return {}
    english, ours = table("en"), table(language)
    words = {english[k]: ours[k] for k in english if k.startswith(TOOLBAR)}
    return {"locale": f"gdn-{language}", "locales": {f"gdn-{language}": {"dictionary": words}}}


def fingerprint(value):
    """A hashable stand-in for a figure function's argument, equal exactly when the data are: numbers,
    strings, None, numpy arrays (by shape, dtype and bytes), lists, tuples, dicts and dataclasses of them.
    Anything else is refused: a figure built from it could not be told apart from another."""
    if value is None or isinstance(value, (int, float, str)):
        return (type(value).__name__, value)                     # 1, 1.0 and True are different arguments
    if isinstance(value, np.generic):
        return fingerprint(value.item())
    if isinstance(value, np.ndarray):
        data = np.ascontiguousarray(value)
        return ("ndarray", data.shape, data.dtype.str, hashlib.sha1(data.tobytes()).hexdigest())
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(fingerprint(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((fingerprint(k), fingerprint(v)) for k, v in value.items()))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (type(value).__qualname__, tuple((f.name, fingerprint(getattr(value, f.name)))
                                                for f in dataclasses.fields(value)))
    raise TypeError(f"shared_figure: an argument of type {type(value).__name__} cannot name a figure; pass "
                    "numbers, strings, arrays, lists, dicts or dataclasses of them")


@st.cache_resource(max_entries=BOUNDS["figures.shared_figure"], show_spinner=False)
def _shared(key: tuple, _fn: Callable, _args: tuple, _kwargs: dict) -> go.Figure:
    return _fn(*_args, **_kwargs)


def shared_figure(fn: Callable[..., go.Figure], *args, **kwargs) -> go.Figure:
    """fn(*args, **kwargs) once per distinct function and arguments for the whole server; everyone stepping
    through the same example gets the same Figure object (never mutated: st.plotly_chart only reads it).
    Plotly's validated build is most of a step's server time (the memory figure: 47 of ~95 ms), and a
    class steps through the same few examples. The key is made from the arguments themselves, so it
    holds everything the figure depends on (the language is in its translated labels)."""
    key = (fn.__module__, fn.__qualname__, fingerprint(args), fingerprint(kwargs))
    return _shared(key, fn, args, kwargs)


def at_screen_scale(fig: go.Figure) -> go.Figure:
    """fig as this screen shows it: in lecture mode, drawn for 1280x720 and its pixel lengths (fonts, height,
    margins) times the screen's scale (screen.py); fig itself elsewhere. For a chart not drawn by show_figure."""
    return scale_figure(fig, screen.scale())


def show_figure(fig: go.Figure, key: str, alt: str, export: bool = True, fit_top: int | None = None, **events):
    """One place that sets how charts are drawn: full width, toolbar PNG at slide resolution (3x),
    and a standalone HTML download that works offline (plotly.js inlined). events: on_select and
    selection_mode, passed to st.plotly_chart; returns its selection event (None without them).
    fit_top: in lecture mode, the chart's top edge in px at 1280x720: the chart then fills the window
    under it (lecture.css, .st-key-gdn_fit_*) instead of its own height, so all of it is on the first
    screen of a 1280x720 projector and none of a 1920x1080 one is wasted (the figure places what lies
    around its plot in pixels). In lecture mode the figure is drawn for 1280x720 and shown at the screen's
    scale (screen.py): fit_top, its fonts, height and margins grow with the screen."""
    config = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 3, "filename": key},
              **toolbar_locale(lang())}
    shown = at_screen_scale(fig)
    if fit_top is not None and lecture():
        st.html(f"<style>.st-key-gdn_fit_{key} {{ --gdn-fit-top: calc({int(fit_top)} * var(--gdn-px)); }}</style>")
        with st.container(key=f"gdn_fit_{key}", height="stretch"):
            event = st.plotly_chart(shown, key=key, config=config, alt=alt, theme=None, height="stretch", **events)
    else:
        event = st.plotly_chart(shown, key=key, config=config, alt=alt, theme=None, **events)
    if export:
        figure_download(key, lambda: fig)
    return event if events else None


def standalone_html(body: str, title: str, css: str = "") -> str:
    """A picture the page draws as HTML, as a file that opens offline: the same markup, the app's CSS
    (and css, the stylesheet of the component that drew it)."""
    extra = f"<style>{css}</style>" if css else ""
    return (f'<!doctype html><html lang="{lang()}"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f'{APP_CSS}{extra}{STANDALONE_CSS}'
            f"</head><body>{body}</body></html>")


def html_download(key: str, body: str, title: str) -> None:
    """The download of a picture drawn as HTML is that HTML (standalone_html), made only when clicked:
    one source for what is seen and what is saved. Not in lecture mode (the room needs no button). In a container
    of its own for the reason figure_download gives: a deferred download's file is kept per parent path, and two
    written from a fragment into an outer column (the real model's gates view) would share one."""
    if not lecture():
        st.container().download_button(tr("common.download_html"), data=lambda: standalone_html(body, title),
                           file_name=f"{key}.html", mime="text/html", key=f"{key}_html",
                           icon=":material/download:", type="tertiary", on_click="ignore")


def figure_download(key: str, build) -> None:
    """The standalone HTML download (plotly.js inlined, works offline) of build()'s Plotly figure, built only
    when clicked. Not in lecture mode (the room needs no button)."""
    if not lecture():
        # its own container: Streamlit 1.67 files a deferred download under its parent's path, and every element a
        # fragment writes into a container outside itself shares one path, so only the last such button's file
        # survived the run ("Deferred file ... not found"); a container of its own gives each button its own path
        st.container().download_button(tr("common.download_html"), data=lambda: build().to_html(include_plotlyjs=True),
                           file_name=f"{key}.html", mime="text/html", key=f"{key}_html",
                           icon=":material/download:", type="tertiary", on_click="ignore")
