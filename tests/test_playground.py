"""Playground: every experiment against an independent computation, AppTest at the slider extremes, browser."""
import json
import math
import re

import numpy as np
import pytest
import torch

from gdn.i18n import t
from gdn.lessons import playground as ex
from gdn.ops import recurrent_gated_delta_rule
from gdn.units import half_life
from tests.apptest import open_app, player_payload
from tests.htmlview import select

# docs/teaching-content.md §4 (seed 0, d_k = d_v = 128): N -> (linear, deltanet, deltanet recent 16, deltanet oldest 16), in %
REFERENCE = {256: (143, 100, 31, 131), 1024: (283, 131, 33, 145)}


@pytest.mark.parametrize("N", [256, 1024])
def test_capacity_default_settings_reproduce_the_reference(N):
    lin = ex.capacity_curve("linear", 128, 128, Ns=(N,))[0]
    delta = ex.capacity_curve("deltanet", 128, 128, Ns=(N,))[0]
    got = 100 * np.array([lin[0], delta[0], delta[1], delta[2]])
    np.testing.assert_allclose(got, REFERENCE[N], atol=3.0)       # same protocol; the reference is rounded


def test_recall_errors_match_the_kernel_and_the_linear_closed_form():
    keys, values = ex.capacity_stream(200, 32, 16, seed=1)
    t = lambda x: torch.tensor(x)[None, :, None]                      # [1, N, 1, ...] float64
    ones = torch.ones(1, 200, 1, dtype=torch.float64)
    for rule, g in (("deltanet", 0.0), ("gdn", np.log(0.98))):
        _, S = recurrent_gated_delta_rule(t(keys), t(keys), t(values), g=ones * g, beta=ones, scale=1.0,
                                          output_final_state=True)
        S = S[0, 0].numpy()                                           # [K, V]
        want = np.linalg.norm(keys @ S - values, axis=1) / np.linalg.norm(values, axis=1)
        np.testing.assert_allclose(ex.recall_errors(rule, keys, values, alpha=0.98), want, atol=1e-10)
    interference = np.einsum("ik,jk,jv->iv", keys, keys, values) - values      # sum_j (k_i.k_j) v_j - v_i
    want = np.linalg.norm(interference, axis=1) / np.linalg.norm(values, axis=1)
    np.testing.assert_allclose(ex.recall_errors("linear", keys, values), want, atol=1e-10)
    assert ex.capacity_stream(5, 8, 3)[0] == pytest.approx(ex.unit_rows(np.random.RandomState(0).randn(5, 8)))


@pytest.mark.parametrize("K", [16, 128])
@pytest.mark.parametrize("geometry", ["random", "orthogonal"])
@pytest.mark.parametrize("rule", ex.RULES)
def test_capacity_curve_equals_the_step_by_step_recurrence(rule, geometry, K):
    """capacity_curve reads the unrolled form (cached M, then matmuls); recall_errors steps one pair at a
    time. N = 1024 >> K: the oldest keys are projected away almost entirely (M_i ~ 1e-16 at K = 16)."""
    Ns, V = (8, 96, 1024), 24
    for alpha in (0.0, 0.5, 0.99, 1.0):
        want = []
        for N in Ns:
            e = ex.recall_errors(rule, *ex.capacity_stream(N, K, V, seed=3, geometry=geometry), alpha=alpha)
            got = ex.capacity_errors(rule, N, K, V, alpha=alpha, seed=3, geometry=geometry)
            np.testing.assert_allclose(got, e, rtol=0, atol=1e-12)    # absolute: the newest pair's error is ~1e-16
            want.append((e.mean(), e[-ex.SPLIT:].mean(), e[:ex.SPLIT].mean()))
        got = ex.capacity_curve(rule, K, V, alpha=alpha, seed=3, geometry=geometry, Ns=Ns)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-14)  # atol: orthogonal keys recall to ~1e-16


