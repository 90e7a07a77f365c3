"""The start page's layer pictures as HTML: the Gated DeltaNet block as a clickable diagram, and the
hybrid layer stack of a Qwen3.5 model (the first figure, attention -> one table, is start_attention.py).

The diagram is drawn in its own units (LAYOUT) inside a box of fixed aspect ratio whose text is sized in
container units (cqw): text and boxes scale together, so nothing is clipped at any width, and a full-width
diagram on a 1920 px lecture screen has 20 px text. Each box carries data-open="<box id>": the explorer
(app_pages/_support/explorer.py) sends a click on it to Python, which opens the page explaining the box.
"""
from __future__ import annotations

import html

from gdn.figures.tables import rich

# box id -> (centre x, centre y, width, height, colour group) on a grid of columns 1.2 apart.
# Rows: z on top (it runs straight to the gated norm), then q/k/v, a, b; the delta rule spans those. The conv
# and L2 boxes hold the most lines (title, shapes, live norms) and take the free room above their row.
LAYOUT = {
    "x": (0.0, -1.5, 1.0, 3.6, "stream"),
    "in_z": (1.2, 0.0, 1.0, 0.8, "proj"), "in_qkv": (1.2, -1.0, 1.0, 0.8, "proj"),
    "in_a": (1.2, -2.0, 1.0, 0.8, "proj"), "in_b": (1.2, -3.0, 1.0, 0.8, "proj"),
    # taller, up into the free room under the z arrow: six lines of 16 px
    "conv": (2.4, -0.95, 1.0, 1.1, "conv"), "l2": (3.6, -0.95, 1.0, 1.1, "conv"),
    "alpha": (3.0, -2.0, 2.2, 0.9, "gate"), "beta": (3.0, -3.0, 2.2, 0.9, "gate"),   # g -> alpha in one wide box
    # the delta rule wide enough for its update in two lines at the 16 px floor of a 1280 px projector (1.2
    # wide, it wrapped over five)
    "delta": (5.25, -2.0, 2.0, 3.0, "delta"),
    "chunk": (5.25, -4.05, 2.0, 0.7, "chunk"), "norm": (6.9, -0.5, 1.0, 1.8, "norm"),
    "out": (8.1, -0.5, 1.0, 0.8, "norm"), "residual": (8.1, -2.0, 1.0, 0.8, "stream"),
}
X0, X1, Y0, Y1 = -0.55, 8.95, -4.45, 0.98          # the drawing's extent, in box units
COLOURS = {"stream": ("#f1f5f9", "#475569"), "proj": ("#dbeafe", "#1d4ed8"), "conv": ("#dcfce7", "#15803d"),
           "gate": ("#ffedd5", "#c2410c"), "delta": ("#fee2e2", "#b91c1c"), "chunk": ("#fff1f2", "#e11d48"),
           "norm": ("#ede9fe", "#6d28d9")}
# arrows left to right between boxes: (from, to, y of the arrow; None = the from box's centre)
ARROWS = [("x", "in_z", 0.0), ("x", "in_qkv", -1.0), ("x", "in_a", -2.0), ("x", "in_b", -3.0),
          ("in_qkv", "conv", None), ("conv", "l2", None), ("l2", "delta", -1.0), ("in_a", "alpha", None),
          ("alpha", "delta", -2.0), ("in_b", "beta", None), ("beta", "delta", -3.0),
          ("in_z", "norm", 0.0), ("delta", "norm", -1.0), ("norm", "out", -0.5)]
# The update rule in the memory page's form (gdn.figures.memory.CLOSED_FORM_HTML: S is d_k x d_v, reads are
# S^T q), broken in two lines to fit the delta box; tests/test_start.py checks it is the same rule.
DELTA_RULE = ("S<sub>t</sub> = α<sub>t</sub> (I − β<sub>t</sub> k<sub>t</sub>k<sub>t</sub><sup>⊤</sup>) S<sub>t−1</sub>"
              "<br>+ β<sub>t</sub> k<sub>t</sub>v<sub>t</sub><sup>⊤</sup>, o<sub>t</sub> = S<sub>t</sub><sup>⊤</sup>q<sub>t</sub>")
SKIP_Y = 0.78                                        # the residual connection runs above every box


def edge(box: str, side: str) -> float:
    cx, cy, w, h, _ = LAYOUT[box]
    return {"left": cx - w / 2, "right": cx + w / 2, "top": cy + h / 2, "bottom": cy - h / 2}[side]


def _pct(x0: float, y_top: float, w: float, h: float) -> str:
    """CSS left/top/width/height in % of the drawing for a rectangle given in box units (y up)."""
    W, H = X1 - X0, Y1 - Y0
    return (f"left:{100 * (x0 - X0) / W:.3f}%;top:{100 * (Y1 - y_top) / H:.3f}%;"
            f"width:{100 * w / W:.3f}%;height:{100 * h / H:.3f}%")


