"""Memory cost: bytes from the config dicts against hand-written formulas and the reference table; AppTest; browser."""
import json

import numpy as np
import pytest

from gdn.i18n import t
from gdn.lessons import cost
from tests.apptest import open_app

SIZES = cost.load_sizes()
# docs/qwen35.md, Released sizes: (L, full, linear, conv_dim)
TABLE = {"Qwen3.5-0.8B": (24, 6, 18, 6144), "Qwen3.5-2B": (24, 6, 18, 6144), "Qwen3.5-4B": (32, 8, 24, 8192),
         "Qwen3.5-9B": (32, 8, 24, 8192), "Qwen3.5-27B": (64, 16, 48, 10240),
         "Qwen3.5-35B-A3B": (40, 10, 30, 8192), "Qwen3.5-397B-A17B": (60, 15, 45, 12288)}


def test_every_size_matches_the_reference_table():
    assert list(SIZES) == list(TABLE)
    for name, (L, full, linear, conv_dim) in TABLE.items():
        cfg = SIZES[name]
        assert cost.layer_counts(cfg) == (linear, full) and cfg["num_hidden_layers"] == L
        assert cost.conv_cache_bytes(cfg, dtype="bf16") == conv_dim * 3 * 2


def test_qwen35_08b_teaching_numbers():
    cfg = SIZES["Qwen3.5-0.8B"]
    assert cost.state_bytes(cfg, dtype="fp32") == 16 * 128 * 128 * 4 == 2 ** 20    # 1 MiB in fp32
    assert cost.kv_bytes_per_token(cfg, dtype="fp32") == 2 * 2 * 256 * 4 == 4096   # 4 KiB per token
    assert cost.state_bytes(cfg) == 2 ** 19 and cost.kv_bytes_per_token(cfg) == 2048  # bf16, as Qwen3.5 ships
    assert cost.crossover_tokens(cfg) == 256
    assert cost.state_bytes(cfg, batch=3, dtype="bf16") == 3 * 2 ** 19
    assert cost.fmt_bytes(2 ** 20) == "1 MiB" and cost.fmt_bytes(4096) == "4 KiB" and cost.fmt_bytes(12) == "12 B"


@pytest.mark.parametrize("name", list(SIZES))
@pytest.mark.parametrize("interval", [0, 1, 3, 4])
def test_curves_against_an_independent_formula(name, interval):
    cfg = SIZES[name]
    T = np.array([1, 100, 4096, 262144])
    B, s = 2, 2
    L = cfg["num_hidden_layers"]
    n_attn = sum((i + 1) % interval == 0 for i in range(L)) if interval else 0      # the layer_types rule
    state = (L - n_attn) * B * cfg["linear_num_value_heads"] * 128 * 128 * s
    kv = n_attn * 2 * B * T * cfg["num_key_value_heads"] * 256 * s
    c = cost.memory_curves(cfg, T, batch=B, dtype="bf16", interval=interval)
    np.testing.assert_array_equal(c["state"], state)
    np.testing.assert_array_equal(c["hybrid"], state + kv)
    np.testing.assert_array_equal(c["full"], L * 2 * B * T * cfg["num_key_value_heads"] * 256 * s)
    x = cost.kv_passes_state_tokens(cfg, interval)
    if 0 < x < np.inf:
        at = cost.memory_curves(cfg, np.array([x]), interval=interval)
        assert at["kv"][0] == pytest.approx(at["state"][0])
    cross = cost.crossover_tokens(cfg)
    at = cost.memory_curves(cfg, np.array([cross]), interval=interval)
    assert at["hybrid"][0] == pytest.approx(at["full"][0])                         # hybrid = all-attention there


def test_formulas_against_the_byte_counts():
    cfg = SIZES["Qwen3.5-27B"]
    f = cost.formula_latex(cfg, batch=3, dtype="bf16")
    HV, K, V, Hkv, hd = (cfg[k] for k in ("linear_num_value_heads", "linear_key_head_dim", "linear_value_head_dim",
                                          "num_key_value_heads", "head_dim"))
    assert f"= 3 \\cdot {HV} \\cdot {K} \\cdot {V} \\cdot 2\\,\\mathrm{{B}}" in f["state"]
    assert f["state"].endswith(cost.fmt_bytes(3 * HV * K * V * 2).replace(" ", "\\,\\mathrm{") + "}")
    assert f"= 2 \\cdot 3 \\cdot {Hkv} \\cdot {hd} \\cdot 2\\,\\mathrm{{B}}" in f["kv"]
    assert f["cross"].endswith(f"{HV * K * V // (2 * Hkv * hd):,}".replace(",", "{,}"))


