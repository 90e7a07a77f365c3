"""Text from outside (a prompt, a token, a table cell, a file, folder or repo name) shown inside Streamlit's
Markdown (captions, errors, titles, notes, stories) as itself, on one line.

Streamlit reads more than CommonMark: $..$ is LaTeX, :red[..] a colour, :name: an icon, ![](url) an image
the browser fetches. CommonMark lets a backslash escape any ASCII punctuation, so every one is escaped;
line breaks (\\r as well as \\n: "\\r# x" was a heading) and other control characters become spaces.
"""
from __future__ import annotations

import re

_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")                  # every ASCII punctuation character
_BREAKS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")        # C0 and C1 controls, line/paragraph separators


def plain(text) -> str:
    """`text` as a Markdown-safe, one-line string: shown exactly as typed, never interpreted."""
    return _PUNCTUATION.sub(r"\\\1", _BREAKS.sub(" ", str(text)))


def plain_fields(fields: dict) -> dict:
    """Every string of a message's fields through `plain` (numbers are left as they are)."""
    return {k: plain(v) if isinstance(v, str) else v for k, v in fields.items()}
