"""What a page shows a person, as plain strings, and what is wrong with a string in a language.

visible_texts(at) walks every element an AppTest run drew and keeps the text a reader sees (or hears from a
screen reader, or gets as a tooltip): markdown, labels, options, help, metrics, table cells, HTML text and its
title / aria-label / alt attributes (never its script, style or class names), Plotly figures' titles, axis
titles, tick labels, annotations, trace names, texts and hover templates, and the frame players' narration
and frames. problems(text, lang) checks one string against that language's glossary (assets/i18n/<lang>/
glossary.json): a forbidden variant of a term, English words on a Chinese page (names and code aside),
Chinese characters on an English page.
"""
from __future__ import annotations

import base64
import gzip
import json
import re
from html.parser import HTMLParser

from google.protobuf.message import Message

from gdn.i18n import glossary
from tests.apptest import with_payload

CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")
# Text that is not prose: {fields}, $math$, `code`, plotly's %{placeholders}, links, file names, HTML entities.
NOT_PROSE = [r"%\{[^}]*\}", r"\{[^}]*\}", r"\$\$.*?\$\$", r"\$[^$]*\$", r"`[^`]*`", r"https?://\S+",
             r"\]\([^)]*\)", r"[\w./-]+\.(?:json|py|md|csv|html|safetensors|png|txt|js|css)\b", r"&\w+;", r"&#\d+;"]
# A machine's or a developer's words, which belong in the files, not in front of a class: repository paths,
# scripts, home folders, CPU model names. `code` in backticks (a setting an operator types) is allowed.
MACHINE = re.compile(r"\b(?:assets|bench|gdn|app_pages|tests|devtools)/|/(?:root|home|tmp|work|usr)/|\b\w+\.py\b"
                     r"|Intel|Xeon|x86_64|Ryzen|site-packages")
LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_.'\-]*[A-Za-z0-9]|[A-Za-z]")


def prose(text: str) -> str:
    for pattern in NOT_PROSE:
        text = re.sub(pattern, " ", text, flags=re.S)
    return text


def _terms(lang: str):
    for name, term in glossary(lang)["terms"].items():
        for variant in term["not"]:
            # re.ASCII: \b is a boundary between Latin letters and anything else, so "个token" has one
            yield name, term, re.compile(variant, re.ASCII)


def problems(text: str, lang: str, key: str | None = None) -> list[str]:
    """What is wrong with one visible string on a page in `lang` (empty: nothing). key: its i18n key, for the
    glossary's allowed_in exceptions (a Chinese column in a bilingual glossary, a term given in English)."""
    plain = prose(" ".join(html_texts(text)) if re.search(r"<[a-z/][^>]*>", text) else text)
    machine = MACHINE.findall(re.sub(r"`[^`]*`", " ", text))
    found = [f"machine text {m!r}" for m in machine] + [f"{variant.pattern!r} (say {term['use']!r})" for name, term, variant in _terms(lang)
             if variant.search(plain) and key not in term.get("allowed_in", ())]
    if lang == "zh":
        names = set(glossary("zh")["names"])
        english = [w for w in LATIN_WORD.findall(plain) if w not in names and w.rstrip(".") not in names
                   and len(w) > 2 and not re.search(r"[\d_]|\w\.\w", w)]
        found += [f"English word {w!r}" for w in english]
    elif key not in glossary("en")["allowed_cjk"] and CJK.search(plain):
        found.append(f"Chinese characters {CJK.findall(plain)[:6]}")
    return found


