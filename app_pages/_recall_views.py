"""The recall page's views: shipped results, the live training run, a trained model's gates, the write as
a gradient step, and the gates' initial half-lives. Each takes what it shows as arguments."""
from __future__ import annotations

import time

import numpy as np
import streamlit as st

from gdn.figures.real_model import fig_head_detail
from gdn.figures.recall import fig_half_lives, fig_recall, fig_results, fig_training, fig_write_step
from gdn.lessons.cost import load_sizes
from gdn.recall import gate_init, inspect, results
from gdn.recall.findings import findings, sentence
from gdn.recall.models import RULES
from gdn.recall.quick import QUICK, QUICK_RULES
from gdn.recall.sweep import learning_rates
from gdn.recall.write_step import memory_page_example
from app_pages import _quick_run as quick_run
from app_pages._support import compute, ui, work

TRAINED_DEMO = inspect.SHIPPED.parents[1] / "models" / "qwen35-demo-trained" / "model.safetensors"
REDRAW_EVERY = 1.5             # seconds between redraws of the live curves
WRITES_AT_VALUES = 1.3         # a layer "writes at the value tokens" when its beta there is this many times its beta on keys
KEEPS_ALL = 0.99               # every alpha at least this: the model keeps its pairs for the whole sequence


def rule_names() -> dict[str, str]:
    return {r: ui.tr(f"recall.rule_{r}") for r in RULES}


def figure_labels() -> dict[str, str]:
    keys = ("pairs", "accuracy", "accuracy_pct", "step", "loss", "recall", "pair", "key", "value", "half_life",
            "share_pct", "norm_title", "seeds_list")
    return {k: ui.tr(f"recall.{k}") for k in keys} | {"norm": ui.tr("recall.norm_title"), "token": "t",
                                                     "layer": ui.tr("recall.layer"), "head": ui.tr("recall.head")}


@st.cache_data(show_spinner=False)
def shipped_results() -> tuple[dict, dict]:
    return results.load(), results.shipped_cells()


def steps_text(data: dict) -> str:
    """'2250' when every width trained as long, else '2000 (width 32), 1500 (width 64)'."""
    steps = {}
    for r in data["rows"]:
        steps.setdefault(r["d"], r["steps_done"])
    if len(set(steps.values())) == 1:
        return str(next(iter(steps.values())))
    return ", ".join(ui.tr("recall.steps_of_width", steps=n, d=d) for d, n in sorted(steps.items()))


def seeds_text(data: dict) -> str:
    """How many seeds a cell has: the sweep's, and where cells were trained again with more (gdn/recall/capacity.py)."""
    usual = len(data["config"]["seeds"])
    again = data.get("replaced")
    return (ui.tr("recall.seeds_again", usual=usual, more=len(again["config"]["seeds"])) if again
            else ui.tr("recall.seeds_n", n=usual))


def lrs_text(config: dict) -> str:
    """'softmax attention 0.003; linear attention 0.003, 0.01; ...': each rule's learning-rate grid."""
    rates = lambda r: ui.tr("recall.list_sep").join(f"{x:g}" for x in learning_rates(config, r))
    return ui.tr("recall.group_sep").join(f"{rule_names()[r]} {rates(r)}" for r in config["rules"])


def results_view() -> None:
    data, cells = shipped_results()
    cfg = data["config"]
    rules, widths, pairs = cfg["rules"], cfg["widths"], cfg["pairs"]
    status_names = {s: ui.tr(f"recall.status_{s}") for s in results.STATUSES}
    fig = fig_results(results.grid(cells, rules, widths, pairs), seeds=results.seed_grid(cells, rules, widths, pairs),
                      status=results.status_grid(cells, rules, widths, pairs), status_names=status_names,
                      chance=results.CHANCE, rules=rules, widths=widths, pairs=pairs, names=rule_names(),
                      titles=[ui.tr("recall.width_panel", d=d) for d in widths], labels=figure_labels(),
                      font_size=ui.font_size(), height=520 if ui.lecture() else 420)
    ui.show_figure(fig, key="recall_results", alt=ui.tr("recall.results_alt"), fit_top=222)
    stacks = data["stacks"]
    st.caption(ui.tr("recall.results_caption", tests=cfg["test_sequences"], T=cfg["seq_len"], steps=steps_text(data),
                     seeds=seeds_text(data), lrs=lrs_text(cfg), batch=cfg["batch"], spread=round(results.SEED_SPREAD * 100),
                     minutes=sum(s["seconds"] for s in stacks) / 60, done=len(data["rows"]), stacks=len(stacks),
                     device=stacks[0].get("device", "GPU")))
    st.markdown("\n\n".join(sentence(f, ui.tr) for f in findings(cells, cfg)))
    with st.expander(ui.tr("recall.table_title"), icon=":material/table:"):
        col = lambda k: ui.tr(f"recall.col_{k}")
        st.table([{col("rule"): rule_names()[r], col("d"): d, col("pairs"): n,
                   col("acc"): f"{c['accuracy'] * 100:.1f} %",
                   col("seed_accs"): " · ".join(f"{a * 100:.0f}" for a in c["seed_accuracies"]) + " %",
                   col("status"): status_names[c["status"]], col("lr"): f"{c['lr']:g}", col("steps"): c["steps"]}
                  for (r, d, n), c in sorted(cells.items(), key=lambda kv: (rules.index(kv[0][0]), kv[0][1], kv[0][2]))],
                 hide_index=True)
    ui.note(ui.tr("recall.papers"))


