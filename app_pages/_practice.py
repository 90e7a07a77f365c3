"""The practice page's parts: whether the judge may run here, the editor and progress components, the run
through the heavy-work line, and the verdict.

Where the judge runs (docs/practice.md): learner code never runs in the Streamlit process. It goes through
the job line (app_pages/_support/jobs.py) to a worker, which starts a child for it: inside bubblewrap
whenever bubblewrap works here; with limits only when this server listens on this computer alone (its
address is loopback and no class server started it); otherwise nowhere, and the page says how to turn it on.
"""
from __future__ import annotations

import os
import random

import streamlit as st

from gdn.practice.exercises import EXERCISES
from gdn.practice.runner import sandbox_installed, sandbox_problem
from gdn.practice.verdict import words
from app_pages._support import compute, ui, work
from app_pages._support.pack import component_js
from app_pages._support.turn import given_up

EDITOR_JS = component_js("practice/editor.js", css="practice/editor.css", css_name="EDITOR_CSS")
PROGRESS_JS = (ui.ASSETS / "practice" / "progress.js").read_text(encoding="utf-8")
# drawn into the page (no shadow root): the editor's stylesheet rides in its script, like the explorer's
_editor = st.components.v2.component("gdn_practice_editor", js=EDITOR_JS, isolate_styles=False)
_progress = st.components.v2.component("gdn_practice_progress", js=PROGRESS_JS)
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
RELABEL = "_practice_relabel"
SHARED_SERVER = "GDN_SHARED_SERVER"      # set by deploy/serve_class.py and the container: never judge unsandboxed


def judge_mode() -> tuple[str | None, str]:
    """("sandbox" | "limits" | None, why there is no sandbox, in the page's words): None turns the judge off."""
    if sandbox_problem.cache_info().currsize == 0:
        with given_up():                    # the first look starts Python in bubblewrap (~1 s): others' runs go on
            sandbox_problem()
    problem = sandbox_problem()
    if problem is None:
        return "sandbox", ""
    address = (st.get_option("server.address") or "").strip()
    alone = address in LOOPBACK and not os.environ.get(SHARED_SERVER)
    why = ui.tr("practice.off_missing") if not sandbox_installed() else (
        ui.tr("practice.off_no_start") + f" (`{problem[-200:].replace('`', '')}`)")
    return ("limits" if alone else None), why


def progress() -> dict:
    """{exercise: {"passed": bool, "fails": int}}: this session's, merged with what the browser kept."""
    return st.session_state.setdefault("practice_progress", {})


def keep_progress() -> None:
    """The browser keeps the progress (assets/practice/progress.js); a fresh session gets it back from there,
    checked (known exercises, a pass is True, a count of failed runs is a small int), and the page is drawn
    again with it (its picker marks and hints come before this component)."""
    sent = progress()
    result = _progress(key="_practice_progress", data={"progress": sent}, on_progress_change=lambda: None, height=0)
    kept = result.get("progress") if result is not None else None
    changed = st.session_state.pop("_practice_passed_now", False)
    for eid, p in kept.items() if isinstance(kept, dict) else ():
        if eid not in EXERCISES or not isinstance(p, dict):
            continue
        before = sent.get(eid, {"passed": False, "fails": 0})
        fails = p.get("fails") if isinstance(p.get("fails"), int) and not isinstance(p.get("fails"), bool) else 0
        now = {"passed": before["passed"] or p.get("passed") is True, "fails": max(before["fails"], min(fails, 99))}
        changed |= now != before
        sent[eid] = now
    if changed:
        st.session_state[RELABEL] = True
        st.rerun()


def relabel_picker() -> None:
    """Before the picker: after a pass or a restored progress, its labels gain a ✓, and a choice widget shows a
    new label only when its value is written from code (url_state.relabel_after_language_switch: the same)."""
    if st.session_state.pop(RELABEL, False) and "practice_exercise" in st.session_state:
        st.session_state["practice_exercise"] = st.session_state["practice_exercise"]


