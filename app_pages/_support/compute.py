"""Streamlit glue for heavy work on the real-model page: one slot pool and a few bounded result caches
shared by every session, and the cached model loader.

GDN_FORWARD_SLOTS (default 1) sets how many forward passes may run at once; the others wait in line
and see their place ("waiting for a free slot: number 2 in line").
"""
from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import streamlit as st

from gdn.lru import LRU
from gdn.qwen35 import load_model
from gdn.qwen35.analysis import describe, load_stages
from gdn.qwen35.errors import KINDS, CheckpointError, error_kind
from gdn.qwen35.sources import Source, folder_stamp, listing_stamp, scan_sources
from app_pages._support.caches import BOUNDS, SHARED
from app_pages._support.chrome import tr
from app_pages._support.pool import PoolTimeout, SlotPool
from app_pages._support.turn import given_up

WAIT_SECONDS = 300            # give up waiting for a slot after this long (the user can press Run again)
_held = threading.local()     # .slot: this thread holds a pool slot now


@st.cache_resource
def forward_pool() -> SlotPool:
    return SlotPool(max(1, int(os.environ.get("GDN_FORWARD_SLOTS", "1") or 1)))


@st.cache_resource
def shared_caches() -> dict[str, LRU]:
    """One LRU per namespace of caches.SHARED (what each holds, its bound and key are listed there)."""
    return {namespace: LRU(cache.bound) for namespace, cache in SHARED.items()}


def cached(namespace: str, key, compute: Callable, pin: bool = False):
    """compute() once per key (shared by all sessions), inside a pool slot; the wait is shown in the page.
    Requests that queued for the same key while it was computed take the result instead of computing it
    again. pin: keep the result out of the LRU's reach (the example prompts everyone opens first)."""
    cache = shared_caches()[namespace]              # a KeyError: add the namespace to caches.SHARED
    hit = cache.get(key)
    if hit is None:
        def once():
            ready = cache.get(key)            # computed by another session while this one waited in line
            if ready is None:
                ready = compute()
                cache.put(key, ready, pin=pin)  # before the slot is released: the next in line finds it
            return ready
        hit = in_slot(once)
    return hit


@st.cache_resource
def download_lock() -> threading.Lock:
    """One hub download at a time per server, apart from the forward-pass slots (a download of several
    GB must not make every forward pass wait)."""
    return threading.Lock()


def in_slot(compute: Callable):
    """compute() while holding a pool slot; while waiting, the page says its place in line.
    A compute that itself needs a slot (nested call, same thread) runs in the slot it already holds."""
    if getattr(_held, "slot", False):
        return compute()
    box = st.empty()
    try:
        with given_up(), forward_pool().slot(on_wait=lambda n: box.info(tr("real_model.waiting", position=n),
                                                                        icon=":material/hourglass_top:"),
                                             timeout=WAIT_SECONDS):
            box.empty()                 # the other runs go on while this one waits in line and computes
            _held.slot = True
            try:
                return compute()
            finally:
                _held.slot = False
    except PoolTimeout:
        box.error(tr("real_model.pool_timeout"), icon=":material/hourglass_disabled:")
        st.stop()


def sources() -> list[tuple[str, str, str, bool]]:
    """(label, folder, kind, random_weights) of every checkpoint folder in the allowed roots, the unusable ones
    too (`inspect` gives their reason). Re-read when the disk changes (a folder or config.json added, removed
    or rewritten: a few stat calls a run), not on a timer: a scan reads every folder's config.json."""
    return [(s.label, str(s.path), s.kind, s.random_weights) for s in _scan(listing_stamp())]


@st.cache_resource(max_entries=BOUNDS["compute._scan"], show_spinner=False)
def _scan(stamp: tuple) -> tuple[Source, ...]:
    return tuple(scan_sources())


sources.clear = _scan.clear       # after a download (the stamp would notice too, on the next run)


def inspect(folder: str) -> tuple[object, str | None, str]:
    """(gdn.qwen35.analysis.describe(folder), None, ""), or (None, why it cannot be used, the error's kind:
    gdn.qwen35.errors): the listing's reason, else describe's. Both outcomes are cached until a file of the
    folder changes, so a broken checkpoint costs one look, not one per rerun of every visitor's page."""
    listed = next((s for s in _scan(listing_stamp()) if str(s.path) == folder), None)
    if listed is not None and listed.problem is not None:
        return None, listed.problem, listed.problem_kind
    return _describe(folder, folder_stamp(folder))


@st.cache_resource(max_entries=BOUNDS["compute._describe"], show_spinner=False)
def _describe(folder: str, stamp: tuple) -> tuple[object, str | None, str]:
    try:
        return describe(folder), None, ""
    except ValueError as e:
        return None, str(e), error_kind(e)
    except Exception as e:  # noqa: BLE001 -- a file we did not foresee (RecursionError, a symlink loop...) must
        # not break the page for everyone
        return None, f"{Path(folder).name}: could not be read ({type(e).__name__}); re-download the checkpoint", "other"


def info(folder: str):
    """describe(folder), or a ValueError (a CheckpointError with its kind) saying why it cannot be used."""
    found, problem, kind = inspect(folder)
    if problem is not None:
        raise CheckpointError(kind, problem) if kind in KINDS else ValueError(problem)
    return found


@st.cache_resource(max_entries=BOUNDS["compute.model"], show_spinner=False)
def _open(folder: str):
    return load_model(folder, lazy=True)


def model(folder: str):
    """The shared model of `folder`, its weights read layer by layer with a progress bar the first time."""
    m = _open(folder)
    if any(p.is_meta for p in m.parameters()):       # not every tensor read yet (first use, or a failed try)
        in_slot(lambda: _read_weights(m))
    return m


def _read_weights(m) -> None:
    bar = st.empty()
    for stage, i, n in load_stages(m):
        text = tr("real_model.loading_layer", i=i + 1, n=n) if stage == "layer" else tr("real_model.loading_head")
        bar.progress(i / n, text=text)
    bar.empty()