def test_unrolled_keys_are_the_projected_keys_and_the_delta_state_of_one_hot_values():
    N, K = 40, 8                                                      # N > K: later keys project earlier ones away
    keys = ex.capacity_stream(N, K, 1, seed=5)[0]
    M = ex.unrolled_keys(N, K, 5, "random")                           # [N, K]
    want, Q = np.zeros((N, K)), np.eye(K)                             # Q = P_N ... P_{i+1}, built from the end
    for i in range(N - 1, -1, -1):
        want[i] = Q @ keys[i]
        Q = Q @ (np.eye(K) - np.outer(keys[i], keys[i]))
    np.testing.assert_allclose(M, want, atol=1e-13)
    S = np.zeros((K, N))                                              # the delta rule, beta = 1, values = identity
    for k, v in zip(keys, np.eye(N)):
        S += np.outer(k, v - S.T @ k)
    np.testing.assert_allclose(M, S.T, atol=1e-13)
    assert np.linalg.norm(M, axis=1).max() <= 1 + 1e-12               # projections never lengthen a key


def test_capacity_caches_are_read_only_and_keys_do_not_depend_on_d_v():
    M = ex.unrolled_keys(32, 16, 0, "random")
    assert ex.unrolled_keys(32, 16, 0, "random") is M                 # cached
    with pytest.raises(ValueError):
        M[0, 0] = 1.0                                                 # a caller can not corrupt the cache
    for geometry in ("random", "orthogonal"):
        narrow, wide = (ex.capacity_stream(32, 16, V, seed=2, geometry=geometry)[0] for V in (4, 64))
        np.testing.assert_array_equal(narrow, wide)                   # keys first, values after: M can ignore d_v
    with pytest.raises(ValueError):
        ex.capacity_curve("softmax", 16, 16)


def test_orthogonal_keys_up_to_d_k_are_recalled_exactly():
    for rule in ("linear", "deltanet"):
        assert ex.capacity_curve(rule, 128, 128, geometry="orthogonal", Ns=(128,))[0, 0] < 1e-10
    assert ex.capacity_curve("deltanet", 16, 16, geometry="orthogonal", Ns=(64,))[0, 0] > 0.3   # no more room


def test_repeated_writes_halve_and_drift():
    d = ex.repeated_writes(10, beta=0.5)
    t = np.arange(11)
    np.testing.assert_allclose(d["deltanet"], 0.5 ** t, atol=1e-12)
    np.testing.assert_allclose(d["linear"], np.abs(t * 0.5 - 1), atol=1e-12)  # reads t*beta*v
    for beta, c in ((1.0, 1.3), (0.7, 2.0), (0.3, 0.5)):
        d = ex.repeated_writes(6, beta=beta, knorm=c)["deltanet"]
        np.testing.assert_allclose(d, np.abs(1 - beta * c * c) ** np.arange(7), rtol=1e-9)
    np.testing.assert_allclose(ex.along_k_factor([0, 1, np.sqrt(2)], 1.0), [1, 0, -1], atol=1e-12)


def test_explosions_are_clipped_never_nan():
    d = ex.repeated_writes(30, beta=1.0, knorm=3.0)["deltanet"]          # factor -8: 8^30
    shown, clipped = ex.clip_for_display(d)
    assert clipped and np.isfinite(shown).all() and shown.max() == ex.EXPLODE
    shown, clipped = ex.clip_for_display(np.array([1.0, np.inf, np.nan, -np.inf]))
    assert clipped and np.isfinite(shown).all()
    assert ex.clip_for_display(np.array([0.5, 2.0]))[1] is False


def test_half_life_and_decay_curves():
    assert half_life(0.97) == pytest.approx(np.log(0.5) / np.log(0.97)) and round(half_life(0.97)) == 23
    assert half_life(1.0) == np.inf and half_life(0.0) == 0.0
    c = ex.decay_curves([0.9, 0.5, 0.0, 1.0], 50)
    for row, alpha in zip(c, (0.9, 0.5, 0.0, 1.0)):
        np.testing.assert_allclose(row, [kept(alpha, n) for n in range(51)], rtol=1e-12, atol=0)
    with pytest.raises(ValueError):
        half_life(1.5)


