"""Predict, then reveal: a hint box that asks for a result shows the question and keeps the result behind
"Show the answer" (an expander; a popover in lecture mode, where the note itself is folded)."""
import re

import numpy as np
import pytest

from gdn.i18n import LANGS, t, table
from gdn.lessons.memory import write_and_read_2d
from gdn.lessons.stream import step_records
from tests.apptest import open_app, player_payload

TUPLE = re.compile(r"[（(]\s*−?[\d.]+\s*[,，]\s*−?[\d.]+\s*[)）]|\d+\s*%|\d+\.\d+")   # a reading, a share or a number


@pytest.mark.parametrize("lang", LANGS)
def test_every_answer_gives_a_result_its_question_keeps_back(lang):
    strings = table(lang)
    answers = [k for k in strings if k.endswith("_answer") and k.removesuffix("_answer") in strings]
    assert len(answers) >= 7
    for key in answers:
        question, answer = strings[key.removesuffix("_answer")], strings[key]
        assert re.search(r"[?？]|Predict|预测", question), (key, "the hint asks nothing")
        assert TUPLE.search(answer), (key, "the answer states no reading")
        sentences = [x.strip() for x in re.split(r"[.;。；]", answer) if len(x.strip()) > 8]
        assert not any(x in question for x in sentences), (key, "the question already says it")


def _expanders(at):
    return {e.label: " ".join(m.value for m in e.markdown) for e in at.expander}


@pytest.mark.parametrize("lang", LANGS)
def test_memory_hint_hides_the_reading_of_q(lang):
    s = write_and_read_2d()
    out = step_records(s).output
    q_read = next(o for o in out if np.allclose(o, 0.6 * np.array([3, 1]) + 0.8 * np.array([-1, 2])))   # (1.0, 2.2)
    shown = f"({q_read[0]:.1f}, {q_read[1]:.1f})"
    at = open_app(lang, "app_pages/memory_table.py")
    box = at.info[0].value
    assert "(0.6, 0.8)" in box and shown not in box                               # the question, not the result
    assert shown in _expanders(at)[t("common.reveal", lang)]


@pytest.mark.parametrize("lang", LANGS)
def test_compare_hint_hides_the_three_readings(lang):
    """The compare stories travel with the player's variants (HTML); the readings sit in a closed <details>."""
    at = open_app(lang, "app_pages/compare.py")
    data, _ = player_payload(at, "compare_player")
    story = next(v["story"] for v in data["variants"] if v["name"] == "rules")
    question, _, revealed = story.partition("<details")
    assert "(5,0)" in question and "(8, 1)" not in question and "(5, 0)" not in question
    assert f"<summary>{t('common.reveal', lang)}</summary>" in revealed and " open" not in revealed.split(">")[0]
    assert "(8, 1)" in revealed and "(5, 0)" in revealed


def test_lecture_mode_keeps_the_answer_behind_a_popover():
    at = open_app("en", "app_pages/memory_table.py", mode="lecture")
    notes = next(e for e in at.expander if e.label == t("common.notes", "en"))
    assert "(0.6, 0.8)" in " ".join(m.value for m in notes.markdown)
    popover = at.get("popover")
    assert popover and popover[0].proto.popover.label == t("common.reveal", "en")
    assert "(1.0, 2.2)" in " ".join(m.value for m in popover[0].markdown)
