"""The practice page in AppTest: every exercise opens in both languages, a Run is judged in a worker through the
job line and its verdict shown, a failed Run opens a hint, and the judge is off on a shared server with no
sandbox (and on then in limits mode only where the server listens on loopback alone)."""
import functools
import json
from pathlib import Path

import pytest
import streamlit as st

from gdn.i18n import t
from gdn.practice.exercises import EXERCISES
from tests.apptest import open_app

PAGE = "app_pages/practice.py"
SOLUTIONS = Path(__file__).resolve().parent / "practice_solutions"


def editor_data(at) -> dict:
    mounts = [json.loads(e.proto.json) for e in at.get("bidi_component") if '"stub"' in e.proto.json]
    assert len(mounts) == 1
    return mounts[0]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("exercise", list(EXERCISES))
def test_every_exercise_opens_with_its_statement_and_starter_file(lang, exercise):
    at = open_app(lang, page=PAGE, practice_exercise=exercise)
    assert not at.exception
    assert at.title[0].value == t("practice.title", lang)
    assert any(t(f"practice.ex_{exercise}_statement", lang)[:20] in m.value for m in at.markdown)
    data = editor_data(at)
    assert data["exercise"] == exercise and data["stub"] == EXERCISES[exercise].stub() and not data["disabled"]


def test_a_new_learner_starts_at_exercise_one():
    at = open_app("en", page=PAGE)
    first = next(iter(EXERCISES))
    assert at.selectbox(key="practice_exercise").value == first and editor_data(at)["exercise"] == first
    assert at.selectbox(key="practice_exercise").options[0].startswith("1. ")


def looked_up(answer):
    """A stand-in for runner.sandbox_problem, already looked up (functools.cache's cache_info says so)."""
    answer = functools.cache(answer)
    answer()
    return answer


def run(at, exercise: str, source: str):
    at.session_state["practice_pending"] = (exercise, source, 5)        # what the editor's Run leaves
    at.run(timeout=120)
    assert not at.exception
    return at


def test_a_run_is_judged_and_a_failed_one_opens_a_hint():
    at = open_app("en", page=PAGE, practice_exercise="gates")
    wrong = (SOLUTIONS / "gates.py").read_text().replace("return g, torch.sigmoid(b)", "return g, b")
    run(at, "gates", wrong)
    assert at.error[0].value == t("practice.summary_fail", "en", passed=0, total=2, seed=5)
    verdict = at.code[0].value
    assert "✗ two tokens, two heads" in verdict and t("practice.mistake_no_sigmoid", "en") in verdict
    assert at.session_state["practice_progress"]["gates"] == {"passed": False, "fails": 1}
    assert any(t("practice.ex_gates_hint_1", "en") in m.value for m in at.markdown)
    assert not any(t("practice.ex_gates_hint_2", "en") in m.value for m in at.markdown)
    run(at, "gates", (SOLUTIONS / "gates.py").read_text())
    assert at.success[0].value == t("practice.summary_pass", "en", total=2, seed=5)
    assert at.session_state["practice_progress"]["gates"]["passed"]
    assert "practice_pending" not in at.session_state


def test_a_shared_server_without_a_sandbox_turns_the_judge_off(monkeypatch):
    from app_pages import _practice
    monkeypatch.setattr(_practice, "sandbox_problem", looked_up(lambda: "bubblewrap is not installed"))
    monkeypatch.setattr(_practice, "sandbox_installed", lambda: False)
    at = open_app("zh", page=PAGE)
    assert at.warning and t("practice.off_missing", "zh") in at.warning[0].value
    assert editor_data(at)["disabled"]
    at.session_state["practice_pending"] = (at.selectbox(key="practice_exercise").value, "raise SystemExit", 1)
    at.run()
    assert not at.code and "practice_verdicts" not in at.session_state


def test_limits_mode_only_where_the_server_listens_on_loopback_alone(monkeypatch):
    from app_pages import _practice
    monkeypatch.setattr(_practice, "sandbox_problem", looked_up(lambda: "no user namespaces"))
    monkeypatch.setattr(_practice, "sandbox_installed", lambda: True)
    monkeypatch.delenv(_practice.SHARED_SERVER, raising=False)
    options = {"server.address": "127.0.0.1"}
    real = st.get_option
    monkeypatch.setattr(_practice.st, "get_option", lambda name: options.get(name, real(name)))
    mode, why = _practice.judge_mode()
    assert mode == "limits" and "`no user namespaces`" in why
    monkeypatch.setenv(_practice.SHARED_SERVER, "1")                    # a replica behind serve-class's nginx
    assert _practice.judge_mode()[0] is None
    monkeypatch.delenv(_practice.SHARED_SERVER)
    options["server.address"] = "0.0.0.0"
    assert _practice.judge_mode()[0] is None
    options["server.address"] = None                                    # Streamlit's default: every address
    assert _practice.judge_mode()[0] is None
    monkeypatch.setattr(_practice, "sandbox_problem", looked_up(lambda: None))
    assert _practice.judge_mode() == ("sandbox", "")