def test_overwrite_split_is_exact():
    # orthogonal unit keys, beta = 1: the delta rule overwrites exactly, linear attention keeps the old value
    ow = ex.overwrite(3, 4, 3, geometry="orthogonal")
    assert ow.error[1] == pytest.approx(0, abs=1e-12) and ow.parts[0, 1] == pytest.approx(0, abs=1e-12)
    assert ow.parts[0, 0] == pytest.approx(np.linalg.norm(ow.old) / np.linalg.norm(ow.target))
    # two keys at 60 degrees, linear attention: interference = cos(60) |v_2| / |v_new|
    ow = ex.overwrite(2, 2, 2, geometry="angle", angle_deg=60)
    v2 = np.round(np.random.default_rng(1).normal(size=(3, 2)), 1)[1]
    assert ow.parts[0, 1] == pytest.approx(0.5 * np.linalg.norm(v2) / np.linalg.norm(ow.target))
    assert ow.cosine[0, 1] == pytest.approx(0.5)
    # beta = 0 writes nothing: all of the new value is missed
    ow = ex.overwrite(3, 3, 2, beta=0.0)
    np.testing.assert_allclose(ow.readout, 0, atol=1e-12)
    np.testing.assert_allclose(ow.parts[:, 2], 1.0)
    np.testing.assert_allclose(ow.error, 1.0)


@pytest.mark.parametrize("geometry,angle", [("orthogonal", 90), ("angle", 30), ("angle", 150), ("random", 90)])
def test_overwrite_signed_parts_stack_exactly_to_the_error(geometry, angle):
    """The bars the page stacks: each part's component along the error. Recomputed here from the readout
    and the three pieces written out by hand (old row weight, other keys, missed new value)."""
    ow = ex.overwrite(4, 3, 3, geometry=geometry, angle_deg=angle, alpha=0.8, beta=0.6, knorm=1.2)
    np.testing.assert_allclose(ow.along.sum(axis=1), ow.error, atol=1e-12)
    np.testing.assert_allclose(np.abs(ow.along) <= ow.parts + 1e-12, True)   # a component is never longer than its part


def test_overwrite_parts_add_up_to_the_error_vector():
    for geometry in ex.GEOMETRIES:
        ow = ex.overwrite(4, 3, 5, geometry=geometry, alpha=0.8, beta=0.6, knorm=1.4, angle_deg=30)
        # triangle inequality both ways: parts can not be smaller than the error they add up to
        assert (ow.parts.sum(axis=1) + 1e-12 >= ow.error).all()
        assert np.isfinite(ow.parts).all() and np.isfinite(ow.disturbed).all()


def charts(at):
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def assert_clean(at):
    assert not at.exception
    for spec in charts(at):
        assert "NaN" not in json.dumps(spec) and "Infinity" not in json.dumps(spec)


# Each language takes some of the extremes: a grid is 990 frames built on the server (~4 s each here), and
# its numbers do not depend on the language its text is in.
OVERWRITE_SHAPES = {"zh": [("dk", 2)], "en": [("dv", 8), ("pairs", 8)]}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_overwrite_shape_sliders_at_the_extremes(lang):
    """The example's shape is server-side: each extreme builds its own grid, whose every frame is finite."""
    at = open_app(lang, "app_pages/playground.py", playground_panel="overwrite")
    assert_clean(at)
    _, first = toy(at, "overwrite")
    for name, value in OVERWRITE_SHAPES[lang]:
        at.slider(key=f"playground_overwrite_{name}").set_value(value).run()
        assert_clean(at)
        _, frames = toy(at, "overwrite")
        assert len(frames) == 990 and not any(re.search(r"\b(nan|inf)\b", f, re.I) for f in frames.values()), name
    assert frames != first


