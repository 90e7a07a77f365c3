"""Synthetic bilingual tasks for the trained demo model, and the tokenizer built for them.

Every example is one language (English or Chinese), words separated by spaces so each word is one
token, and made of up to three parts:

    recall:  facts "apple is red ." with filler words between them; some keys are later RE-ASSIGNED
             ("apple is jade ."), then queries "ask apple ? jade ." must return the LATEST value.
    switch:  the marker "###" starts a new topic: facts before it no longer count. Queries after it
             answer a key re-defined after the marker with its new value, and a key defined only
             before the marker with "none" (无).
    copy:    "copy : red tiger gold > red tiger gold ." repeats a short span.

Only the tokens a reader could predict (answers and copied tokens) are trained on (`Example.target`).
Roles (`Example.roles`) name what each token is, so gate statistics can compare values with filler.

    tok = build_tokenizer()
    ex = make_example(random.Random(0), "en")
    ids = encode_words(tok, ex.words)        # one id per word (checked)
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from tokenizers import Tokenizer

from gdn.qwen35.demo.bpe import train_bpe

PAD = "<|endoftext|>"
TOKENIZER_VOCAB = 1024

WORDS = {
    "en": dict(
        keys="apple river tiger candle mirror violin rocket garden pencil island hammer jacket ladder lemon "
             "magnet needle planet rabbit saddle tunnel wallet yacht zebra castle".split(),
        values="red blue green gold pink gray black white brown silver purple amber coral jade ivory teal".split(),
        filler="the and then so well also we saw it was very quite just now".split(),
        is_="is", end=".", ask="ask", q="?", none="none", copy="copy", colon=":", arrow=">"),
    "zh": dict(
        keys="猫 狗 鱼 鸟 马 牛 羊 虎 山 河 湖 海 门 窗 桌 椅 书 笔 灯 钟 船 车 桥 塔".split(),
        values="红 蓝 绿 金 粉 灰 黑 白 棕 银 紫 橙 青 黄 玉 铜".split(),
        filler="然后 我们 看到 就 也 很 还 那 于是 今天 好像 其实 刚才 一直".split(),
        is_="是", end="。", ask="问", q="？", none="无", copy="抄", colon="：", arrow=">"),
}
SWITCH = "###"
LANGS = ("en", "zh")


@dataclass
class Example:
    lang: str
    words: list[str] = field(default_factory=list)    # surface words (one token each)
    roles: list[str] = field(default_factory=list)    # key | value | filler | switch | answer | copy | struct
    target: list[bool] = field(default_factory=list)  # True: this token is predictable (trained on)
    # (position of the "?" token, answer word, kind) per query; kind: latest | reassigned | none | new
    queries: list[tuple[int, str, str]] = field(default_factory=list)

    def add(self, word: str, role: str, target: bool = False) -> int:
        self.words.append(word)
        self.roles.append(role)
        self.target.append(target)
        return len(self.words) - 1

    @property
    def text(self) -> str:
        return " ".join(self.words)


def _facts(ex: Example, w: dict, rng: random.Random, pairs: list[tuple[str, str]]) -> None:
    for key, value in pairs:
        for _ in range(rng.randint(0, 2)):
            ex.add(rng.choice(w["filler"]), "filler")
        ex.add(key, "key")
        ex.add(w["is_"], "struct")
        ex.add(value, "value")
        ex.add(w["end"], "struct")


def _query(ex: Example, w: dict, key: str, answer: str, kind: str) -> None:
    ex.add(w["ask"], "struct")
    ex.add(key, "key")
    pos = ex.add(w["q"], "struct")
    ex.add(answer, "answer", target=True)
    ex.add(w["end"], "struct")
    ex.queries.append((pos, answer, kind))


def make_example(rng: random.Random, lang: str) -> Example:
    """One example of about 30-100 tokens: recall with re-assignment, then maybe a switch, maybe a copy."""
    w, ex = WORDS[lang], Example(lang)
    keys = rng.sample(w["keys"], rng.randint(3, 5))
    facts = {k: rng.choice(w["values"]) for k in keys}
    _facts(ex, w, rng, list(facts.items()))
    reassigned = rng.sample(keys, rng.randint(1, 2))
    for k in reassigned:
        facts[k] = rng.choice([v for v in w["values"] if v != facts[k]])
    _facts(ex, w, rng, [(k, facts[k]) for k in reassigned])
    asked = rng.sample(reassigned, min(2, len(reassigned)))
    asked += rng.sample([k for k in keys if k not in asked], 1)
    rng.shuffle(asked)
    for k in asked:
        _query(ex, w, k, facts[k], "reassigned" if k in reassigned else "latest")
    if rng.random() < 0.7:
        ex.add(SWITCH, "switch")
        reused = rng.sample(keys, rng.randint(1, 2))
        fresh = rng.sample([k for k in w["keys"] if k not in keys], rng.randint(1, 2))
        new = {k: rng.choice(w["values"]) for k in reused + fresh}
        items = list(new.items())
        rng.shuffle(items)
        _facts(ex, w, rng, items)
        old_only = [k for k in keys if k not in new]
        asked = [(k, new[k], "new") for k in rng.sample(list(new), min(2, len(new)))]
        asked += [(k, w["none"], "none") for k in rng.sample(old_only, min(1, len(old_only)))]
        rng.shuffle(asked)
        for k, answer, kind in asked:
            _query(ex, w, k, answer, kind)
    if rng.random() < 0.6:
        span = [rng.choice(w["values"] + w["keys"]) for _ in range(rng.randint(2, 4))]
        ex.add(w["copy"], "struct")
        ex.add(w["colon"], "struct")
        for s in span:
            ex.add(s, "copy")
        ex.add(w["arrow"], "struct")
        for s in span:
            ex.add(s, "copy", target=True)
        ex.add(w["end"], "struct")
    return ex


def vocabulary() -> list[str]:
    """Every word the tasks use (each must be one token)."""
    out = [SWITCH]
    for w in WORDS.values():
        out += w["keys"] + w["values"] + w["filler"]
        out += [w[k] for k in ("is_", "end", "ask", "q", "none", "copy", "colon", "arrow")]
    return list(dict.fromkeys(out))


def build_tokenizer() -> Tokenizer:
    """Byte-level BPE like Qwen3.5's (same split regex, NFC, no byte fallback), trained on task text
    plus a few plain sentences, so every task word (with its leading space) is a single token."""
    rng = random.Random(1234)
    lines = [" " + make_example(rng, LANGS[i % 2]).text for i in range(400)]
    lines += [" " + " ".join(vocabulary())] * 20
    return train_bpe(lines, TOKENIZER_VOCAB)


def encode_words(tok: Tokenizer, words: list[str]) -> list[int]:
    """Ids of " w1 w2 ...", one per word; ValueError if a word is not a single token."""
    ids = tok.encode(" " + " ".join(words)).ids
    if len(ids) != len(words):
        raise ValueError(f"{len(words)} words became {len(ids)} tokens: the tokenizer does not match the tasks")
    return ids