def exercise_labels():
    """format_func for the exercise picker: "3. The gates · easy ✓", its language and progress taken now (the
    picker may call it later, outside this run)."""
    labels = {eid: f"{n}. {ui.tr(f'practice.ex_{eid}_title')} · {ui.tr(f'practice.level_{e.level}')}"
                   + (" ✓" if progress().get(eid, {}).get("passed") else "")
              for n, (eid, e) in enumerate(EXERCISES.items(), 1)}
    return labels.get


def statement(eid: str) -> None:
    st.markdown(ui.tr(f"practice.ex_{eid}_statement"))
    with st.expander(ui.tr("practice.examples_title"), icon=":material/lightbulb:", expanded=not ui.lecture()):
        st.markdown(ui.tr(f"practice.ex_{eid}_examples"))


def editor(eid: str, disabled: bool) -> None:
    """The editor; a Run pressed in it (the code, sent by the browser) becomes this session's pending Run."""
    n = list(EXERCISES).index(eid) + 1
    # the editor shows plain text: the help's `key names` lose their code marks
    words_ = {"label": ui.tr("practice.editor_label", n=n), "help": ui.tr("practice.editor_help").replace("`", ""),
              "run": ui.tr("practice.run"), "reset": ui.tr("practice.reset")}
    result = _editor(key="_practice_editor", data={"exercise": eid, "stub": EXERCISES[eid].stub(), "words": words_,
                                                   "lecture": ui.lecture(), "disabled": disabled},
                     on_run_change=lambda: None)
    sent = result.get("run") if result is not None else None
    if not disabled and isinstance(sent, dict) and isinstance(sent.get("code"), str):
        st.session_state["practice_pending"] = (eid, sent["code"], random.randrange(1, 10_000))


def run_pending(mode: str) -> None:
    """The learner's last Run, judged in a worker (its place in line shown while it waits)."""
    eid, code, seed = st.session_state.pop("practice_pending")      # judged once, whatever happens to it
    with st.spinner(ui.tr("practice.running")):
        verdict = compute.run_job("practice.judge", None, work.judge, eid, code, mode == "sandbox", seed)
    st.session_state.setdefault("practice_verdicts", {})[eid] = verdict
    mine = progress().setdefault(eid, {"passed": False, "fails": 0})
    if verdict.passed:
        st.session_state["_practice_passed_now"] = not mine["passed"]
        mine["passed"] = True
    else:
        mine["fails"] += 1


def verdict_view(eid: str) -> None:
    verdict = st.session_state.get("practice_verdicts", {}).get(eid)
    if verdict is None:
        return
    with st.container(key="practice_verdict"):
        verdict_lines(verdict)


def verdict_lines(verdict) -> None:
    st.subheader(ui.tr("practice.verdict_title"))
    said = words(verdict, ui.lang())
    (st.success if verdict.passed else st.error)(said[-1], icon=":material/check_circle:" if verdict.passed
                                                 else ":material/error:")
    # plain text in a code block: the learner's own messages and lines are shown as they are, never as markdown
    st.code("\n".join(said[:-1]), language=None, wrap_lines=True)
    if verdict.printed:
        with st.expander(ui.tr("practice.printed_title"), icon=":material/terminal:"):
            st.code(verdict.printed, language=None)


def hints_view(eid: str) -> None:
    total, fails = EXERCISES[eid].hints, progress().get(eid, {}).get("fails", 0)
    opened = total if progress().get(eid, {}).get("passed") else min(total, fails)
    with st.expander(ui.tr("practice.hints_title"), icon=":material/tips_and_updates:", expanded=0 < opened < total):
        for i in range(1, opened + 1):
            st.markdown(f"**{ui.tr('practice.hint_n', n=i)}** · " + ui.tr(f"practice.ex_{eid}_hint_{i}"))
        if opened < total:
            st.caption(ui.tr("practice.hint_locked"))