def test_page_geometry_angle_and_key_norm_warnings():
    at = open_app("en", "app_pages/playground.py", playground_geometry="angle", playground_overwrite_angle="0")
    assert_clean(at)
    data, frames = toy(at, "overwrite")
    assert [c["key"][len("playground_overwrite_"):] for c in data["controls"]] == ["alpha", "beta", "knorm", "angle"]
    notes = [n.text for n in select(frames[",".join(map(str, data["index"]))], class_="gdn-callout")]
    assert any("|cos|" in n and "1.00" in n for n in notes), notes                # |cos| = 1 at 0 degrees


def overwrite_closed_form(alpha: float, beta: float, c: float, n: int = 3, V: int = 3) -> dict[str, float]:
    """Orthogonal keys of norm c, written once each, then k1 re-written with the target and read: with
    x = beta c^2, linear reads x v_old + x t, DeltaNet (1 - x) x v_old + x t, Gated DeltaNet (each write first
    fades the table by alpha, n of them since v_old) alpha^n (1 - x) x v_old + x t. The gated re-write fades
    key j's read alpha^(n-1-j) x v_j by alpha too: it moves by (1 - alpha) alpha^(n-1-j) x of |v_j|."""
    values = np.round(np.random.default_rng(1).normal(size=(n + 1, V)), 1)     # the lesson's example: seed + 1
    t = np.where(np.abs(values[-1]) < 0.1, 1.0, values[-1])
    old, x = values[0], beta * c * c
    reads = {"linear": x * old + x * t, "deltanet": (1 - x) * x * old + x * t,
             "gdn": alpha ** n * (1 - x) * x * old + x * t}
    got = {r: np.linalg.norm(o - t) / np.linalg.norm(t) for r, o in reads.items()}
    got["disturbed"] = np.mean([(1 - alpha) * alpha ** (n - 1 - j) * x for j in range(1, n)])
    return got


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_overwrite_frames_show_the_closed_form_errors(lang):
    """At grid points of the default example (3 orthogonal keys in 3 dims) the frame's four numbers and
    the staircase's totals are the closed forms above; an old link between grid points (alpha 0.37 as the
    finer slider wrote it) opens the nearest point."""
    at = open_app(lang, "app_pages/playground.py", playground_panel="overwrite", playground_overwrite_alpha="0.37",
                  playground_overwrite_beta="0.5")
    assert_clean(at)
    data, frames = toy(at, "overwrite")
    alphas, betas, norms = (c["values"] for c in data["controls"])
    assert (alphas[data["index"][0]], betas[data["index"][1]], norms[data["index"][2]]) == ("0.4", "0.5", "1.0")
    for a, b, c in ((0.4, 0.5, 1.0), (0.9, 0.3, 1.25), (1.0, 1.0, 1.0), (0.0, 0.7, 0.5), (0.99, 1.0, 2.0)):
        frame = frames[f"{alphas.index(str(a))},{betas.index(str(b))},{norms.index(str(c))}"]
        want = overwrite_closed_form(a, b, c)
        assert metric_values(frame) == {k: f"{v:.0%}" for k, v in want.items()}, (a, b, c)
        totals = [n.text for n in select(frame, data_part="total")]
        assert totals == [f"{want[r]:.0%}" for r in ("linear", "deltanet", "gdn")], (a, b, c)


def toy(at, name: str) -> tuple[dict, dict]:
    """A browser-side toy (app_pages/_playground_toys.py): (the explorer's data, {"i,j,k": html})."""
    return player_payload(at, f"playground_{name}_explorer")


def metric_values(markup: str) -> dict[str, str]:
    return {n.attrs["data-metric"]: n.children[1].text for n in select(markup, class_="metric")}


def kept(alpha: float, n: int) -> float:
    """What is left of a memory after n tokens at decay gate alpha, one token at a time (no power, no log)."""
    left = 1.0
    for _ in range(n):
        left *= alpha
    return left


