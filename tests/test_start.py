"""The start page: the softmax-free identity, the block diagram's shapes against real checkpoint headers
and an outside implementation, its live values against the model's trace, and the page in both languages."""
import json
import re

import numpy as np
import pytest
import torch
from safetensors import safe_open

from gdn.figures.memory import CLOSED_FORM_HTML
from gdn.figures.start import DELTA_RULE, LAYOUT, block_html, stack_html
from gdn.figures.start_attention import attention_html
from gdn.lessons import start as lesson
from gdn.lessons.cost import load_sizes
from gdn.ops.inputs import l2_normalize
from gdn.qwen35 import load_model, parse_config
from gdn.qwen35.checkpoint import layer_shapes
from gdn.qwen35.sources import DEMO_PATH, TRAINED_PATH
from tests.apptest import open_app, player_payload
from tests.htmlview import elements, select

MODELS = [pytest.param(DEMO_PATH, id="demo-random"), pytest.param(TRAINED_PATH, id="demo-trained")]
PROMPT = json.loads(open("assets/prompts/real_model.json", encoding="utf-8").read())["recall"]


def config_08b():
    return parse_config({"model_type": "qwen3_5_text", **load_sizes()["Qwen3.5-0.8B"]})


# ---- the identity ----------------------------------------------------------------------------

@pytest.mark.parametrize("T,K,V", [(1, 3, 3), (7, 4, 2), (50, 16, 8), (200, 8, 32)], ids=str)
def test_dropping_the_softmax_gives_one_table_read(T, K, V):
    rng = np.random.default_rng(T * 1000 + K)
    k, v, q = rng.normal(size=(T, K)), rng.normal(size=(T, V)), rng.normal(size=K)
    by_tokens = lesson.linear_read(q, k, v)
    S = lesson.table(k, v)
    assert S.shape == (K, V) and by_tokens.dtype == np.float64
    np.testing.assert_allclose(lesson.table_read(S, q), by_tokens, rtol=0, atol=1e-12)
    np.testing.assert_allclose(S, k.T @ v, rtol=0, atol=1e-12)                       # the matrix form
    # the other way round: one token at a time into the table, read at the end
    S_running = np.zeros((K, V))
    for j in range(T):
        S_running += np.outer(k[j], v[j])
    np.testing.assert_allclose(q @ S_running, by_tokens, rtol=0, atol=1e-12)


def test_softmax_weights_are_a_distribution_over_the_past():
    ex = lesson.example(T=5, K=3, V=3, seed=4)
    w, o = lesson.softmax_read(ex.q, ex.k, ex.v)
    scores = np.array([ex.q @ kj for kj in ex.k]) / np.sqrt(3)
    np.testing.assert_allclose(w, np.exp(scores) / np.exp(scores).sum(), atol=1e-15)
    np.testing.assert_allclose(o, (w[:, None] * ex.v).sum(0), atol=1e-15)
    assert lesson.numbers_kept(1000, 128, 128) == {"kv_cache": 256000, "table": 16384}


# ---- shapes ----------------------------------------------------------------------------------

def disk_shapes(folder) -> dict[str, tuple]:
    out = {}
    for path in folder.glob("*.safetensors"):
        with safe_open(str(path), "pt") as f:
            for name in f.keys():
                out[name] = tuple(f.get_slice(name).get_shape())
    return out


@pytest.mark.parametrize("folder", MODELS)
def test_box_weights_match_the_safetensors_headers(folder):
    model = load_model(folder, lazy=True)
    cfg, disk = model.cfg, disk_shapes(folder)
    boxes = lesson.block_shapes(cfg)
    gdn_layers = list(cfg.gdn_layers)
    checked = set()
    for i in gdn_layers:
        for box in boxes.values():
            for name, shape in box.weights.items():
                assert disk[f"model.language_model.layers.{i}.linear_attn.{name}"] == shape, (box.id, name)
                checked.add(name)
    # every tensor of a GDN layer's mixer is drawn in some box
    mixer = f"model.language_model.layers.{gdn_layers[0]}.linear_attn."
    assert checked == {n.split("linear_attn.")[1] for n in disk if n.startswith(mixer)}


