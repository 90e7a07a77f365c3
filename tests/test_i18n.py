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


# A Chinese string may keep Latin names and symbols (DeltaNet, softmax, KV, exp(…), {fields}, $math$, <sub>),
# not English prose. Its lowercase English words (not a call like exp(, not inside a field, $…$, a tag or
# `code`) are prose; a string is untranslated when it has PROSE_WORDS of them or more and fewer than
# CJK_PER_WORD Chinese characters per word (the most English kept string: 3 words, 20 characters), or when it
# has no Chinese at all and a Latin word that is not in LATIN_ONLY (the names a string may be alone).
PROSE_WORDS, CJK_PER_WORD = 3, 3
LATIN_ONLY = {"DeltaNet", "English", "cos"}
CJK = r"[\u4e00-\u9fff]"


def untranslated(zh: dict[str, str]) -> list[str]:
    """The keys of `zh` whose strings read as English, by the rule above."""
    bad = []
    for key, text in zh.items():
        bare = re.sub(r"\{[^}]*\}|\$[^$]*\$|<[^>]*>|`[^`]*`|\S+://\S+", " ", text)
        prose = re.findall(r"(?<![\w.])[a-z]{2,}(?![\w(.])", bare)
        cjk = len(re.findall(CJK, bare))
        names = set(re.findall(r"(?<![\w.])[A-Za-z]{2,}(?![\w(])", bare))
        if (len(prose) >= PROSE_WORDS and cjk < CJK_PER_WORD * len(prose)) or (not cjk and names - LATIN_ONLY):
            bad.append(key)
    return bad


def test_chinese_table_is_chinese():
    zh = table("zh")
    assert not untranslated(zh), {k: zh[k] for k in untranslated(zh)}
    has_cjk = [k for k, v in zh.items() if re.search(CJK, v)]
    assert len(has_cjk) > 0.9 * len(zh)           # the rest are formulas, symbols and names (49 of 1008)


def test_the_chinese_check_catches_untranslated_strings():
    """Planted: a table where 60 % of the strings hold Chinese (the old bar) but three are English prose,
    one with a Chinese word in it; the formulas and names the real table keeps alone pass."""
    planted = {f"ok{i}": "衰减门 α 是每个词元之后表里留下的比例" for i in range(6)} | {
        "english": "The memory table decays by α after every token.",
        "mixed": "The memory table decays by α after every token（衰减）.",
        "label": "Decay gate",
        "formula": "g = −exp(A_log) · softplus(a + dt_bias)<br>α = exp(g)",
        "name": "DeltaNet", "symbols": "‖S_t‖ = {s}", "mixed_ok": "带上记忆表对比一次调用：logits 的 max |Δ| 为 {x}",
    }
    assert sorted(untranslated(planted)) == ["english", "label", "mixed"]
    has_cjk = [k for k, v in planted.items() if re.search(CJK, v)]
    assert len(has_cjk) > 0.6 * len(planted)     # the old check alone passed this table


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
