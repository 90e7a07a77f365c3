"""Inside the model (模型内部; URL /real_model): a prompt through the demo model or a Qwen3.5 checkpoint;
its per-head gates, from both kernels.

The parts live in app_pages/_real_model/ (see its __init__): this script lays them out. Top to bottom:
the view picker across the page; left, the model and the prompt; right, the chosen view; then, under
both, what this model is and the prompt's tokens.
"""
import time

import streamlit as st

from gdn.figures.real_model import draws_as_html
from app_pages._real_model import about, keys, prompt, source
from app_pages._real_model.context import Loaded, Request, Trace, ViewContext
from app_pages._real_model.views import VIEWS
from app_pages._support import swap, ui


@st.fragment
def layer_view(loaded: Loaded, request: Request, trace: Trace, view: str, columns: tuple, clock: dict) -> None:
    """The layer and head pickers (under the prompt) and the chosen view: a fragment, so a new layer or
    head, and every widget of a view, rerun and re-send only these, not the model list, the prompt and
    the notes and tokens under the views (a layer change was a whole page of elements and charts).
    clock["started"]: when the page's run began; a rerun of this fragment alone counts from its own start."""
    if st.session_state.pop(keys.FULL_RUN, False):                 # a story button: a new prompt to run
        st.rerun(scope="app")
    started = clock.pop("started", None) or time.perf_counter()
    left, right = columns
    run, cfg = trace.run, loaded.config
    heads = list(range(cfg.linear_num_value_heads))
    layer_labels = {i: ui.tr("real_model.layer_n", i=i, n=cfg.num_hidden_layers) for i in run.layers}
    per_key = len(heads) // cfg.linear_num_key_heads
    head_labels = {h: ui.tr("real_model.head_n", h=h, kh=h // per_key) for h in heads}
    # The gates view picks its layer in the browser (every layer's gates are in its payload) and uses no
    # head; the intervention view has its own head picker (with "all heads"): one picker each, no twins.
    browser_layer = view == "gates" and draws_as_html(trace.T, len(heads))
    with left:
        c1, c2 = st.columns(2) if view not in ("gates", "intervene") else (st.container(), None)
        if browser_layer:
            layer = swap.chosen(keys.LAYER, run.layers, run.layers[0])
        else:
            layer = ui.linked(c1.selectbox, ui.tr("real_model.layer"), run.layers, key=keys.LAYER,
                              default=run.layers[0], format_func=layer_labels.get)
        if c2 is None:
            head = swap.chosen(keys.HEAD, heads, 0)
        else:
            head = ui.linked(c2.selectbox, ui.tr("real_model.head"), heads, key=keys.HEAD, default=0,
                             format_func=head_labels.get)
    with right:
        VIEWS[view](ViewContext(loaded=loaded, request=request, trace=trace, layer=layer, head=head, started=started))


title_box = st.empty()
# The view picker spans the page: beside the prompt column its six choices would not fit a projector's width.
view = ui.linked(st.segmented_control, ui.tr("real_model.view"), tuple(VIEWS), key=keys.VIEW, default="gates",
                 required=True, format_func=ui.label_maker("real_model.tab_"), label_visibility="collapsed")
left, right = st.columns([1.6, 5] if ui.lecture() else [2, 5], gap="medium")
with left:
    loaded = source.load(title_box)                     # stops the page with the reason when none can be used
    request, preset = prompt.ask(loaded)
    clock = {"started": time.perf_counter()}            # the timing caption counts the trace too
    trace = prompt.trace(loaded, request)
layer_view(loaded, request, trace, view, (left, right), clock)
about.below(loaded, trace, preset)
