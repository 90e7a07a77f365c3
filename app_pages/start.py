"""Start here (开始): attention -> one table, the whole Gated DeltaNet block of Qwen3.5 as a live diagram
(click a box to open its page), the 3:1 hybrid stack, and the learning path."""

import streamlit as st

from gdn.figures.start import block_html, stack_html
from gdn.i18n import prompt
from gdn.lessons import start as lesson
from gdn.lessons.cost import SHIPPED_DTYPE
from gdn.qwen35.sources import DEMO_PATH, TRAINED_PATH
from gdn.units import fmt_bytes
from app_pages import _start_attention as attention
from app_pages._real_model.prompt import last_folder
from app_pages._start_block import box_hovers, box_texts, chosen_config, open_clicked
from app_pages._support import compute, path, ui, work
from app_pages._support.explorer import explorer, pack_grid

DEMO = str(TRAINED_PATH if TRAINED_PATH.is_dir() else DEMO_PATH)
lecture = ui.lecture()

st.title(ui.tr("start.title"))
st.caption(ui.tr("start.intro"))

# ---- 1. softmax attention -> drop the softmax -> one table -------------------------------------
def attention_section():
    """No server-side widget: the sliders, the numbers-kept line and the hovers answer in the browser."""
    if not lecture:                                        # in lecture mode under the figure: it starts higher
        st.markdown(ui.tr("start.qkv"))
    attention.render()
    if lecture:
        st.markdown(ui.tr("start.qkv"))
    st.page_link("app_pages/cost.py", label=ui.tr("start.cost_link"), icon=":material/memory:",
                 query_params=path.chrome_params())
    ui.note(ui.tr("start.att_story"))


# ---- 2. the whole Gated DeltaNet block, live ---------------------------------------------------
@st.fragment
def layer_sections():
    """The block diagram and the stack: one fragment (a token or head change reruns only this), since
    both follow the chosen shapes."""
    st.header(ui.tr("start.block_title"))
    loaded = last_folder()
    options = ["q08", "demo"] + (["loaded"] if loaded and loaded != DEMO else [])
    c = st.columns([4, 2, 2, 4])                     # the shapes picker's two labels fit in lecture mode
    default = "loaded" if "loaded" in options else "q08"
    shapes_from = ui.linked(c[0].segmented_control, ui.tr("start.shapes"), options, key="start_shapes",
                            default=default, required=True, format_func=ui.label_maker("start.shapes_"))
    shapes_from = shapes_from or default       # None for one run after a switch from this page to its /start twin
    demo, tokenizer = compute.info(DEMO).config, compute.tokenizer(DEMO)      # its weights: in the workers
    text = prompt("recall", ui.lang())
    encoded = compute.shared_caches()["start.encode"]
    enc = encoded.get((DEMO, text))
    if enc is None:                 # the tokenizer is quick and the server keeps it: no job for it
        enc = tokenizer.encode(text, max_tokens=64)
        encoded.put((DEMO, text), enc)
    gdn_layers = list(demo.gdn_layers)
    layer = ui.linked(c[1].selectbox, ui.tr("start.layer"), gdn_layers, key="start_layer", default=gdn_layers[0])
    head = ui.linked(c[2].selectbox, ui.tr("start.head"), list(range(demo.linear_num_value_heads)),
                     key="start_head", default=0)
    pieces = [p if p.strip() else "+" for p in enc.pieces]
    t = ui.linked(c[3].select_slider, ui.tr("start.token"), list(range(len(enc.ids))), key="start_t",
                  default=max(0, len(enc.ids) - 2), format_func=lambda i: f"{i + 1} · {pieces[i]}")
    ids = tuple(enc.ids)
    arrays = compute.run_job("start.inputs", (DEMO, ids, layer), work.layer_arrays, DEMO, ids, layer, pin=True)
    live = lesson.token_values(**arrays, t=t, head=head)
    cfg = chosen_config(shapes_from, demo, loaded)
    texts, hovers = box_texts(cfg, live, pieces[t], t), box_hovers(cfg)
    # HTML whose text scales with the diagram (gdn/figures/start.py): full width, nothing clipped at any size
    diagram = block_html(texts, hovers, skip_label=ui.tr("start.skip"), chunk_label=ui.tr("start.chunk_note"),
                         alt=ui.tr("start.block_alt"))
    open_clicked(explorer("start_block", [], pack_grid([], lambda: diagram)))
    st.caption(ui.tr("start.block_caption", model=ui.tr(f"start.shapes_{shapes_from}"), hv=demo.linear_num_value_heads,
                     d=demo.hidden_size, layer=layer, head=head, kh=live["key_head"]))
    ui.note(ui.tr("start.block_story"))
    stack_section(cfg, ui.tr(f"start.shapes_{shapes_from}"))


# ---- 3. the hybrid stack --------------------------------------------------------------------
def stack_section(cfg, model_name: str) -> None:
    st.header(ui.tr("start.stack_title"))
    per = lesson.memory_per_kind(cfg)
    notes = {"linear_attention": ui.tr("start.stack_gdn", fixed=fmt_bytes(per["linear_attention"][0])),
             "full_attention": ui.tr("start.stack_attn", per_token=fmt_bytes(per["full_attention"][1]))}
    names = {k: ui.tr(f"start.stack_{k}") for k in ("linear_attention", "full_attention")}
    c = st.columns([3, 2])
    c[0].html(stack_html(list(cfg.layer_types), names=names, notes=notes,
                         alt=ui.tr("start.stack_alt", L=cfg.num_hidden_layers), lecture=lecture))
    n_gdn, n_attn = cfg.n_layers_of("linear_attention"), cfg.n_layers_of("full_attention")
    c[1].markdown(ui.tr("start.stack_story", model=model_name, L=cfg.num_hidden_layers, gdn=n_gdn, attn=n_attn,
                        fixed=fmt_bytes(n_gdn * per["linear_attention"][0]),
                        per_token=fmt_bytes(n_attn * per["full_attention"][1]), dtype=SHIPPED_DTYPE))


attention_section()
layer_sections()

# ---- 4. the path ----------------------------------------------------------------------------
st.header(ui.tr("start.path_title"))
for stop in path.PATH[1:]:
    st.page_link(stop.file, label=f"**{ui.tr(f'nav.{stop.key}')}** · {ui.tr(f'nav.blurb_{stop.key}')}",
                 icon=stop.icon, query_params=path.chrome_params())