def half_life_metric_errors(metrics: dict[str, str], alpha: float, lang: str) -> list[str]:
    """The half-life toy's metrics at `alpha` that disagree with an independent derivation: "half" is the n
    where alpha^n = 1/2 (ln 0.5 / ln alpha; the words for never and at once at alpha 1 and 0), to the 0.1
    shown; "after10" and "after50" are kept(alpha, n), to the 3 significant digits shown."""
    wrong = []
    half = metrics.get("half", "")
    if alpha in (0.0, 1.0):
        ok = half == t("playground.hl_at_once" if alpha == 0 else "playground.hl_never", lang)
    else:
        shown = re.fullmatch(re.escape(t("playground.hl_tokens", lang, n="@")).replace("@", r"([\d.]+)"), half)
        ok = shown is not None and abs(float(shown.group(1)) - math.log(0.5) / math.log(alpha)) <= 0.05 + 1e-9
    wrong += [] if ok else ["half"]
    for n in (10, 50):
        want, shown = kept(alpha, n), metrics.get(f"after{n}", "")
        ok = re.fullmatch(r"[\d.e+-]+", shown) is not None and abs(float(shown) - want) <= 5e-3 * want + 1e-300
        wrong += [] if ok else [f"after{n}"]
    return wrong


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_page_half_life_numbers(lang):
    """Every frame's three numbers (101 α) against half_life_metric_errors' derivation; with the toy planted
    to show α^(n−1) (`curves[-1, n - 1]` in _playground_toys.half_life_frame) this failed at α = 0.01."""
    at = open_app(lang, "app_pages/playground.py", playground_panel="halflife", playground_halflife_alpha="0.9")
    assert_clean(at)
    data, frames = toy(at, "halflife")
    values = data["controls"][0]["values"]
    assert len(frames) == len(values) == 101 and values[data["index"][0]] == "0.9"      # the link's α is shown
    for i, value in enumerate(values):
        alpha = float(value)
        assert alpha == pytest.approx(i / 100)
        metrics = metric_values(frames[str(i)])
        assert list(metrics) == ["half", "after10", "after50"]
        assert not half_life_metric_errors(metrics, alpha, lang), (alpha, metrics)


def test_the_half_life_numbers_check_catches_planted_errors():
    """Planted: the numbers an off-by-one (α^9 for α^10), a wrong half-life (1 / (1 − α), the mean life) or
    a blank would show at α = 0.9; the right ones pass."""
    right = {"half": "6.6 个词元", "after10": "0.349", "after50": "0.00515"}
    assert half_life_metric_errors(right, 0.9, "zh") == []
    assert half_life_metric_errors({**right, "after10": "0.387"}, 0.9, "zh") == ["after10"]
    assert half_life_metric_errors({**right, "half": "10.0 个词元"}, 0.9, "zh") == ["half"]
    assert half_life_metric_errors({**right, "after50": ""}, 0.9, "zh") == ["after50"]
    assert half_life_metric_errors({**right, "half": "6.6 tokens"}, 0.9, "zh") == ["half"]
    assert half_life_metric_errors({"half": "永不遗忘", "after10": "1", "after50": "1"}, 1.0, "zh") == []
    assert half_life_metric_errors({"half": "永不遗忘", "after10": "0", "after50": "0"}, 0.0, "zh") == ["half"]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_half_life_story_answer_says_what_the_toy_computes(lang):
    """The story's answer (α = 0.9 after 10 and 50 tokens, its half-life, α = 0.5 after 10) is text: its
    numbers are the inputs and each derived value rounded as written, nothing else."""
    answer = t("playground.hl_story_answer", lang)
    said = {float(x) for x in re.findall(r"\d+(?:\.\d+)?", answer)}
    derived = {round(kept(0.9, 10), 3), round(kept(0.9, 50), 3), round(math.log(0.5) / math.log(0.9), 1),
               round(kept(0.5, 10), 3)}
    assert said == {0.9, 0.5, 10, 50} | derived, answer


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_half_life_frames_draw_alpha_to_the_n(lang):
    """Every frame's red curve is alpha^n at its own alpha (read back from the SVG's pixels), and its
    half-life mark sits on the ½ line at ln 0.5 / ln alpha."""
    from gdn.figures.svg_chart import BOTTOM, LEFT, RIGHT, TOP, H, W
    _, frames = toy(open_app(lang, "app_pages/playground.py", playground_panel="halflife"), "halflife")
    for i in (10, 50, 90, 97, 99):
        alpha = i / 100
        chosen, = select(frames[str(i)], data_series="chosen")
        xy = np.array([[float(v) for v in p.split(",")] for p in chosen.attrs["points"].split()])
        n = (xy[:, 0] - LEFT) / (W - LEFT - RIGHT) * 100
        kept = (H - BOTTOM - xy[:, 1]) / (H - TOP - BOTTOM) * 1.05
        np.testing.assert_allclose(kept, alpha ** n, atol=0.004)
        mark, = select(frames[str(i)], class_="mark")
        assert (float(mark.attrs["cx"]) - LEFT) / (W - LEFT - RIGHT) * 100 == pytest.approx(np.log(0.5) / np.log(alpha), abs=0.1)


