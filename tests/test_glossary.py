"""One word for each term, one language per page: every string of the tables and every text the pages build
is checked against the language's glossary (assets/i18n/<lang>/glossary.json, through tests/visible_text.py)."""
import re
from pathlib import Path

import pytest

from gdn.i18n import LANGS, glossary, table
from tests.apptest import open_app
from tests.visible_text import html_texts, problems, prose

PAGES = sorted(p.stem for p in (Path(__file__).resolve().parent.parent / "app_pages").glob("[a-z]*.py"))


def test_the_checker_finds_each_kind_of_mistake():
    """Each rule, on a sentence that breaks it and one that does not (else the page tests below prove nothing)."""
    assert problems("每个 token 的键", "zh") and not problems("每个词元的键", "zh")
    assert problems("每个token", "zh")                              # no space between the two scripts
    assert problems("Gated DeltaNet 的状态", "zh") and not problems("门控 DeltaNet 的状态", "zh")
    assert problems("千问 3.5 的层", "zh") and not problems("Qwen3.5 的层", "zh")
    assert problems("键维度", "zh") and not problems("键维", "zh")
    assert problems("表的 state 很大", "zh")                          # English that is no name
    assert not problems("softmax 注意力，`out_proj` 与 $S^\\top k$，{token} 个", "zh")   # names, code, math, fields
    assert problems("the key dimension", "en") and not problems("the key dim", "en")
    assert problems("two calls: 无", "en") and not problems("two calls: none", "en")
    assert not problems("中文", "en", key="classroom.col_zh")         # the bilingual glossary's column
    assert problems("delta 规则", "zh") and not problems("增量规则", "zh")
    assert problems("S = αS(I − βkkᵀ) + βkvᵀ", "en") and not problems("S_t = α_t (I − β_t k_t k_tᵀ) S_{t−1} + β_t k_t v_tᵀ", "en")
    assert problems("measured by bench/bench_chunking_curve.py on a 2-core x86_64 CPU (Intel(R) Xeon(R))", "en")
    assert problems("尺寸取自 assets/qwen35_sizes.json", "zh") and not problems("放进 `assets/models` 文件夹", "zh")
    assert html_texts('<b title="头 1">a</b><script>var x = "词元"</script>') == ["头 1", "a"]
    assert prose("{n} 个 $d_k$ 与 `x_y`").split() == ["个", "与"]


# One planted variant of each term the glossaries name, and the canonical word beside it (issue 37, item 6).
PLANTED = {
    "zh": [("α（保留比例）", "衰减门 α"), ("α 是保留率", "衰减门 α"), ("遗忘门 α", "衰减门 α"), ("先让它衰减（α）", "先按衰减门 α 衰减"),
           ("a 变成衰减 α", "a 变成衰减门 α"), ("状态矩阵 S", "记忆表 S"), ("门控 DeltaNet 的状态 S", "门控 DeltaNet 的记忆表 S"),
           ("1 层门控注意力", "1 个全注意力层"), ("一个注意力层", "一个全注意力层"),
           ("3 层 GDN 配 1 层注意力", "3 个 GDN 层配 1 个全注意力层"),
           ("随附模型", "演示模型"), ("随附的训练过的演示模型", "训练过的演示模型"), ("键–值对", "键值对"), ("键-值对", "键值对")],
    "en": [("the forget gate α", "the decay gate α"), ("α's retention", "the decay gate α"), ("the decay α", "the decay gate α"),
           ("α is the fraction kept", "α is the decay gate"), ("the state matrix S", "the memory table S"),
           ("layer 4 · gated attention", "layer 4 · full attention"), ("one attention layer", "one full-attention layer"),
           ("3 GDN : 1 attention", "3 GDN : 1 full-attention layer"), ("the full attention layers", "the full-attention layers"),
           ("the shipped model", "the demo model"), ("the shipped trained demo", "the trained demo model"),
           ("key-value pairs", "key–value pairs")],
}


@pytest.mark.parametrize("lang", LANGS)
def test_a_planted_variant_is_rejected(lang):
    for variant, word in PLANTED[lang]:
        assert problems(variant, lang), variant
        assert not problems(word, lang), word
    assert problems("记忆表（状态 S）", "zh") and not problems("记忆表（状态 S）", "zh", key="classroom.term_memory_table")


def first_use_problems(texts: list[str], lang: str) -> list[str]:
    """The glossary's first_use rules on one page's texts, in the order the page draws them: a page that says
    `when` (KDA, 状态) has said `with` (its explanation) at or before the first text that says it."""
    bad = []
    for name, rule in glossary(lang).get("first_use", {}).items():
        said = next((i for i, text in enumerate(texts) if re.search(rule["when"], prose(text), re.ASCII)), None)
        explained = next((i for i, text in enumerate(texts) if rule["with"] in text), None)
        if said is not None and (explained is None or explained > said):
            bad.append(f"{name}: {texts[said][:80]!r} before {rule['with']!r}")
    return bad


def test_first_use_is_checked():
    assert first_use_problems(["逐键维 α（KDA）", "KDA（Kimi Delta Attention，2025）"], "zh")
    assert not first_use_problems(["KDA（Kimi Delta Attention，2025）", "逐键维 α（KDA）"], "zh")
    assert first_use_problems(["固定的状态"], "zh") and not first_use_problems(["记忆表（状态）", "固定的状态"], "zh")
    assert not first_use_problems(["线性 RNN 的状态追踪"], "zh")
    assert first_use_problems(["α per key dim (KDA)"], "en")


@pytest.mark.parametrize("lang", LANGS)
def test_every_term_has_one_word(lang):
    terms = glossary(lang)["terms"]
    for name, term in terms.items():
        assert term["use"] and term["not"], name
        assert not any(re.search(v, term["use"], re.ASCII) for v in term["not"]), name   # the word is not a variant


@pytest.mark.parametrize("lang", LANGS)
def test_every_string_uses_the_glossary_and_the_page_language(lang):
    bad = {key: found for key, text in table(lang).items() if (found := problems(text, lang, key))}
    assert not bad, bad


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", PAGES)
def test_what_each_page_shows(lang, page):
    """The strings a page builds (figure labels, hovers, table cells, frames, options) follow the same rules:
    walked from what the page drew, not from the tables."""
    from tests.visible_text import visible_texts

    at = open_app(lang, f"app_pages/{page}.py")
    assert not at.exception
    texts = visible_texts(at)
    assert len(texts) > 10
    other = "en" if lang == "zh" else "zh"
    allowed = {text for key, text in table(other).items() if key.startswith(glossary(lang)["bilingual_glossary"])}
    allowed |= {table(lang)[k] for k in glossary(lang).get("allowed_cjk", ())}
    # a string a term allows by its key (the bilingual glossary naming a variant on purpose) is checked as that key
    keys = {table(lang)[k]: k for term in glossary(lang)["terms"].values() for k in term.get("allowed_in", ())}
    bad = sorted({(text[:120], *found) for text in texts
                  if text not in allowed and (found := problems(text, lang, keys.get(text)))})
    assert not bad, bad
    assert not (late := first_use_problems(texts, lang)), late
