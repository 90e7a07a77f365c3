"""The live class's answer bars: one row per option with its count, bars scaled to the largest count,
the right option marked only after the reveal, option words escaped."""
import re

import pytest

from gdn.figures.live import tally_html


def widths(html: str) -> list[float]:
    return [float(w) for w in re.findall(r'class="bar" style="display:block;width:([0-9.]+)%"', html)]


def test_counts_and_bars():
    html = tally_html(["a", "b", "c"], [2, 8, 0])
    assert re.findall(r'data-count="(\d+)"', html) == ["2", "8", "0"]
    assert widths(html) == [25.0, 100.0, 0.0]
    assert 'class="opt right"' not in html and "✓" not in html
    assert 'aria-label="A: 2, B: 8, C: 0"' in html


def test_the_reveal_marks_the_right_option_and_dims_the_others():
    html = tally_html(["a", "b", "c"], [2, 8, 0], answer=2, right_word="正确答案")
    assert re.findall(r'class="opt (\w*)" data-option="(\d)"', html) == [("dim", "0"), ("dim", "1"), ("right", "2")]
    assert "✓ 正确答案" in html


def test_an_empty_round_and_hostile_words():
    html = tally_html(["<script>x</script>", "b"], [0, 0])
    assert widths(html) == [0.0, 0.0] and "<script>" not in html and "&lt;script&gt;" in html
    with pytest.raises(ValueError):
        tally_html(["a", "b"], [1])