class _Text(HTMLParser):
    SKIP = {"script", "style"}
    SEEN_ATTRS = {"title", "aria-label", "alt", "placeholder"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts, self._skipping = [], 0

    def handle_starttag(self, tag, attrs):
        self._skipping += tag in self.SKIP
        self.parts += [v for k, v in attrs if k in self.SEEN_ATTRS and v]

    def handle_endtag(self, tag):
        self._skipping -= tag in self.SKIP and self._skipping > 0

    def handle_data(self, data):
        if not self._skipping and data.strip():
            self.parts.append(data)


def html_texts(markup: str) -> list[str]:
    """The text of some HTML as a reader gets it: text nodes and title / aria-label / alt attributes."""
    parser = _Text()
    parser.feed(markup)
    return parser.parts


# What a frame player shows: its frames' heads, narration and HTML, the fixed part, the side notes, its labels.
PLAYER_TEXT_KEYS = {"head", "narration", "html", "fixed", "sides", "labels", "stageLabels", "story", "label"}


def _player_texts(value) -> list[str]:
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (_strings(v) if k in PLAYER_TEXT_KEYS else _player_texts(v))]
    if isinstance(value, list):
        return [s for v in value for s in _player_texts(v)]
    return []


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


PLOTLY_TEXT_KEYS = {"text", "name", "hovertemplate", "texttemplate", "ticktext", "hovertext"}


def plotly_texts(spec: dict) -> list[str]:
    """Every string of a figure that is drawn or hovered: titles, tick labels, annotations, trace names and
    texts, hover templates, category coordinates (the tick labels of a category axis)."""
    out = []

    def walk(node, key=None):
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, k)
        elif isinstance(node, list):
            for v in node:
                walk(v, key)
        elif isinstance(node, str) and (key in PLOTLY_TEXT_KEYS or key in ("x", "y")):
            out.append(node)

    for trace in spec.get("data", []):
        template, info = trace.get("hovertemplate"), trace.get("hoverinfo", "all")
        name_hovers = ("<extra>" not in template) if template else (info == "all" or "name" in info)
        if trace.get("showlegend") is False and not name_hovers:       # a name nobody sees
            trace = {k: v for k, v in trace.items() if k != "name"}
        walk(trace)
    walk(spec.get("layout", {}))
    return [s for text in out for s in html_texts(text)]


VISIBLE_FIELDS = {"body", "label", "help", "options", "placeholder", "caption", "raw_value", "default_value"}


def _proto_texts(msg: Message, out: list[str], hidden_names: set[str]) -> None:
    """hidden_names collects the data editors' column names that a label of ours replaces on screen."""
    kind = type(msg).__name__
    for fd, val in msg.ListFields():
        values = list(val) if hasattr(val, "__iter__") and not isinstance(val, (str, bytes, Message)) else [val]
        for v in values:
            if isinstance(v, Message):
                _proto_texts(v, out, hidden_names)
            elif not isinstance(v, str):
                continue
            elif fd.name == "spec" and kind == "PlotlyChart":
                out += plotly_texts(json.loads(v))
            elif fd.name == "json" and v.startswith("{"):                     # a v2 component's data
                data = with_payload(json.loads(v))                            # sent before: the tab's copy
                if "gz" in data:                                               # a frame player's packed frames
                    data["gz"] = json.loads(gzip.decompress(base64.b64decode(data["gz"])))
                out += [s for text in _player_texts(data) for s in html_texts(text)]
            elif fd.name == "columns" and v.startswith("{"):                   # data editor column labels
                configured = json.loads(v)
                out += [c.get("label", "") for c in configured.values()]
                hidden_names.update(name for name, c in configured.items() if c.get("label"))
            elif fd.name == "body" and kind == "Html":
                out += html_texts(v)
            elif fd.name in VISIBLE_FIELDS:
                out += html_texts(v) if "<" in v else [v]


def visible_texts(at) -> list[str]:
    """Every visible string of an AppTest run (see the module docstring), tables' cells included."""
    out: list[str] = []
    hidden_names: set[str] = set()

    def nodes(node):
        yield node
        children = getattr(node, "children", None)
        if isinstance(children, dict):
            for child in children.values():
                yield from nodes(child)

    for node in nodes(at._tree):
        proto = getattr(node, "proto", None)
        if isinstance(proto, Message):
            _proto_texts(proto, out, hidden_names)
    for table in [*at.table, *at.dataframe]:
        frame = table.value
        out += [str(c) for c in frame.columns if str(c) not in hidden_names]
        out += [str(v) for v in frame.to_numpy().ravel() if isinstance(v, str)]
    return [s for s in out if s.strip()]
