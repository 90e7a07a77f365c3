"""The live class's answers as HTML bars: one row per option, its letter, words, bar and count. HTML, not
Plotly: the projector redraws it every second, and a page of divs swaps without a flicker or a layout
pass. After the reveal the right option is marked (colour, a check mark and the word `right_word`).
"""
from __future__ import annotations

import html

LETTERS = "ABCDEFGH"
TALLY_CSS = """<style>
.gdn-tally{display:grid;grid-template-columns:auto minmax(10em,4fr) minmax(6em,2fr) auto;gap:0.3em 0.7em;align-items:center;
  font-variant-numeric:tabular-nums;margin:0.4em 0 0.6em 0}
.gdn-tally .letter{font-weight:700;width:1.8em;height:1.8em;border-radius:50%;display:flex;align-items:center;
  justify-content:center;background:#e5e7eb;color:#111827}
.gdn-tally .words{line-height:1.25}
.gdn-tally .track{background:#f3f4f6;border-radius:4px;height:1.6em;overflow:hidden}
.gdn-tally .bar{background:#6b7fd7;height:100%;border-radius:4px;transition:width 0.4s}
.gdn-tally .count{font-weight:700;min-width:2.2em;text-align:right}
.gdn-tally .right .letter{background:#15803d;color:#fff}
.gdn-tally .right .bar{background:#16a34a}
.gdn-tally .right .words{font-weight:700;color:#166534}
.gdn-tally .dim{opacity:0.55}
.gdn-tally > div{display:contents}
</style>"""


def tally_html(options: list[str], counts: list[int], answer: int | None = None, right_word: str = "") -> str:
    """options[i]: the words of option i; counts[i]: its votes; answer: the right option once revealed.
    Bars are scaled to the largest count (an empty round draws empty tracks)."""
    if len(options) != len(counts):
        raise ValueError(f"{len(options)} options but {len(counts)} counts")
    top = max(counts, default=0) or 1
    rows = []
    for i, (words, n) in enumerate(zip(options, counts)):
        state = "" if answer is None else ("right" if i == answer else "dim")
        mark = f" ✓ {html.escape(right_word)}" if state == "right" else ""
        rows.append(f'<div class="opt {state}" data-option="{i}" data-count="{n}">'
                    f'<span class="letter">{LETTERS[i]}</span><span class="words">{html.escape(words)}{mark}</span>'
                    f'<span class="track"><span class="bar" style="display:block;width:{100 * n / top:.1f}%"></span></span>'
                    f'<span class="count">{n}</span></div>')
    alt = ", ".join(f"{LETTERS[i]}: {n}" for i, n in enumerate(counts))
    return TALLY_CSS + f'<div class="gdn-figure gdn-tally" role="figure" aria-label="{alt}">' + "".join(rows) + "</div>"
