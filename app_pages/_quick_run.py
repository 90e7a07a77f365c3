"""The quick run a page shows, in its link (the recall and update pages): ?recall_ran=7 names the seed whose run
the view showed, beside ?recall_seed= (the seed box, which may have moved on since). A fresh session opened
from the link shows that run again when this server keeps it (the shared caches: a seed trains once per
server), else says so in words and leaves the Train button to the visitor: a link never starts a minute of
training on a shared server by itself."""
from __future__ import annotations

import re

import streamlit as st

from app_pages._support import compute, ui


def ran_key(prefix: str) -> str:
    return f"{prefix}_ran"


def linked_seed(prefix: str) -> int | None:
    """The seed of the run the link names, on a session that has not yet drawn the view; else None."""
    if ran_key(prefix) in st.session_state:
        return None
    text = (st.query_params.get(ran_key(prefix)) or "").strip()
    return int(text) if re.fullmatch(r"\d{1,2}", text) else None


def kept(kind: str, key) -> dict | None:
    """The finished run the shared cache `kind` holds under key (compute.run_job's), or None."""
    return compute.shared_caches()[kind].get(key)


def reopen(prefix: str, kind: str, key_of, shown: str) -> None:
    """Before the view draws: the run a fresh session's link names, put in the session under `shown` as the
    view keeps its own (its seed, no wait), or words saying it is not kept here. key_of(seed): the cache key."""
    seed = linked_seed(prefix)
    if seed is None or shown in st.session_state:
        return
    trained = kept(kind, key_of(seed))
    if trained is None:
        st.info(ui.tr(f"{prefix}.ran_lost", seed=seed), icon=":material/link_off:")
    else:
        st.session_state[shown] = {**trained, "seed": seed, "waited": None}


def keep_in_link(prefix: str, run: dict | None) -> None:
    """After the view: the shown run's seed mirrored into the link (none shown: left out)."""
    st.session_state[ran_key(prefix)] = run["seed"] if run else None
    ui.sync_to_url(ran_key(prefix), None)
