"""Every user-facing string, in Simplified Chinese and English.

The tables live in assets/i18n/<lang>/<namespace>.json (one namespace per page, plus "common"), so
pages can be translated and reviewed on their own. A key is "<namespace>.<name>", e.g. "memory.title".
Strings may hold str.format fields: t("memory.step", "en", t=3) fills {t}. Beside the tables, each language has
a glossary (assets/i18n/<lang>/glossary.json): the one word for each term and the variants no page may show.
"""
from __future__ import annotations

import json
from functools import cache
from pathlib import Path

LANGS = ("zh", "en")
DEFAULT_LANG = "zh"
I18N_DIR = Path(__file__).resolve().parent.parent / "assets" / "i18n"
PROMPTS_FILE = I18N_DIR.parent / "prompts" / "real_model.json"
GLOSSARY = "glossary"          # assets/i18n/<lang>/glossary.json: not a string table


@cache
def table(lang: str) -> dict[str, str]:
    """All strings of one language, keyed "<namespace>.<name>"."""
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}; choose one of {LANGS}")
    strings = {}
    for path in sorted((I18N_DIR / lang).glob("*.json")):
        if path.stem == GLOSSARY:
            continue
        for name, text in json.loads(path.read_text(encoding="utf-8")).items():
            strings[f"{path.stem}.{name}"] = text
    return strings


@cache
def glossary(lang: str) -> dict:
    """One language's glossary: terms (each {"use": the word, "not": regexes of variants, "allowed_in": keys}),
    and the Latin names a Chinese page may show ("names") or the keys an English page may show Chinese in."""
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}; choose one of {LANGS}")
    return json.loads((I18N_DIR / lang / f"{GLOSSARY}.json").read_text(encoding="utf-8"))


@cache
def _prompts() -> dict[str, dict[str, str]]:
    return {name: texts for name, texts in json.loads(PROMPTS_FILE.read_text(encoding="utf-8")).items()
            if not name.startswith("_")}


def prompt(name: str, lang: str) -> str:
    """One example prompt of the real-model page (assets/prompts/real_model.json: "recall", "switch", ...)
    in `lang`: the start and compare pages reuse its "recall". A missing name is a bug: KeyError."""
    return _prompts()[name][lang]


def prompt_names() -> tuple[str, ...]:
    """The example prompts, in the file's order."""
    return tuple(_prompts())


def t(key: str, lang: str, **fields) -> str:
    """The string for `key` in `lang`, with {fields} filled. A missing key is a bug: KeyError."""
    text = table(lang)[key]
    return text.format(**fields) if fields else text


def pick_language(requested: str | None, locale: str | None) -> str:
    """?lang= wins when valid; otherwise the browser locale (zh-* -> zh, anything else -> en)."""
    if requested in LANGS:
        return requested
    if locale:
        return "zh" if locale.lower().startswith("zh") else "en"
    return DEFAULT_LANG
