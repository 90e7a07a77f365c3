"""Figure labels on a projector (lecture size, 22 px, in a 1280 px screen's width): subplot titles broken
into lines before they run into their neighbours, legends given the rows they take. The drawn result is
checked in a browser (tests/test_browser_layout.py); these check the arithmetic behind it."""
import numpy as np
import pytest

from gdn.figures.common import NARROWEST_PX, fitted_titles, legend_rows, text_px
from gdn.figures.playground import CHART_EM, ROW_EM, fig_capacity
from gdn.figures.recall import fig_results, legend_top
from gdn.i18n import t
from gdn.lessons import playground as ex


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_three_width_titles_break_before_their_parenthesis_and_two_do_not(lang):
    titles = lambda ds: [t("recall.width_panel", lang, d=d) for d in ds]
    three, extra = fitted_titles(titles((16, 32, 64)), 22, spacing=0.06)
    room = NARROWEST_PX * 1.06 / 3                                     # between neighbouring panels' centres
    assert extra == 1 and all(s.count("<br>") == 1 for s in three), three
    for s, original in zip(three, titles((16, 32, 64))):
        head, tail = s.split("<br>")
        assert tail.startswith(("(", "（")) and f"{head} {tail}".replace(" （", "（") == original
        assert max(text_px(head, 22), text_px(tail, 22)) <= room
    assert fitted_titles(titles((32, 64)), 22, spacing=0.06) == (titles((32, 64)), 0)   # two fit on one line
    assert fitted_titles(titles((16, 32, 64)), 14, spacing=0.06)[1] == 0                # and at screen size


def test_a_title_without_a_parenthesis_breaks_at_spaces_and_keeps_its_words():
    long = "one two three four five six seven eight nine ten eleven twelve"
    (s, *_), extra = fitted_titles([long, "b", "c"], 22, spacing=0.06)
    assert extra >= 1 and s.replace("<br>", " ") == long
    assert all(text_px(line, 22) <= NARROWEST_PX * 1.06 / 3 for line in s.split("<br>"))


def test_legend_rows_packs_entries_like_a_row_that_wraps():
    assert legend_rows(["a" * 10] * 3, 10, 1000) == 1
    w = text_px("a" * 10, 10) + 44                                     # one entry
    assert legend_rows(["a" * 10] * 3, 10, 2 * w + 1) == 2 and legend_rows(["a" * 10] * 3, 10, w) == 3


def test_results_margin_grows_by_the_added_title_line():
    acc = np.full((2, 3, 2), 0.5)
    kw = dict(rules=["linear", "gdn"], pairs=[8, 16], names={"linear": "l", "gdn": "g"},
              labels={"pairs": "p", "accuracy": "a", "accuracy_pct": "a %", "seeds_list": "{seeds}"}, font_size=22)
    long = [f"width d = {d} (memory {d}×{d} per layer)" for d in (16, 32, 64)]
    wrapped = fig_results(acc, widths=[16, 32, 64], titles=long, **kw)
    short = fig_results(acc, widths=[16, 32, 64], titles=["a", "b", "c"], **kw)
    assert wrapped.layout.margin.t - short.layout.margin.t == round(1.25 * 22)
    assert short.layout.margin.t >= legend_top(22, 2)
    assert sum("<br>" in (a.text or "") for a in wrapped.layout.annotations) == 3


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_capacity_legends_stack_above_the_titles(lang):
    """The rules' legend at the top, the split's under it by its rows, both inside the top margin."""
    Ns = ex.CAPACITY_NS[:3]
    curves = {r: ex.capacity_curve(r, 16, 16, Ns=Ns) for r in ex.RULES}
    rules = {r: t(f"playground.rule_{r}", lang) for r in ex.RULES}
    split = [t(f"playground.cap_{s}", lang) for s in ("all", "recent", "oldest")]
    labels = {"curve_title": "c", "split_title": "s", "knee": "k", "N": "N", "error": "e"}
    fig = fig_capacity(np.array(Ns), curves, 16, Ns[1], rule_titles=rules, split_labels=split,
                       labels=labels, font_size=22, height=520)
    rows = [legend_rows(list(rules.values()), 22, CHART_EM * 22), legend_rows(split, 22, CHART_EM * 22)]
    assert (fig.layout.legend.y, fig.layout.legend.yref) == (1, "container")
    assert fig.layout.legend2.y == pytest.approx(1 - rows[0] * ROW_EM * 22 / 520)
    assert fig.layout.margin.t >= (rows[0] + rows[1]) * ROW_EM * 22 + 1.3 * 22       # the legends, then a title line
    bars = [d for d in fig.data if d.type == "bar"]
    assert bars and all(d.legend == "legend2" for d in bars)