def test_repeated_writes_frames_match_the_recurrence_at_every_grid_point():
    """The grid's metrics are each rule's distance after T writes, recomputed here without the lesson:
    the delta rule closes a fraction beta of the gap per write (gated: after fading by alpha), linear
    attention adds beta v."""
    at = open_app("en", "app_pages/playground.py", playground_panel="repeat")
    assert_clean(at)
    data, frames = toy(at, "repeat")
    betas, alphas, writes = ([float(v) for v in c["values"]] for c in data["controls"])
    assert len(frames) == len(betas) * len(alphas) * len(writes)
    v = np.array([3.0, 4.0])
    for key in ("0,0,0", "5,6,7", "10,3,10", "3,1,4", "10,0,2"):
        b, a, T = (g[int(i)] for g, i in zip((betas, alphas, writes), key.split(",")))
        lin, delta, gated = np.zeros(2), np.zeros(2), np.zeros(2)
        for _ in range(int(T)):
            lin = lin + b * v
            delta = delta + b * (v - delta)
            gated = a * gated
            gated = gated + b * (v - gated)
        want = [f"{np.linalg.norm(x - v) / 5:.1%}" for x in (lin, delta, gated)]
        assert list(metric_values(frames[key]).values()) == want, key
        assert "NaN" not in frames[key] and "inf" not in frames[key]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_page_capacity_defaults_show_the_reference(lang):
    at = open_app(lang, "app_pages/playground.py", playground_panel="capacity")
    assert_clean(at)
    table = at.dataframe[0].value
    row = table.iloc[1].tolist()                                      # DeltaNet: all / recent / oldest
    got = [float(x.rstrip("%")) for x in row[1:]]
    np.testing.assert_allclose(got, REFERENCE[256][1:], atol=3.0)
    assert float(table.iloc[0, 1].rstrip("%")) == pytest.approx(REFERENCE[256][0], abs=3.0)
    at.select_slider(key="playground_cap_N").set_value(1024).run()
    got = [float(x.rstrip("%")) for x in at.dataframe[0].value.iloc[1].tolist()[1:]]
    np.testing.assert_allclose(got, REFERENCE[1024][1:], atol=3.0)
    at.select_slider(key="playground_cap_dk").set_value(16).run()
    at.slider(key="playground_capacity_alpha").set_value(0.8).run()
    assert_clean(at)


@pytest.mark.browser
def test_browser_playground_slider_changes_a_number(page, app_url):
    """A server-side slider of the overwrite toy (the example's number of pairs) builds a new grid."""
    from devtools.app_server import open_page

    open_page(page, f"{app_url}/playground?lang=en")
    value = "document.querySelector('.gdn-toy[data-toy=overwrite] .metric[data-metric=linear] .value').textContent"
    page.wait_for_function(value)
    before = page.evaluate(value)
    page.locator('[data-testid="stSlider"]', has_text="stored pairs").get_by_role("slider").press("End")
    page.wait_for_function(f"(b) => {value} !== b", arg=before, timeout=30_000)
    assert not page.problems, page.problems


