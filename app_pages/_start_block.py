"""The start page's live block diagram: each box's shape and live values, what a click on it opens."""
import numpy as np

from gdn.figures.start import DELTA_RULE
from gdn.lessons import start as lesson
from gdn.lessons.cost import load_sizes
from gdn.qwen35 import parse_config
from app_pages._support import compute, path, ui

# box -> the page that explains it, and the panel to open there
TARGETS = {"delta": ("memory_table", {}), "chunk": ("chunking", {}),
           "l2": ("playground", {"playground_panel": "knorm"}), "alpha": ("playground", {"playground_panel": "halflife"}),
           "beta": ("playground", {"playground_panel": "overwrite"})}
ON_REAL_MODEL = ("real_model", {})


def chosen_config(shapes_from: str, demo, loaded: str | None):
    """The shapes the diagram names: Qwen3.5-0.8B's, the demo's (its config `demo`) or the loaded checkpoint's."""
    if shapes_from == "q08":
        return parse_config({"model_type": "qwen3_5_text", **load_sizes()["Qwen3.5-0.8B"]}, source="qwen35_sizes.json")
    return compute.info(loaded).config if shapes_from == "loaded" else demo


def box_texts(cfg, live: dict, piece: str, t: int) -> dict[str, str]:
    """Each box's text: its name, its tensor shape for cfg, and (italic) the live values of the chosen token."""
    boxes = lesson.block_shapes(cfg)
    shapes = {b: lesson.shape_text(box.output) for b, box in boxes.items()}
    v_shape = lesson.shape_text(("T", cfg.linear_num_value_heads, cfg.linear_value_head_dim))
    shapes["l2"] = f"q, k {shapes['l2']}<br>v {v_shape}"
    shapes["delta"] = f"S {lesson.shape_text(lesson.state_shape(cfg))}<br>o {shapes['delta']}"
    half = ui.tr("start.v_half", n=f"{live['half_life']:.1f}") if np.isfinite(live["half_life"]) else ""
    values = {"x": ui.tr("start.v_token", t=t + 1, piece=piece),
              "conv": ui.tr("start.v_conv", **{k: f"{live[k + '_norm']:.1f}" for k in ("q", "k", "v")}),
              "l2": ui.tr("start.v_l2", q=f"{live['q_hat_norm']:.1f}", k=f"{live['k_hat_norm']:.1f}",
                          cos=f"{live['cos_qk']:.2f}"),
              "alpha": f"g = {live['g']:.3f},  α = {live['alpha']:.3f},  {half}", "beta": f"β = {live['beta']:.3f}",
              "delta": ui.tr("start.v_state", s=f"{live['state_norm']:.2f}")}
    return {b: f"<b>{ui.tr(f'start.box_{b}', W=cfg.linear_conv_kernel_dim, rule=DELTA_RULE)}</b><br>{shapes[b]}"
               + (f"<br><i>{values[b]}</i>" if b in values else "") for b in boxes}


def box_hovers(cfg) -> dict[str, str]:
    """What a click opens, and the checkpoint tensors the box reads (plain text: a box's tooltip)."""
    page = lambda b: ui.tr(f"nav.{path.stop_of(TARGETS.get(b, ON_REAL_MODEL)[0]).key}")
    tensors = lambda box: "".join(f"\n{n} {lesson.shape_text(s)}" for n, s in box.weights.items())
    return {b: ui.tr("start.opens", page=page(b)) + tensors(box) for b, box in lesson.block_shapes(cfg).items()}


def open_clicked(box: str | None) -> None:
    """A click on a box (the explorer's data-open value): open the page that explains the box."""
    if box:
        target, params = TARGETS.get(box, ON_REAL_MODEL)
        path.go(path.stop_of(target).file, **params)
