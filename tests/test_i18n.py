"""Both languages have the same strings, with the same {fields}, and every key the code uses exists."""
import re
import string
from pathlib import Path

import pytest

from gdn.i18n import I18N_DIR, LANGS, pick_language, t, table

ROOT = Path(__file__).resolve().parent.parent


def fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_same_namespaces_and_keys_in_every_language():
    files = {lang: sorted(p.name for p in (I18N_DIR / lang).glob("*.json")) for lang in LANGS}
    assert "glossary.json" in files["zh"]
    assert files["zh"] == files["en"]
    assert table("zh").keys() == table("en").keys()


def test_same_format_fields_and_no_empty_strings():
    zh, en = table("zh"), table("en")
    for key in en:
        assert fields(zh[key]) == fields(en[key]), key
        assert zh[key].strip() and en[key].strip(), key


def test_chinese_table_is_chinese():
    zh = table("zh")
    has_cjk = [k for k, v in zh.items() if re.search(r"[\u4e00-\u9fff]", v)]
    assert len(has_cjk) > 0.6 * len(zh)


def test_every_literal_key_used_in_the_code_exists():
    used = set()
    for path in list(ROOT.rglob("app_pages/**/*.py")) + [ROOT / "app.py"]:
        used |= set(re.findall(r"""\btr\(\s*["']([a-z_]+\.[A-Za-z0-9_]+)["']\s*[,)]""", path.read_text(encoding="utf-8")))
    assert used, "no tr() calls found"
    missing = sorted(k for k in used if k not in table("en"))
    assert not missing, missing


def test_language_choice():
    assert pick_language("en", "zh-CN") == "en"
    assert pick_language(None, "zh-CN") == "zh"
    assert pick_language("fr", "en-US") == "en"
    assert pick_language(None, None) == "zh"
    assert t("common.step_of", "en", step=2, total=9).startswith("Step 2 of 9")
    with pytest.raises(ValueError):
        table("fr")


# Texts that describe the loaded model, the kernel or a live experiment take their numbers as {fields}:
# a literal here was wrong for both shipped models (K = V = 32) and drifted from the code's constants.
MODEL_AND_KERNEL_TEXTS = ["chunking.speed_note", "chunking.l_chunk", "memory.story_replay", "real_model.check_explain",
                          "real_model.replay_explain", "classroom.q_crossover", "classroom.e_crossover",
                          "classroom.notes_cost", "playground.cap_protocol",
                          *(f"classroom.o_crossover_{i}" for i in range(3))]


@pytest.mark.parametrize("lang", LANGS)
def test_sizes_and_constants_are_fields_not_literals(lang):
    strings = table(lang)
    for key in MODEL_AND_KERNEL_TEXTS:
        text = re.sub(r"\{[^}]*\}", "", strings[key])
        assert not re.findall(r"(?<![\w.])(?:16|32|64|128|256|4,?096|8,?192)(?![\w.])", text), (key, text)



@pytest.mark.parametrize("lang", LANGS)
def test_widgets_show_no_raw_tex(lang):
    """A widget's label or option renders plain text (no KaTeX): the live class's picker and the phone's
    buttons write each question's and option's $math$ out ($d_k \\neq d_v$ -> dₖ ≠ dᵥ)."""
    from app_pages._live import EXERCISES, option_words, plain_math, question_words

    assert plain_math(r"为什么 $d_k \neq d_v$ 时，$S^\top k$") == "为什么 dₖ ≠ dᵥ 时，Sᵀ k"
    shown = [s for ex in EXERCISES for s in (question_words(ex, lang), *option_words(ex, lang))]
    assert any("≠" in s for s in shown)
    assert not [s for s in shown if re.search(r"[$\\]", s)]


def test_the_phones_marks_use_the_pages_punctuation():
    marks = {lang: t("live.marks", lang, marks=t("live.marks_sep", lang).join([t("live.right_mark", lang),
                                                                               t("live.mine_mark", lang)]))
             for lang in LANGS}
    assert marks["zh"] == "（正确答案，你的答案）"
    assert marks["en"] == "  (right, your answer)"