def training_figure(curves: dict) -> object:
    return fig_training(curves, names=rule_names(), titles=[ui.tr("recall.curve_loss"), ui.tr("recall.curve_acc")],
                        labels=figure_labels(), steps=QUICK["steps"], font_size=ui.font_size(),
                        height=420 if ui.lecture() else 340)


def train_view() -> None:
    """The quick run: trained in a worker process to its last planned step (app_pages/_support/jobs.py),
    the curves drawn as the worker reports them; a rerun of the page meanwhile goes on waiting for it."""
    st.markdown(ui.tr("recall.train_intro", d=QUICK["d"], pairs=QUICK["pairs"], keys=QUICK["keys"], T=QUICK["seq_len"],
                      steps=QUICK["steps"], filler=QUICK["seq_len"] - 4 * QUICK["pairs"]))
    seed_col, button_col = st.columns([1, 3], vertical_alignment="bottom")
    seed = ui.linked_int(seed_col, ui.tr("recall.seed"), 0, 99, 0, key="recall_seed", help=ui.tr("recall.seed_help"))
    quick_run.reopen("recall", "recall.train", run_key, "recall_quick_run")
    if button_col.button(ui.tr("recall.train_button"), icon=":material/play_arrow:", key="recall_train"):
        st.session_state["recall_train_pending"] = (seed, time.perf_counter())
    progress, chart = st.empty(), st.empty()
    if "recall_train_pending" in st.session_state:          # pressed, in this run or one before it
        run_seed, began = st.session_state["recall_train_pending"]
        trained = train(run_seed, progress, chart)
        del st.session_state["recall_train_pending"]
        st.session_state["recall_quick_run"] = {**trained, "seed": run_seed, "waited": time.perf_counter() - began}
    run = st.session_state.get("recall_quick_run")
    if run:
        with chart.container():
            ui.show_figure(training_figure(run["curves"]), key="recall_training", alt=ui.tr("recall.train_alt"))
        summary = ", ".join(f"{rule_names()[r]} {row['accuracy'] * 100:.0f} %" for r, row in run["rows"].items())
        st.success(ui.tr("recall.train_done", seconds=run["waited"], results=summary, seed=run["seed"])
                   if run["waited"] is not None else ui.tr("recall.train_kept", results=summary, seed=run["seed"]))
    quick_run.keep_in_link("recall", run)
    st.caption(ui.tr("recall.train_cli", seed=seed))


def run_key(seed: int) -> tuple:
    """The quick run's key in the shared cache: the seed and the settings (one run per server)."""
    return seed, tuple(sorted(QUICK.items()))


def train(seed: int, progress, chart) -> dict:
    """Seed's quick run from the worker (or the shared cache: the same seed and settings train once per
    server), its curves redrawn as the steps arrive. Every planned step: a job is only ever stopped early
    for a visitor who left, and then nobody is shown it. Returns {"rows", "curves"}."""
    names, curves, last = rule_names(), work.new_curves(QUICK_RULES), [0.0]

    def on_progress(reports):
        for r in reports:
            work.add_step(curves, QUICK_RULES, r)
        step = reports[-1][0]
        losses = " · ".join(f"{names[r]} {curves[r]['loss'][-1]:.3f}" for r in QUICK_RULES)
        progress.progress(min(step / QUICK["steps"], 1.0), text=ui.tr("recall.training", step=step,
                                                                      steps=QUICK["steps"], losses=losses))
        if time.perf_counter() - last[0] > REDRAW_EVERY:
            last[0] = time.perf_counter()
            chart.plotly_chart(ui.at_screen_scale(training_figure(curves)), key=f"recall_live_{step}", theme=None)

    trained = compute.run_job("recall.train", run_key(seed), work.train_quick,
                              QUICK_RULES, seed, dict(QUICK), on_progress=on_progress,
                              on_fail=lambda: st.session_state.pop("recall_train_pending", None))
    progress.empty()
    return trained


def trained_trace(pairs: int = 8, seq_len: int = 40):
    """The shipped trained model on one example (work.recall_trace): a job of the worker line, kept for
    every session (the inputs are fixed: one per server)."""
    return compute.run_job("recall.trace", (pairs, seq_len), work.recall_trace, pairs, seq_len, pin=True)