@pytest.mark.parametrize("lecture", [False, True])
def test_mark_labels_sit_above_the_plot_one_row_each(lecture):
    """Labels inside the plot collided with the curves: every mark label is above the plot area, on a
    row of its own, at its mark's T (an annotation's x on a log axis is log10 T)."""
    from gdn.figures.cost import fig_cost
    cfg = SIZES["Qwen3.5-0.8B"]
    T = np.geomspace(1, 2 ** 18, 50)
    marks = [(256.0, "a", "#000"), (768.0, "b", "#000"), (32768.0, "c", "#000"), (512.0, "d", "#000"), (1e7, "out", "#000")]
    fs = 22 if lecture else 14
    fig = fig_cost(T, cost.memory_curves(cfg, T), marks, labels={k: k for k in ("state", "kv", "hybrid", "full", "x", "y")},
                   font_size=fs, height=560 if lecture else 500)
    y_title, *notes = fig.layout.annotations
    assert (y_title.text, y_title.textangle, y_title.yanchor, y_title.yshift) == ("y", None, "bottom", round(0.6 * fs) + 2)
    assert fig.layout.yaxis.title.text is None                                     # drawn horizontally, above the axis
    assert [a.text.strip("┆ ") for a in notes] == ["a", "b", "c", "d"]               # 1e7 is outside the T range
    assert [a.x for a in notes] == pytest.approx(np.log10([256, 768, 32768, 512]))
    # in pixels above the plot's top edge (y = 1), so they stay put at any drawn height
    assert all(a.y == 1 and a.yref == "paper" and a.yanchor == "middle" for a in notes)
    ys = [a.yshift for a in notes]
    # above the y title's line box (1.3 lines from its yshift up), each label's box (1.3 lines about its middle)
    # on a row of its own: the prompt's label, starting where the title ends, touched it at half a line less
    assert min(ys) - 0.65 * fs >= y_title.yshift + 1.3 * fs and len(set(ys)) == len(ys)
    row = min(abs(a - b) for a in ys for b in ys if a != b)
    assert row >= fs                                                               # rows at least one text line apart
    assert max(ys) + fs / 2 <= fig.layout.margin.t                                 # the top row fits in the margin
    # the legend hangs from the figure's bottom edge, under the tick labels and axis title (3 lines)
    assert (fig.layout.legend.yref, fig.layout.legend.y, fig.layout.legend.yanchor) == ("container", 0, "bottom")
    assert fig.layout.margin.b >= 3 * fs + 2 * (fs + 4)
    assert [a.xanchor for a in notes] == ["center", "center", "right", "center"]    # runs away from the nearer edge
    assert list(fig.layout.xaxis.ticktext) == ["1", "10", "100", "1k", "10k", "100k"]  # decades, no exponents


def metrics(at):
    return [m.value for m in at.metric]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_page_controls(lang):
    at = open_app(lang, "app_pages/cost.py")
    assert not at.exception
    assert metrics(at) == ["393 MiB", "1.5 GiB", "512 KiB", "2 KiB"]                # bf16: 9 MiB + 6*2 KiB*32768
    assert t("cost.sizes_in", lang, dtype="bf16", s=2) in " ".join(c.value for c in at.caption)   # the format is named
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert spec["layout"]["xaxis"]["type"] == "log" and spec["layout"]["yaxis"]["type"] == "log"
    assert any("256" in a["text"] for a in spec["layout"]["annotations"])           # the crossover is marked
    formulas = " ".join(m.value for m in at.markdown)                              # real LaTeX, numbers put in
    assert r"$B \cdot H_v \cdot d_k \cdot d_v \cdot s = 1 \cdot 16 \cdot 128 \cdot 128 \cdot 2\,\mathrm{B} = 512\,\mathrm{KiB}$" in formulas
    assert r"\frac{H_v \cdot d_k \cdot d_v}{2 \cdot H_{\mathrm{kv}} \cdot d_{\mathrm{head}}} = 256$" in formulas
    assert "H_v·d_k" not in formulas and "head_dim" not in formulas
    at.segmented_control(key="cost_dtype").set_value("fp32").run()
    at.number_input(key="cost_batch").set_value(8).run()
    assert metrics(at)[2:] == ["8 MiB", "32 KiB"]
    for interval in (0, 1):
        at.select_slider(key="cost_interval").set_value(interval).run()
        assert not at.exception
    assert metrics(at)[0] == metrics(at)[1]                                         # all attention = full
    at.selectbox(key="cost_model").set_value("Qwen3.5-397B-A17B").run()
    at.select_slider(key="cost_T").set_value(1).run()
    assert not at.exception and len(at.table[0].value) == len(SIZES)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_lecture_mode_names_the_model_in_the_title(lang):
    """In lecture mode the pickers fold into the sidebar, so the room reads the model from the title."""
    at = open_app(lang, "app_pages/cost.py", mode="lecture")
    assert [x.value for x in at.title] == [t("cost.title_for", lang, model="Qwen3.5-0.8B")]
    at.selectbox(key="cost_model").set_value("Qwen3.5-9B").run()
    assert "Qwen3.5-9B" in at.title[0].value
    assert [x.value for x in open_app(lang, "app_pages/cost.py").title] == [t("cost.title", lang)]


