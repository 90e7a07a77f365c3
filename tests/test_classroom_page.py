"""Classroom page: exercises reveal the right answer and their demo opens the page that proves it."""
import numpy as np
import pytest

from gdn.i18n import t
from gdn.lessons.classroom import ALPHA_ZERO_STREAM, EXERCISES, GLOSSARY, HALF_BETA_STREAM, TIMELINE
from gdn.lessons.memory import replay_stream
from gdn.lessons.stream import step_records
from tests.apptest import open_app


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_exercise_reveals_and_judges(lang):
    at = open_app(lang, page="app_pages/classroom.py")
    assert not at.exception
    for ex in EXERCISES:
        wrong = (ex.answer + 1) % ex.n_options
        at.radio(key=f"classroom_pick_{ex.id}").set_value(wrong).run()
        at.button(key=f"classroom_check_{ex.id}").click().run()
    assert len(at.error) == len(EXERCISES) and not at.success
    for ex in EXERCISES:
        at.radio(key=f"classroom_pick_{ex.id}").set_value(ex.answer).run()
    assert len(at.success) == len(EXERCISES) and not at.error and not at.exception


# The right option of each exercise, by its words: catches an answer index pointing at the wrong option.
RIGHT_WORDS = {"alpha_zero": "β k vᵀ", "beta_zero": "still reads the decayed table", "no_error": "Error correction",
               "transpose": "shapes stop matching", "crossover": "256", "unit_key": "Exactly v",
               "half_beta": "(2, 2.5)", "extreme_heads": "α = 1 never forgets"}


def test_answer_indices_point_at_the_right_words():
    assert set(RIGHT_WORDS) == {ex.id for ex in EXERCISES}
    for ex in EXERCISES:
        assert RIGHT_WORDS[ex.id] in t(f"classroom.o_{ex.id}_{ex.answer}", "en", **ex.fields()), ex.id


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_right_answer_is_rarely_the_longest_option(lang):
    """A learner who always picks the longest option must not score well: the right answer is the
    longest option (ties included) in at most a quarter of the exercises, in each language."""
    longest = []
    for ex in EXERCISES:
        lengths = [len(t(f"classroom.o_{ex.id}_{i}", lang, **ex.fields())) for i in range(ex.n_options)]
        if lengths[ex.answer] == max(lengths):
            longest.append(ex.id)
    assert len(longest) <= len(EXERCISES) // 4, longest


def test_answers_are_spread_over_positions():
    assert len({ex.answer for ex in EXERCISES}) >= 3                     # not always the first / second option


def test_timeline_links_every_paper_without_fetching():
    at = open_app("en", page="app_pages/classroom.py")
    text = " ".join(m.value for m in at.markdown)
    for _year, event, arxiv_id in TIMELINE:
        assert f"[(paper: arXiv {arxiv_id})](https://arxiv.org/abs/{arxiv_id})" in text, event
    assert {a for _, _, a in TIMELINE} >= {"2102.11174", "2406.06484", "2412.06464"}   # DeltaNet, its chunked form, GDN


def test_exercise_demo_is_labelled_as_made_up_not_a_real_head():
    """The α = 0 demo is a hand-made stream: the memory page must not call it a real head."""
    ex = EXERCISES[0]
    at = open_app("en", page="app_pages/classroom.py")
    at.radio(key=f"classroom_pick_{ex.id}").set_value(ex.answer).run()
    at.button(key=f"classroom_check_{ex.id}").click().run()
    at.button(key=f"classroom_demo_{ex.id}").click().run()
    box = at.selectbox(key="memory_preset")
    assert at.session_state["memory_preset"] == "replay"
    label = [o for o in box.options if o.startswith("⑤")]               # the labels as the run drew them
    assert len(label) == 1 and "made up" in label[0] and not any("Real head" in o for o in box.options)
    assert "K" not in ALPHA_ZERO_STREAM and "K" not in HALF_BETA_STREAM


def test_reveal_without_a_prediction_asks_for_one():
    at = open_app("en", page="app_pages/classroom.py")
    at.button(key="classroom_check_beta_zero").click().run()
    assert at.warning and "Pick an answer" in at.warning[0].value


@pytest.mark.parametrize("ex", EXERCISES, ids=[e.id for e in EXERCISES])
def test_each_demo_opens_its_page_without_error(ex):
    at = open_app("en", page="app_pages/classroom.py")
    at.radio(key=f"classroom_pick_{ex.id}").set_value(ex.answer).run()
    at.button(key=f"classroom_check_{ex.id}").click().run()
    at.button(key=f"classroom_demo_{ex.id}").click().run()
    assert not at.exception
    for name, value in ex.demo.settings.items():                            # <stop>_<setting>, as the page keys them
        assert at.session_state[f"{ex.demo.page}_{name}"] == value


def test_the_demo_streams_prove_the_answers():
    rec = step_records(replay_stream(ALPHA_ZERO_STREAM))                  # alpha = 0: only beta k v^T is left
    np.testing.assert_array_equal(rec.S_new[2], np.outer([1, 0], [5, 0]))
    rec = step_records(replay_stream(HALF_BETA_STREAM))                   # beta = 0.5: halfway
    np.testing.assert_allclose(rec.output[1], [2, 2.5])
    state_bytes, kv_bytes_per_token = 16 * 128 * 128 * 2, 2 * 256 * 2 * 2  # Qwen3.5-0.8B, bf16 as it ships
    crossover = next(e for e in EXERCISES if e.id == "crossover")
    assert t(f"classroom.o_crossover_{crossover.answer}", "en", **crossover.fields()).startswith(
        str(state_bytes // kv_bytes_per_token))


def test_beta_zero_explanation_counts_tokens_from_one():
    from gdn.lessons.memory import write_and_read_2d
    s = write_and_read_2d()
    token = int(np.flatnonzero(s.beta == 0)[0]) + 1                       # the beta = 0 token, counted from 1
    np.testing.assert_array_equal(step_records(s).output[token - 1], [3, 1])
    for lang in ("en", "zh"):
        text = t("classroom.e_beta_zero", lang)
        assert f"t = {token}" in text and "(3, 1)" in text


def test_glossary_shows_both_languages():
    at = open_app("zh", page="app_pages/classroom.py")
    table = at.dataframe[0].value
    assert len(table) == len(GLOSSARY)
    assert "记忆表（状态 S）" in table.iloc[:, 0].tolist() and "memory table (state S)" in table.iloc[:, 1].tolist()