def inside_view() -> None:
    tokens, layers, asked, right, pairs = trained_trace()
    about = inspect.shipped_metadata()
    st.markdown(ui.tr("recall.inside_intro", pairs=pairs, asked=asked, right=right, lr=about["lr"],
                      steps=about["steps"], test=float(about["accuracy"]) * 100))
    layer = ui.linked(st.segmented_control, ui.tr("recall.layer"), [1, 2], key="recall_layer", default=1, required=True)
    lt = layers[layer - 1]
    labels = figure_labels()
    fig = fig_head_detail(lt.alpha, lt.beta, lt.norms, tokens=tokens, layer=layer, head=0, marked=None,
                          titles={"gates": ui.tr("recall.gates_title"), "norm": ui.tr("recall.norm_title")},
                          labels=labels, font_size=ui.font_size(), height=460 if ui.lecture() else 400)
    ui.show_figure(fig, key="recall_gates", alt=ui.tr("recall.gates_alt"))
    rec = fig_recall([l.recall for l in layers], titles=[ui.tr("recall.recall_title_layer", layer=i + 1) for i in range(len(layers))],
                     labels=labels, font_size=ui.font_size(), height=340 if ui.lecture() else 300)
    ui.show_figure(rec, key="recall_pairs", alt=ui.tr("recall.recall_alt"))
    ui.note(inside_note(layers, pairs))


def inside_note(layers, pairs: int) -> str:
    """What the trained model's gates do on this sequence, each clause chosen by the numbers it quotes."""
    ratios = [inspect.value_over_key_beta(lt, pairs) for lt in layers]
    strongest = int(np.argmax(ratios))
    betas = " · ".join(ui.tr("recall.beta_ratio", layer=i + 1, ratio=r) for i, r in enumerate(ratios))
    writes = (ui.tr("recall.writes_at_values", layer=strongest + 1) if ratios[strongest] >= WRITES_AT_VALUES
              else ui.tr("recall.writes_evenly", ratio=WRITES_AT_VALUES))
    alphas = " · ".join(ui.tr("recall.alpha_range", layer=i + 1, low=float(lt.alpha.min()), high=float(lt.alpha.max()))
                        for i, lt in enumerate(layers))
    lowest = min(float(lt.alpha.min()) for lt in layers)
    d, trained_pairs, _ = shipped_results()[0]["config"]["inspect"]         # the setting it was trained on
    forgets = (ui.tr("recall.keeps_all", floor=KEEPS_ALL, pairs=trained_pairs, d=d) if lowest >= KEEPS_ALL
               else ui.tr("recall.forgets_some", low=lowest))
    return ui.tr("recall.inside_note", betas=betas, writes=writes, alphas=alphas, forgets=forgets)


def step_view() -> None:
    st.markdown(ui.tr("recall.step_intro"))
    betas = [round(b, 2) for b in np.arange(0.0, 2.51, 0.25)]
    beta = ui.linked(st.select_slider, ui.tr("recall.beta"), betas, key="recall_beta", default=1.0)
    w = memory_page_example(beta)
    panels = [ui.tr(f"recall.panel_{p}") for p in ("S", "grad", "write", "after")]
    fig = fig_write_step([w.S, w.gradient, w.write, w.S_after], titles=panels, labels=figure_labels(),
                         font_size=ui.font_size(), height=300 if ui.lecture() else 260)
    ui.show_figure(fig, key="recall_step", alt=ui.tr("recall.step_alt"))
    c1, c2 = st.columns(2)
    c1.metric(ui.tr("recall.loss_before"), f"{w.loss_before:.4g}")
    c2.metric(ui.tr("recall.loss_after"), f"{w.loss_after:.4g}", delta=f"{w.loss_after - w.loss_before:+.4g}",
              delta_color="inverse")
    factor = 1 - beta * float(w.k @ w.k)
    key = "step_note_1" if beta == 1 else "step_note_less" if beta < 1 else "step_note_more"
    st.markdown(ui.tr(f"recall.{key}", factor=factor))


@st.cache_data(show_spinner=False)
def half_life_series(model: str) -> dict[str, np.ndarray]:
    heads = gate_init.config_heads(load_sizes()[model])
    out = {}
    for recipe in gate_init.RECIPES:
        A_log, dt_bias = gate_init.sample_init(recipe, heads)
        out[(recipe, heads)] = gate_init.half_lives(A_log, dt_bias)
    A_log, dt_bias = gate_init.checkpoint_gates(TRAINED_DEMO)
    out[("trained", len(A_log))] = gate_init.half_lives(A_log, dt_bias)
    return out


def gate_init_view() -> None:
    sizes = list(load_sizes())
    model = ui.linked(st.selectbox, ui.tr("recall.gates_init_model"), sizes, key="recall_size", default=sizes[0])
    series = {ui.tr(f"recall.recipe_{name}", heads=heads): h for (name, heads), h in half_life_series(model).items()}
    fig = fig_half_lives(series, labels=figure_labels(), font_size=ui.font_size(), height=380 if ui.lecture() else 330)
    ui.show_figure(fig, key="recall_half_lives", alt=ui.tr("recall.gates_init_alt"))
    st.markdown(ui.tr("recall.gates_init_text"))