def test_negative_eigenvalue_opt_in_is_the_key_norm_overshoot():
    """beta = 1.5 on a unit key and beta = 1 on a key of norm sqrt(1.5) are the same write along k."""
    a = ex.repeated_writes(12, beta=1.5, knorm=1.0)["deltanet"]
    b = ex.repeated_writes(12, beta=1.0, knorm=1.5 ** 0.5)["deltanet"]
    np.testing.assert_allclose(a, b, rtol=1e-12)
    np.testing.assert_allclose(a[1:], 0.5 ** np.arange(1, 13))         # |1 - beta| = 0.5 per write, sign flipping
    at = open_app("en", "app_pages/playground.py", playground_panel="knorm")
    assert_clean(at)
    at.toggle(key="playground_knorm_negative").set_value(True).run()
    data, frames = toy(at, "knorm")
    norms, betas, writes = (c["values"] for c in data["controls"])
    assert betas[-1] == "1.9"                                          # the opt-in's wider beta
    frame = frames[f"{norms.index('1.0')},{betas.index('1.5')},{writes.index('10')}"]
    state, *notes = select(frame, class_="gdn-callout")
    assert state.attrs["data-state"] == "overshoot" and "warning" in state.classes
    assert "1 − β = -0.50" in notes[0].text
    at.session_state["playground_knorm_beta"] = 1.5                     # as the relay would set it
    at.toggle(key="playground_knorm_negative").set_value(False).run()    # back off: beta returns into [0, 1]
    assert_clean(at)
    assert at.session_state["playground_knorm_beta"] == 1.0
    assert toy(at, "knorm")[0]["controls"][1]["values"][-1] == "1.0"


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_key_norm_frames_name_the_regime_and_the_numbers_of_their_grid_point(lang):
    """Each frame's metrics are c, c^2 and 1 - beta c^2 at its own point, its message names the regime of
    beta c^2 (checked against the thresholds 1 and 2 written out here), and an exploding run is flagged."""
    at = open_app(lang, "app_pages/playground.py", playground_panel="knorm")
    assert_clean(at)
    data, frames = toy(at, "knorm")
    norms, betas, writes = ([float(v) for v in c["values"]] for c in data["controls"])
    assert len(frames) == len(norms) * len(betas) * len(writes)
    for key, frame in frames.items():
        i, j, k = map(int, key.split(","))
        c, b = norms[i], betas[j]
        m = metric_values(frame)
        x = b * c * c
        assert (m["new_term"], m["correction"]) == (f"× {c:.2f}", f"× {c * c:.2f}")
        assert float(m["factor"]) == pytest.approx(1 - x, abs=0.005 + 1e-9)
        want = ("none" if abs(x) < 1e-9 else "exact" if abs(x - 1) < 1e-9 else "edge" if abs(x - 2) < 1e-9
                else "shrink" if x < 1 else "overshoot" if x < 2 else "diverge")
        state, = [n for n in select(frame, class_="gdn-callout") if "data-state" in n.attrs]
        assert state.attrs["data-state"] == want, key
        flagged = [n for n in select(frame, class_="gdn-callout") if "data-state" not in n.attrs and "error" in n.classes]
        assert bool(flagged) == (abs(1 - x) ** writes[k] > 1e6), key         # distance |1 - x|^t, clipped at 1e6
        assert "NaN" not in frame and "inf" not in frame.lower().replace("info", "")


