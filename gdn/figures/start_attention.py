"""The start page's first figure as HTML: softmax attention -> the sum over tokens -> one table.

Three panels side by side. Every past token j appears in each of them: its softmax weight (a bar), its
term (q·k_j) v_j of the sum (a row), and its outer product k_j v_j^T (a term of S's formula, and its
share of every entry of S, shown when j is lit). The elements of token j carry data-link="j", so the
explorer (app_pages/_support/explorer.py) lights all of them when any one is pointed at, with no
script run. Pure: numbers from gdn.lessons.start in, an HTML string out; styled in assets/explorer/explorer.css.
"""
from __future__ import annotations

import html

import numpy as np

from gdn.figures.common import symmetric_range
from gdn.figures.tables import cell_style, diverging_rgb, rich

SOFTMAX, LINEAR, TABLE = "#7c3aed", "#1d4ed8", "#dc2626"      # as in the Plotly version: weights, sum, table


def num(x: float, digits: int = 2) -> str:
    """A cell's number: 2 decimals, a real minus sign, never "-0.00". Rounded at 1e-10 first, so two equal
    reads that differ in the last float bit (Σⱼ and Sᵀq) never print differently."""
    text = f"{round(float(x), 10) + 0.0:.{digits}f}"
    return "0." + "0" * digits if text.lstrip("-") == "0." + "0" * digits else text.replace("-", "−")


def _cell(value: float, zmax: float, extra: str = "") -> str:
    return f'<td class="cell"{extra} style="{cell_style(diverging_rgb(value, zmax))}">{num(value)}</td>'


def _weights_panel(weights: np.ndarray, token: str, axis: str, title: str, kept: str) -> str:
    top = max(float(weights.max()), 1e-12)
    bars = "".join(
        f'<div class="att-bar" data-link="{j}" tabindex="0" data-w="{w:.17g}">'
        f'<span class="att-w">{num(w)}</span>'
        f'<span class="att-fill" style="height:{100 * w / top:.1f}%;background:{SOFTMAX}"></span>'
        f'<span class="att-tick">{rich(token.format(j=j + 1))}</span></div>'
        for j, w in enumerate(weights))
    many = " many" if len(weights) > 8 else ""           # labels would overlap: shown on the lit bar only
    return (f'<section class="att-panel" data-panel="weights"><h4>{rich(title)}</h4>'
            f'<div class="att-bars{many}">{bars}</div><div class="att-axis">{html.escape(axis)}</div>'
            f'<p class="att-kept">{kept}</p></section>')


def _sum_panel(scores: np.ndarray, terms: np.ndarray, o_sum: np.ndarray, o_table: np.ndarray, *,
               labels: dict[str, str], title: str) -> str:
    T, V = terms.shape
    zmax = symmetric_range(terms, o_sum[None], o_table[None])
    head = ('<tr><th class="corner"></th><th class="col score">q·k<sub>j</sub></th>'
            + "".join(f'<th class="col">{c + 1}</th>' for c in range(V)) + "</tr>")
    rows = "".join(
        f'<tr class="term" data-link="{j}" tabindex="0"><th class="row">{rich(labels["token"].format(j=j + 1))}</th>'
        f'<td class="score">{num(scores[j])}</td>' + "".join(_cell(terms[j, c], zmax) for c in range(V)) + "</tr>"
        for j in range(T))
    total = lambda name, o, colour, label: (
        f'<tr class="total {name}"><th class="row" style="color:{colour}">{label}</th><td class="score"></td>'
        + "".join(_cell(o[c], zmax, f' data-total="{name}"') for c in range(V)) + "</tr>")
    return (f'<section class="att-panel" data-panel="sum"><h4>{title}</h4>'
            f'<table class="att-table">{head}{rows}'
            + total("sum", o_sum, LINEAR, "Σ<sub>j</sub>") + total("table", o_table, TABLE, "S<sup>T</sup>q")
            + f'<tr><td></td><td></td><td class="axis" colspan="{V}">{html.escape(labels["value_axis"])}</td></tr>'
            + f'</table><div class="att-note">{html.escape(labels["diff"])}</div></section>')


def _table_panel(S: np.ndarray, outer: np.ndarray, *, labels: dict[str, str], title: str) -> str:
    T, (K, V) = outer.shape[0], S.shape
    zmax = symmetric_range(S)
    head = '<tr><th class="corner"></th>' + "".join(f'<th class="col">{c + 1}</th>' for c in range(V)) + "</tr>"

    def cell(r: int, c: int) -> str:
        shares = "".join(f'<span class="share" data-link="{j}">{num(outer[j, r, c])}</span>' for j in range(T))
        return (f'<td class="cell s" data-r="{r}" data-c="{c}" style="{cell_style(diverging_rgb(S[r, c], zmax))}">'
                f'<span class="whole">{num(S[r, c])}</span>{shares}</td>')
    body = "".join(f'<tr><th class="row">{r + 1}</th>' + "".join(cell(r, c) for c in range(V)) + "</tr>"
                   for r in range(K))
    terms = " + ".join(f'<span class="att-term" data-link="{j}" tabindex="0">k<sub>{j + 1}</sub>v<sub>{j + 1}</sub>'
                       f'<sup>T</sup></span>' for j in range(T))
    captions = "".join(f'<span class="share-caption" data-link="{j}">'
                       f'{rich(labels["share"].format(j=j + 1))}</span>' for j in range(T))
    return (f'<section class="att-panel" data-panel="table"><h4>{rich(title)}</h4>'
            f'<div class="att-axis-y">{html.escape(labels["key_axis"])}</div>'
            f'<table class="att-table att-s">{head}{body}<tr><td></td><td class="axis" colspan="{V}">'
            f'{html.escape(labels["value_axis"])}</td></tr></table>'
            f'<div class="att-formula">S = {terms}</div>'
            f'<div class="att-note"><span class="hint">{html.escape(labels["hint"])}</span>{captions}</div></section>')


def attention_html(weights: np.ndarray, scores: np.ndarray, terms: np.ndarray, o_sum: np.ndarray,
                   o_table: np.ndarray, S: np.ndarray, outer: np.ndarray, *, labels: dict[str, str],
                   lecture: bool = False, alt: str = "") -> str:
    """weights [T] softmax weights; scores [T] q·k_j; terms [T, V] (q·k_j) v_j; o_sum, o_table [V] the
    linear read both ways; S [K, V]; outer [T, K, V] k_j v_j^T. labels: t1, t2 (with {sum} and {table}),
    t3, token (with {j}), token_axis, value_axis, key_axis, diff, share (with {j}), hint; kept: trusted HTML
    under the weights (the numbers each form keeps at this T: the KV cache grows with the past tokens)."""
    paint = lambda colour, text: f'<span style="color:{colour}">{text}</span>'
    t2 = rich(labels["t2"]).replace("{sum}", paint(LINEAR, "Σ<sub>j</sub> (q·k<sub>j</sub>) v<sub>j</sub>")) \
                           .replace("{table}", paint(TABLE, "S<sup>T</sup>q"))
    return (f'<div class="gdn-att{" lecture" if lecture else ""}" role="group" aria-label="{html.escape(alt)}">'
            + _weights_panel(weights, labels["token"], labels["token_axis"], labels["t1"], labels.get("kept", ""))
            + _sum_panel(scores, terms, o_sum, o_table, labels=labels, title=t2)
            + _table_panel(S, outer, labels=labels, title=labels["t3"]) + "</div>")