@pytest.mark.parametrize("folder", MODELS)
def test_box_outputs_match_the_tensors_a_forward_makes(folder):
    model = load_model(folder)
    T = 5
    x = torch.randn(1, T, model.cfg.hidden_size)
    first_gdn = model.cfg.layer_types.index("linear_attention")       # the trained demo starts with attention
    mixer = model.model.layers[first_gdn].linear_attn
    q, k, v, g, beta, _ = mixer.kernel_inputs(x)
    out, cache, _ = mixer(x)
    boxes = lesson.block_shapes(model.cfg)
    sub = lambda b: tuple(T if d == "T" else d for d in boxes[b].output)
    assert (1, *sub("in_qkv")) == tuple(mixer.in_proj_qkv(x).shape)
    assert (1, *sub("in_z")) == tuple(mixer.in_proj_z(x).shape)
    assert (1, *sub("l2")) == tuple(q.shape) == tuple(k.shape)
    assert (1, *sub("alpha")) == tuple(g.shape) == tuple(beta.shape)
    assert (1, *sub("out")) == tuple(out.shape)
    assert (1, *lesson.state_shape(model.cfg)) == tuple(cache.state.shape)


def test_08b_shapes_agree_with_the_reference_and_transformers():
    cfg = config_08b()
    boxes = lesson.block_shapes(cfg)
    # docs/qwen35.md, Released sizes: a header test of the real 0.8B checkpoint
    assert boxes["in_qkv"].weights["in_proj_qkv.weight"] == (6144, 1024)
    assert boxes["alpha"].weights["A_log"] == (16,)
    assert lesson.state_shape(cfg) == (16, 128, 128)
    # the loader's own expectation, and transformers' module built on the meta device
    expected = {n.split("linear_attn.")[1]: s for n, s in layer_shapes(cfg, 0).items() if "linear_attn." in n}
    ours = {n: s for b in boxes.values() for n, s in b.weights.items()}
    assert ours == expected
    from transformers import Qwen3_5TextConfig
    from transformers.models.qwen3_5.modeling_qwen3_5 import Qwen3_5GatedDeltaNet
    hf_cfg = Qwen3_5TextConfig(**{k: v for k, v in load_sizes()["Qwen3.5-0.8B"].items() if not k.startswith("_")})
    with torch.device("meta"):
        hf = Qwen3_5GatedDeltaNet(hf_cfg, layer_idx=0)
    assert {n: tuple(p.shape) for n, p in hf.named_parameters()} == ours


# ---- live values -----------------------------------------------------------------------------