def _line(x0, y0, x1, y1, colour="#334155", dash="", arrow=True) -> str:
    """A line in SVG user units (y down = -y), with an arrowhead at its end."""
    style = f' stroke-dasharray="{dash}"' if dash else ""
    head = ' marker-end="url(#gdn-arrow)"' if arrow else ""
    return (f'<line x1="{x0:.3f}" y1="{-y0:.3f}" x2="{x1:.3f}" y2="{-y1:.3f}" stroke="{colour}" '
            f'stroke-width="0.018"{style}{head}/>')


def block_html(texts: dict[str, str], hovers: dict[str, str], *, skip_label: str = "", chunk_label: str = "",
               alt: str = "") -> str:
    """texts: box id -> its text (title, shape, live value; <br> between lines, <b> <i> <sub> <sup> kept,
    everything else escaped: a prompt's piece can hold any character); hovers: box id ->
    plain text, the box's tooltip (what a click opens, the weights it reads)."""
    lines = [_line(edge(a, "right"), LAYOUT[a][1] if y is None else y, edge(b, "left"), LAYOUT[a][1] if y is None else y)
             for a, b, y in ARROWS]
    lines.append(_line(LAYOUT["out"][0], edge("out", "bottom"), LAYOUT["out"][0], edge("residual", "top")))
    right = X1 - 0.12
    lines += [_line(0, edge("x", "top"), 0, SKIP_Y, "#475569", "0.04 0.03", False),
              _line(0, SKIP_Y, right, SKIP_Y, "#475569", "0.04 0.03", False),
              _line(right, SKIP_Y, right, -2.0, "#475569", "0.04 0.03", False),
              _line(right, -2.0, edge("residual", "right"), -2.0, "#475569")]
    cx = LAYOUT["delta"][0]
    lines.append(_line(cx, edge("delta", "bottom"), cx, edge("chunk", "top"), "#e11d48", "0.04 0.03", False))
    svg = (f'<svg class="blk-lines" viewBox="{X0} {-Y1} {X1 - X0} {Y1 - Y0}" aria-hidden="true">'
           '<defs><marker id="gdn-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="0.09" markerHeight="0.09" '
           'markerUnits="userSpaceOnUse" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#334155"/></marker></defs>'
           + "".join(lines) + "</svg>")
    boxes = []
    for box, (bx, by, w, h, group) in LAYOUT.items():
        fill, line = COLOURS[group]
        boxes.append(f'<div class="blk-box" role="link" tabindex="0" data-open="{box}" data-link="{box}" '
                     f'title="{html.escape(hovers.get(box, ""))}" '
                     f'style="{_pct(bx - w / 2, by + h / 2, w, h)};background:{fill};border-color:{line}">'
                     f'<span>{rich(texts[box])}</span></div>')
    notes = (f'<div class="blk-note skip" style="{_pct(1.7, SKIP_Y + 0.12, 3.8, 0.24)}"><span>{html.escape(skip_label)}</span></div>'
             f'<div class="blk-note chunk" style="{_pct(edge("chunk", "right") + 0.1, -3.8, 2.5, 0.5)}">{html.escape(chunk_label)}</div>')
    return (f'<div class="gdn-block" role="group" aria-label="{html.escape(alt)}" style="aspect-ratio:{X1 - X0:g} / {Y1 - Y0:g}">'
            f'{svg}{"".join(boxes)}{notes}</div>')


# ---- the hybrid stack ---------------------------------------------------------------------

KIND_COLOURS = {"linear_attention": ("#fee2e2", "#b91c1c"), "full_attention": ("#e0e7ff", "#3730a3")}


def stack_html(layer_types: list[str], *, names: dict[str, str], notes: dict[str, str], alt: str = "",
               lecture: bool = False) -> str:
    """layer_types: one kind per layer, bottom (layer 0) to top, drawn top down; names: kind -> short name
    (with {i}); notes: kind -> its memory per layer (<br> kept), beside the first layer of that kind.
    HTML rows, so a note wraps in its column instead of running off the picture."""
    first = {kind: next((i for i, k in enumerate(layer_types) if k == kind), None) for kind in notes}
    rows = []
    for i in reversed(range(len(layer_types))):
        kind = layer_types[i]
        fill, line = KIND_COLOURS[kind]
        note = next((notes[k] for k, at in first.items() if at == i), "")
        rows.append(f'<div class="stk-row" data-kind="{kind}"><span class="stk-layer" style="background:{fill};'
                    f'border-color:{line};color:{line}">{html.escape(names[kind].format(i=i))}</span>'
                    f'<span class="stk-note" style="color:{KIND_COLOURS[kind][1]}">{rich(note)}</span></div>')
    return f'<div class="gdn-stack{" lecture" if lecture else ""}" role="group" aria-label="{html.escape(alt)}">{"".join(rows)}</div>'