@pytest.mark.parametrize("geometry", ["random", "orthogonal"])
def test_streams_cut_from_one_draw_are_the_reference_streams(geometry):
    """The cached streams are slices of one draw of their seed's normals: they must be exactly the
    reference protocol's (RandomState(seed): keys, then values), for odd sizes too and whichever
    stream of the seed is asked for first."""
    sizes = [(96, 16, 24), (7, 5, 3), (1024, 16, 24), (33, 17, 9)]              # 1024 x 40 redraws the seed longer
    for N, K, V in sizes:
        got = ex._cached_stream(N, K, V, 11, geometry)
        want = ex.capacity_stream(N, K, V, seed=11, geometry=geometry)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1]), (N, K, V)


@pytest.mark.parametrize("panel", ["halflife", "repeat", "knorm"])
def test_every_toy_frame_draws_its_lines_inside_the_plot(panel):
    """At every grid point, every line and mark lies inside its chart's axes (the ranges follow the data)."""
    from gdn.figures.svg_chart import BOTTOM, LEFT, RIGHT, TOP
    _, frames = toy(open_app("en", "app_pages/playground.py", playground_panel=panel), panel)
    for key, frame in frames.items():
        for svg in select(frame, role="img"):
            if svg.tag != "svg":
                continue
            w, h = (float(v) for v in svg.attrs["viewbox"].split()[2:])
            for node in svg.children:
                if node.tag == "polyline":
                    xy = np.array([[float(v) for v in p.split(",")] for p in node.attrs["points"].split()])
                elif node.tag == "circle":
                    xy = np.array([[float(node.attrs["cx"]), float(node.attrs["cy"])]])
                else:
                    continue
                assert (xy[:, 0] >= LEFT - 0.1).all() and (xy[:, 0] <= w - RIGHT + 0.1).all(), (key, node.attrs)
                assert (xy[:, 1] >= TOP - 0.1).all() and (xy[:, 1] <= h - BOTTOM + 0.1).all(), (key, node.attrs)


def test_the_overwrite_download_is_the_frame_with_its_styles():
    """The toy's download (saved by the browser: the frame on screen) is a standalone page around the
    frame, with the explorer's CSS its classes need and nothing fetched; none in lecture mode."""
    at = open_app("en", "app_pages/playground.py", playground_panel="overwrite", playground_overwrite_beta="0.5")
    data, frames = toy(at, "overwrite")
    frame = frames[",".join(map(str, data["index"]))]
    before, after = data["download"]["parts"]
    page = before + frame + after
    assert page.startswith("<!doctype html>") and ".ow-step.old i" in page and ".gdn-tables" in page
    assert 'class="gdn-explorer-figure gdn-figure">' + frame in page and page.endswith("</body></html>")
    assert not re.search(r"(src|href)=\"?(https?:)?//", page)
    assert data["download"]["label"] == "Download as standalone HTML (works offline)"
    lecture = open_app("en", "app_pages/playground.py", playground_panel="overwrite", mode="lecture")
    assert toy(lecture, "overwrite")[0]["download"] is None


def test_the_overwrite_share_link_carries_the_toy_and_its_shape():
    """The explorer's values (from the link, snapped to the grid, or as the relay sets them) and the
    server-side shape widgets all travel in the share link, and the link reopens the same frame."""
    at = open_app("en", "app_pages/playground.py", playground_geometry="angle", playground_overwrite_angle="47",
                  playground_overwrite_pairs="4", playground_overwrite_alpha="0.93")
    at.session_state["playground_overwrite_beta"] = 0.6                  # as the relay would set it
    at.run()
    at.button(key="share_open").click().run()
    link = next(c.value for c in at.code if c.value.startswith("http"))
    for part in ("playground_geometry=angle", "playground_overwrite_angle=45", "playground_overwrite_pairs=4",
                 "playground_overwrite_alpha=0.9", "playground_overwrite_beta=0.6"):
        assert part in link, (part, link)
    data, frames = toy(at, "overwrite")
    params = dict(p.split("=", 1) for p in link.split("?", 1)[1].split("&"))
    again = open_app("en", "app_pages/playground.py", **{k: v for k, v in params.items() if k != "lang"})
    data2, frames2 = toy(again, "overwrite")
    assert data2["index"] == data["index"] and frames2 == frames