def test_live_values_equal_the_trace():
    model = load_model(TRAINED_PATH)
    ids = model.tokenizer.encode(PROMPT["en"]).ids
    trace = model.trace(ids)
    from gdn.qwen35.analysis import layer_inputs, layer_state_norms
    for layer in trace.gdn_layers():
        x = layer_inputs(model, ids, layer)
        arrays = {"q": x.q[0].numpy(), "k": x.k[0].numpy(), "v": x.v[0].numpy(), "g": x.g[0].numpy(),
                  "beta": x.beta[0].numpy(), "state_norm": layer_state_norms(x)}
        lt = trace.layers[layer]
        block = model.model.layers[layer]
        x_in = trace.layers[layer - 1].output if layer else trace.embeddings
        q, k, v, *_ = block.linear_attn.kernel_inputs(block.input_layernorm(x_in[None]))
        for t, head in [(0, 0), (len(ids) // 2, 1), (len(ids) - 1, model.cfg.linear_num_value_heads - 1)]:
            live = lesson.token_values(**arrays, t=t, head=head)
            kh = head // (model.cfg.linear_num_value_heads // model.cfg.linear_num_key_heads)
            assert live["alpha"] == pytest.approx(float(lt.alpha[t, head]), rel=1e-6)
            assert live["beta"] == pytest.approx(float(lt.beta[t, head]), rel=1e-6)
            assert live["state_norm"] == pytest.approx(float(lt.state_norms[t, head]), rel=1e-4)
            assert live["q_norm"] == pytest.approx(float(q[0, t, kh].norm()), rel=1e-5)
            assert live["k_norm"] == pytest.approx(float(k[0, t, kh].norm()), rel=1e-5)
            assert live["v_norm"] == pytest.approx(float(v[0, t, head].norm()), rel=1e-5)
            cos = float((l2_normalize(q[0, t, kh]) * l2_normalize(k[0, t, kh])).sum())
            assert live["cos_qk"] == pytest.approx(cos, abs=1e-5)
            assert live["k_hat_norm"] == pytest.approx(1.0, abs=1e-3)


# ---- figures ---------------------------------------------------------------------------------

def number(text: str) -> float:
    return float(text.strip().replace("−", "-"))


def test_block_diagram_has_one_click_target_per_box_inside_the_drawing():
    markup = block_html({b: f"<b>{b}</b><br><i>x < 1</i>" for b in LAYOUT}, {b: f"open {b}" for b in LAYOUT})
    boxes = select(markup, class_="blk-box")
    assert [n.attrs["data-open"] for n in boxes] == list(LAYOUT)
    for node in boxes:                                               # every box lies inside the drawing
        style = dict(p.split(":") for p in node.attrs["style"].split(";"))
        left, top, width, height = (float(style[k].rstrip("%")) for k in ("left", "top", "width", "height"))
        assert left >= 0 and top >= 0 and left + width <= 100 and top + height <= 100, node.attrs
        assert node.attrs["title"] == f"open {node.attrs['data-open']}"
    assert "x &lt; 1" in markup and "<b>delta</b>" in markup          # text escaped, the few tags kept


def test_the_diagram_writes_the_memory_pages_update_rule():
    plain = lambda markup: re.sub(r"\s+", "", "".join(n.text for n in elements(markup)[:1]))
    assert plain(CLOSED_FORM_HTML) in plain(f"<div>{DELTA_RULE}</div>")
    assert "S<sub>t−1</sub>" in DELTA_RULE and "S<sub>t</sub><sup>⊤</sup>q" in DELTA_RULE   # S is d_k x d_v, read S^T q


def test_stack_rows_run_top_down_with_each_note_beside_the_first_layer_of_its_kind():
    kinds = ["linear_attention"] * 3 + ["full_attention"]
    markup = stack_html(kinds * 2, names={"linear_attention": "GDN {i}", "full_attention": "attn {i}"},
                        notes={"linear_attention": "fixed<br>state", "full_attention": "grows"})
    rows = select(markup, class_="stk-row")
    assert [r.children[0].text for r in rows] == [f"{'attn' if i % 4 == 3 else 'GDN'} {i}" for i in reversed(range(8))]
    notes = {r.children[0].text: r.children[1].text for r in rows if r.children[1].text}
    assert notes == {"GDN 0": "fixedstate", "attn 3": "grows"}


LABELS = {"t1": "1", "t2": "{sum} = {table}", "t3": "3", "token": "k<sub>{j}</sub>", "token_axis": "j",
          "value_axis": "v", "key_axis": "k", "diff": "diff", "share": "share {j}", "hint": "hint"}


@pytest.mark.parametrize("T,seed", [(1, 0), (4, 1), (12, 7)])
def test_attention_figure_links_each_tokens_weight_term_and_share(T, seed):
    """Token j's bar, row and shares all carry data-link=j, with its own numbers: checked against a
    softmax, dot products and outer products computed here."""
    ex = lesson.example(T=T, seed=seed)
    r = lesson.reads(ex)
    markup = attention_html(r.weights, r.scores, r.terms, r.o_sum, r.o_table, r.S, r.outer, labels=LABELS)
    scores = ex.k @ ex.q
    softmax = np.exp(scores / np.sqrt(3)) / np.exp(scores / np.sqrt(3)).sum()
    for j in range(T):
        bar, = select(markup, class_="att-bar", data_link=str(j))
        assert float(bar.attrs["data-w"]) == pytest.approx(softmax[j], rel=1e-12)
        assert number(bar.children[0].text) == pytest.approx(softmax[j], abs=0.005)
        row, = select(markup, class_="term", data_link=str(j))
        cells = [number(n.text) for n in row.children[1:]]
        np.testing.assert_allclose(cells, [scores[j], *(scores[j] * ex.v[j])], atol=0.005)
        shares = np.array([number(n.text) for n in select(markup, class_="share", data_link=str(j))])
        np.testing.assert_allclose(shares, np.outer(ex.k[j], ex.v[j]).ravel(), atol=0.005)
        assert len(select(markup, class_="att-term", data_link=str(j))) == 1
    totals = lambda name: [number(n.text) for n in select(markup, data_total=name)]
    np.testing.assert_allclose(totals("sum"), (scores[:, None] * ex.v).sum(0), atol=0.005)
    np.testing.assert_allclose(totals("table"), totals("sum"), atol=1e-12)
    whole = [number(n.text) for n in select(markup, class_="whole")]
    np.testing.assert_allclose(whole, (ex.k.T @ ex.v).ravel(), atol=0.005)


def test_numbers_never_print_minus_zero():
    from gdn.figures.start_attention import num
    assert (num(-0.001), num(-0.5), num(0.004)) == ("0.00", "−0.50", "0.00")


# ---- the page --------------------------------------------------------------------------------

def explorer_frames(at, key: str) -> tuple[dict, dict]:
    """The explorer mounted under `key` (app_pages/_support/explorer.py): (its data, {"i,j": html})."""
    return player_payload(at, key)


def box_text(at, box: str) -> str:
    _, frames = explorer_frames(at, "start_block_explorer")
    node, = select(frames[""], data_open=box)
    return node.text


@pytest.mark.parametrize("lang,title", [("zh", "从这里开始"), ("en", "Start here")])
def test_root_opens_the_start_page_in_both_languages(lang, title):
    at = open_app(lang)
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value.startswith(title)
    data, frames = explorer_frames(at, "start_attention_explorer")
    assert len(frames) == 12 * 20 and data["index"] == [5, 0]        # T = 1..12 x 20 examples, T = 6 shown
    weights = [float(n.attrs["data-w"]) for n in select(frames["5,0"], class_="att-bar")]
    assert len(weights) == 6 and sum(weights) == pytest.approx(1.0)
    assert "[T, 6144]" in box_text(at, "in_qkv")                     # 0.8B shapes when nothing is loaded
    stack = [e for e in at.get("html") if "gdn-stack" in e.proto.body]
    assert len(select(stack[0].proto.body, class_="stk-row")) == 24


def test_live_values_on_the_page_are_the_traced_ones():
    at = open_app("en", start_layer="1", start_head="2", start_t="5", start_shapes="demo")
    assert not at.exception
    cfg = load_model(TRAINED_PATH).cfg
    qkv = 2 * cfg.linear_num_key_heads * cfg.linear_key_head_dim + cfg.linear_num_value_heads * cfg.linear_value_head_dim
    assert f"[T, {qkv}]" in box_text(at, "in_qkv")                # the trained demo's own sizes
    model = load_model(TRAINED_PATH)
    trace = model.trace(model.tokenizer.encode(PROMPT["en"]).ids)
    beta = float(trace.layers[1].beta[5, 2])
    alpha = float(trace.layers[1].alpha[5, 2])
    assert f"β = {beta:.3f}" in box_text(at, "beta")
    assert f"α = {alpha:.3f}" in box_text(at, "alpha")
    shown = re.search(r"‖S_t‖ = ([0-9.]+)", box_text(at, "delta")).group(1)
    assert float(shown) == pytest.approx(float(trace.layers[1].state_norms[5, 2]), abs=0.006)


def test_links_reopen_the_example_and_bad_values_fall_back():
    at = open_app("en", start_T="3", start_seed="7")
    data, frames = explorer_frames(at, "start_attention_explorer")
    assert data["index"] == [2, 7] and at.session_state["start_seed"] == 7
    assert len(select(frames["2,7"], class_="att-bar")) == 3
    kinds = list(load_model(TRAINED_PATH).cfg.layer_types)
    attention = kinds.index("full_attention")
    at = open_app("zh", start_T="99", start_seed="1e400", start_shapes="x", start_layer=str(attention), start_t="-1",
                  mode="lecture")
    assert not at.exception
    assert (at.session_state["start_T"], at.session_state["start_seed"]) == (6, 0)
    assert at.session_state["start_layer"] == kinds.index("linear_attention")    # an attention layer has no gates
