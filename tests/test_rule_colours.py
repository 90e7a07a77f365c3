"""One name and one colour per rule on every page (issue 48: red meant Gated DeltaNet on the compare page and
linear attention on the recall page, and the rules had four sets of names in the code). The colours are read
off what each page draws: the playground's browser chart, the recall results and live curves, the update
page's figures."""
import re

import numpy as np

from gdn.figures.playground_html import repeated_html
from gdn.figures.recall import fig_results, fig_training
from gdn.figures.update import fig_update_results, fig_update_training
from gdn.lessons import playground
from gdn.lessons.compare import RULES as COMPARE_RULES
from gdn.qwen35 import layers
from gdn.recall import models, update
from gdn.rules import RULE_COLORS

LABELS = {k: k for k in ("pairs", "accuracy", "accuracy_pct", "step", "loss", "seeds_list", "updates", "right_pct",
                         "old_pct", "share_pct", "updated", "old")} | {"seeds_list": "{seeds}"}


def plotly_colours(fig) -> dict[str, set[str]]:
    """legend group (a rule) -> every colour its lines and markers are drawn in."""
    out = {}
    for trace in fig.data:
        if trace.legendgroup:
            colours = {c for c in (trace.line.color, trace.marker.color) if isinstance(c, str)}
            out.setdefault(trace.legendgroup, set()).update(colours)
    return out


def test_every_part_of_the_code_calls_a_rule_by_the_same_name():
    """The lessons, the playground, the recall and update sweeps and the real model's ablation name their rules
    from one list (gdn/rules.py): a rule called "gated" on one page and "gdn" on the next was one thing twice."""
    named = {"compare": tuple(COMPARE_RULES), "playground": playground.RULES, "recall": models.RULES,
             "update": update.UPDATE_RULES, "qwen35": layers.RULES}
    for where, names in named.items():
        assert set(names) <= set(RULE_COLORS), (where, names)
    assert playground.RULES == tuple(COMPARE_RULES) == update.UPDATE_RULES == ("linear", "deltanet", "gdn")


def test_the_compare_and_playground_rules_wear_the_colours_of_the_recall_rules():
    for name, rule in COMPARE_RULES.items():
        assert rule.colour == RULE_COLORS[name]
    html = repeated_html({r: np.linspace(1, 0, 4) for r in COMPARE_RULES}, rule_titles={r: r for r in COMPARE_RULES},
                         labels={"x": "x", "y": "y"}, metrics=[])
    drawn = dict(re.findall(r'data-series="(\w+)" fill="none" stroke="(#[0-9a-f]{6})"', html))
    assert drawn == {r: RULE_COLORS[r] for r in COMPARE_RULES}


def test_the_recall_and_update_figures_draw_each_rule_in_its_colour():
    rules = ["softmax", "linear", "deltanet", "gdn"]
    names = {r: r for r in rules}
    acc = np.full((4, 1, 2), 0.5)
    figs = [fig_results(acc, rules=rules, widths=[32], pairs=[8, 16], names=names, titles=["w"], labels=LABELS,
                        seeds=np.full((4, 1, 2, 3), 0.5)),
            fig_update_results(np.full((4, 2, 3), 0.5), np.full((4, 2, 3), 0.2), np.full((4, 2, 3, 3), 0.5),
                               np.full((4, 2, 3, 3), 0.2), rules=rules, layers=[1, 2], updates=[0, 1, 2], names=names,
                               titles=["a", "b", "c", "d"], labels=LABELS),
            fig_update_training({r: {"steps": [1, 2], "updated": [0.1, 0.2], "old": [0.3, 0.2]} for r in rules[1:]},
                                names=names, labels=LABELS, steps=2)]
    for fig in figs:
        for rule, colours in plotly_colours(fig).items():
            assert colours == {RULE_COLORS[rule]}, (rule, colours)
    training = fig_training({r: {"loss": [1.0, 0.5], "acc_steps": [2], "acc": [0.5]} for r in ("linear", "deltanet")},
                            names=names, titles=["a", "b"], labels=LABELS, steps=2)
    for trace in training.data:
        rule = next(r for r in rules if trace.name == r)
        assert trace.line.color == RULE_COLORS[rule]