def test_page_marks_the_real_model_prompt():
    at = open_app("en", "app_pages/cost.py")
    at.session_state["real_model_prompt_tokens"] = 512
    at.run()
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert any("your prompt: 512" in a["text"] for a in spec["layout"]["annotations"])
    assert any(d.get("x") == [512, 512] for d in spec["data"])                      # and its line at T = 512


@pytest.mark.browser
def test_browser_cost_slider_changes_a_number(page, app_url):
    from devtools.app_server import open_page

    open_page(page, f"{app_url}/cost?lang=en")
    metric = page.locator('[data-testid="stMetricValue"]').nth(0)                 # the hybrid total at T
    before = metric.inner_text()
    page.locator('[data-testid="stSlider"]', has_text="Context length").get_by_role("slider").press("Home")
    page.wait_for_function("(b) => document.querySelectorAll('[data-testid=\"stMetricValue\"]')[0].innerText !== b",
                           arg=before, timeout=20_000)
    assert metric.inner_text() != before
    assert not page.problems, page.problems


def test_every_page_quotes_the_same_bf16_sizes():
    """Start, cost and classroom quote Qwen3.5-0.8B's per-layer memory through one function, in bf16; here
    the sizes are multiplied out again from the released config file itself (2 bytes a number)."""
    from gdn.lessons.classroom import crossover_fields
    from gdn.lessons.start import memory_per_kind
    from gdn.qwen35.config import parse_config

    raw = json.loads(cost.SIZES_FILE.read_text(encoding="utf-8"))["sizes"]["Qwen3.5-0.8B"]
    state = raw["linear_num_value_heads"] * raw["linear_key_head_dim"] * raw["linear_value_head_dim"] * 2
    kv = 2 * raw["num_key_value_heads"] * raw["head_dim"] * 2
    assert (state, kv) == (512 * 1024, 2 * 1024)
    assert cost.SHIPPED_DTYPE == "bf16"
    assert cost.layer_memory(raw) == {"state": state, "kv_per_token": kv, "dtype": "bf16", "element_bytes": 2}
    per = memory_per_kind(parse_config({"model_type": "qwen3_5_text", **raw}, source="test"))
    assert per == {"linear_attention": (state, 0), "full_attention": (0, kv)}
    f = crossover_fields()
    assert (f["state"], f["kv"], f["dtype"], f["s"]) == ("512 KiB", "2 KiB", "bf16", 2)
    for lang in ("zh", "en"):                   # the start page's story and the cost page's metrics say the same
        start = open_app(lang, "app_pages/start.py", start_shapes="q08")
        story = next(m.value for m in start.markdown if "bf16" in m.value and "**24**" in m.value)
        L_gdn, L_attn = 18, 6
        assert cost.fmt_bytes(L_gdn * state) in story and cost.fmt_bytes(L_attn * kv) in story
        page = open_app(lang, "app_pages/cost.py")
        assert metrics(page)[2:] == ["512 KiB", "2 KiB"]
        assert "bf16" in " ".join(c.value for c in page.caption)
        lecture = open_app(lang, "app_pages/cost.py", mode="lecture")            # captions hidden: the labels say it
        assert all("bf16" in m.label for m in lecture.metric[2:])
