"""The learning path: the pages in the order a newcomer should read them, and the links between them.

app.py builds the navigation from PATH, every page ends with a "next" link to the following stop, and
every in-app page switch goes through go(), so language and lecture mode survive it.
"""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from app_pages._support.chrome import chrome_params, tr


@dataclass(frozen=True)
class Stop:
    script: str        # app_pages/<script>.py
    url_path: str      # the page's address
    key: str           # its strings: nav.<key> (title) and nav.blurb_<key> (one line on what you will see)
    icon: str

    @property
    def file(self) -> str:
        return f"app_pages/{self.script}.py"

    @property
    def address(self) -> str:
        """The page's path in a link: the default page (the first stop) lives at "/" only."""
        return "" if self is PATH[0] else self.url_path


PATH = (
    Stop("start", "start", "start", ":material/flag:"),
    Stop("memory_table", "memory_table", "memory", ":material/grid_on:"),
    Stop("playground", "playground", "playground", ":material/tune:"),
    Stop("recall", "recall", "recall", ":material/psychology:"),
    Stop("update", "update", "update", ":material/edit_note:"),
    Stop("compare", "compare", "compare", ":material/compare:"),
    Stop("cost", "cost", "cost", ":material/memory:"),
    Stop("chunking", "chunking", "chunking", ":material/view_module:"),
    Stop("real_model", "real_model", "real_model", ":material/biotech:"),
    Stop("classroom", "classroom", "classroom", ":material/school:"),
    Stop("practice", "practice", "practice", ":material/code:"),
)


def go(page_file: str, **params: str) -> None:
    """Switch to page_file ("app_pages/<script>.py") keeping language and lecture mode in the address
    (a bare st.switch_page drops the query string, so the new page's link would lose them)."""
    st.switch_page(page_file, query_params={**chrome_params(), **params})


ALIASES = {"memory": "memory_table", "": "start"}    # app.py's hidden twin of the memory page; the root


def stop_of(url_path: str) -> Stop | None:
    """The stop a page address belongs to ("" is the default page, the first stop)."""
    url_path = ALIASES.get(url_path, url_path)
    return next((s for s in PATH if s.url_path == url_path), None)


def stop_after(url_path: str) -> Stop | None:
    stop = stop_of(url_path)
    if stop is None or stop == PATH[-1]:
        return None
    return PATH[PATH.index(stop) + 1]


def next_link(url_path: str) -> None:
    """"Next: <page> — what you will see there", at the end of a page on the path."""
    nxt = stop_after(url_path)
    if nxt is None:
        return
    st.divider()
    st.page_link(nxt.file, label=tr("nav.next", page=tr(f"nav.{nxt.key}"), blurb=tr(f"nav.blurb_{nxt.key}")),
                 icon=":material/arrow_forward:", query_params=chrome_params())
