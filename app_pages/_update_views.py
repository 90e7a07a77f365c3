"""The update page's views: one sequence of the task, the shipped results with their findings, the live quick
run, and inside the trained models (the answer for a rewritten key, the gates at rewrites)."""
from __future__ import annotations

import time

import numpy as np
import streamlit as st

from gdn.figures.update import fig_answer_paths, fig_update_results, fig_update_training
from gdn.recall import update_findings, update_inspect
from gdn.recall.data import Vocab
from gdn.recall.models import RULES
from gdn.recall.update import UPDATE_QUICK, UPDATE_RULES
from gdn.recall.update_results import main_score, shipped, steps_by_rule
from gdn.recall.update_results import percent as pct
from app_pages import _quick_run as quick_run
from app_pages._support import compute, ui, work
from app_pages._support.caches import BOUNDS

REDRAW_EVERY = 1.5          # seconds between redraws of the live curves
GATE_MOVE = 0.05            # a gate "rises" / "drops" at rewrites when its mean moves by at least this
READ_MORE = 1.5             # linear attention's first layer "reads more at rewrites" from this ratio up
INSPECTED = ("linear", "deltanet", "gdn")


def names() -> dict[str, str]:
    return {r: ui.tr(f"recall.rule_{r}") for r in RULES}


def labels() -> dict[str, str]:
    keys = ("updates", "right_pct", "old_pct", "seeds_list", "step", "share_pct", "updated", "old", "value_latest",
            "value_old", "write_n", "asked_after", "prob_pct")
    return {k: ui.tr(f"update.label_{k}") for k in keys}


@st.cache_data(show_spinner=False)
def results() -> tuple[dict, dict]:
    return shipped()


def config() -> dict:
    return results()[0]["config"]


def vocab() -> Vocab:
    c = config()
    return Vocab(c["keys"], c["values"])


# --- the task ------------------------------------------------------------------------------------
def task_view() -> None:
    """One sequence of the quick setting, its rewrites marked, and what the three scores count."""
    c = UPDATE_QUICK
    st.markdown(ui.tr("update.task_intro", pairs=c["pairs"], rewritten=c["pairs"] // 2, updates=c["updates"],
                      T=c["seq_len"]))
    tokens, targets, rewrites = update_inspect.example(c["pairs"], c["updates"], c["seq_len"],
                                                       Vocab(c["keys"], c["values"]), seed=3)
    st.html(sequence_html(tokens[0].tolist(), targets[0].tolist(), rewrites.updated[0].tolist(),
                          Vocab(c["keys"], c["values"])))
    st.caption(ui.tr("update.task_legend"))


def sequence_html(tokens: list[int], targets: list[int], updated: list[bool], vocab: Vocab) -> str:
    """The sequence as chips: a first write, a rewrite (the same key again), a question (a rewritten key's in
    bold), filler as a dot. Only the chips' classes and text come from here; assets' CSS draws them."""
    seen, chips = set(), []
    for t, tok in enumerate(tokens):
        if tok == 0:
            chips.append('<span class="gdn-seq filler">·</span>')
            continue
        is_key = tok < vocab.first_value
        text = f"k{tok}" if is_key else f"v{tok - vocab.first_value}"
        if is_key and targets[t] != -100:
            kind = "ask-new" if updated[t] else "ask"
        elif is_key:
            kind = "rewrite" if tok in seen else "write"
            seen.add(tok)
        else:
            kind = "answer" if t and targets[t - 1] != -100 else "value"
        chips.append(f'<span class="gdn-seq {kind}">{text}</span>')
    return f'<div class="gdn-seq-row" role="list">{"".join(chips)}</div>'


# --- the results ---------------------------------------------------------------------------------
def results_view() -> None:
    summary, cells = results()
    c = summary["config"]
    rules, layers, updates, pairs = c["rules"], c["layers"], c["updates"], max(c["pairs"])
    S = len(c["seeds"])
    right, old = np.full((len(rules), len(layers), len(updates)), np.nan), np.full((len(rules), len(layers), len(updates)), np.nan)
    seeds_right, seeds_old = np.full(right.shape + (S,), np.nan), np.full(right.shape + (S,), np.nan)
    unsettled = np.zeros(right.shape, bool)
    for i, r in enumerate(rules):
        for j, n in enumerate(layers):
            for k, u in enumerate(updates):
                cell = cells.get((r, n, pairs, u))
                if cell is None:
                    continue
                score = main_score(u)
                right[i, j, k], seeds_right[i, j, k, :len(cell["seeds"][score])] = cell[score], cell["seeds"][score]
                if u:
                    old[i, j, k], seeds_old[i, j, k, :len(cell["seeds"]["old"])] = cell["old"], cell["seeds"]["old"]
                unsettled[i, j, k] = cell["status"] != "settled"
    titles = [ui.tr("update.col_layers", layers=n) for n in layers] + [""] * len(layers)   # the rows: the y axes' titles
    fig = fig_update_results(right, old, seeds_right, seeds_old, rules=rules, layers=layers, updates=updates,
                             names=names(), titles=titles, labels=labels(), unsettled=unsettled,
                             font_size=ui.font_size(), height=480 if ui.lecture() else 540)   # whole at 1280x720
    ui.show_figure(fig, key="update_results", alt=ui.tr("update.results_alt"))      # first: the page's main figure
    sep = ui.tr("recall.list_sep")
    st.caption(ui.tr("update.results_intro", d=c["widths"][0], pairs=pairs, T=c["seq_len"], seeds=S,
                     updates=sep.join(map(str, updates)), layers=sep.join(map(str, layers)),
                     steps=steps_text(summary), lr=", ".join(f"{x:g}" for x in sorted({r["lr"] for r in summary["rows"]}))))
    for f in update_findings.findings(cells, c):
        st.markdown("- " + update_findings.sentence(f, ui.tr))
    st.caption(ui.tr("update.results_cost", **cost_words(summary)))


def steps_text(summary: dict) -> str:
    """'800' when every rule trained as long, else '800 (linear attention 2000)'."""
    common, others = steps_by_rule(summary)
    said = ui.tr("recall.list_sep").join(f"{names()[r]} {n}" for r, n in others.items())
    return f"{common}" + (f" ({said})" if others else "")


def cost_words(summary: dict) -> dict:
    stacks = summary["stacks"]
    device = stacks[0]["device"] if stacks else "?"
    return {"runs": len(summary["rows"]), "device": "CPU" if device == "cpu" else device,
            "minutes": round(sum(s["seconds"] for s in stacks) / 60)}


# --- the quick run -------------------------------------------------------------------------------
def train_view() -> None:
    c = UPDATE_QUICK
    st.markdown(ui.tr("update.train_intro", d=c["d"], pairs=c["pairs"], T=c["seq_len"], steps=c["steps"],
                      updates=c["updates"], layers=c["layers"]))
    seed_col, button_col = st.columns([1, 3], vertical_alignment="bottom")
    seed = ui.linked_int(seed_col, ui.tr("recall.seed"), 0, 99, 0, key="update_seed", help=ui.tr("recall.seed_help"))
    quick_run.reopen("update", "update.train", run_key, "update_quick_run")
    if button_col.button(ui.tr("update.train_button"), icon=":material/play_arrow:", key="update_train"):
        st.session_state["update_train_pending"] = (seed, time.perf_counter())
    progress, chart = st.empty(), st.empty()
    if "update_train_pending" in st.session_state:
        run_seed, began = st.session_state["update_train_pending"]
        rows = train(run_seed, progress, chart)
        del st.session_state["update_train_pending"]
        st.session_state["update_quick_run"] = {"rows": rows, "seed": run_seed, "waited": time.perf_counter() - began}
    run = st.session_state.get("update_quick_run")
    if run:
        with chart.container():
            ui.show_figure(training_figure(curves_of(run["rows"])), key="update_training", alt=ui.tr("update.train_alt"))
        lines = [ui.tr("update.train_row", rule=names()[r], updated=pct(row["updated"]), kept=pct(row["kept"]),
                       old=pct(row["old"])) for r, row in run["rows"].items()]
        done = ui.tr("update.train_done", seconds=run["waited"], seed=run["seed"]) if run["waited"] is not None else \
            ui.tr("update.train_kept", seed=run["seed"])
        st.success(done + "\n\n" + "\n".join(lines))
        ui.note(quick_note(run["rows"]))
    quick_run.keep_in_link("update", run)
    st.caption(ui.tr("update.train_cli", seed=seed))


def run_key(seed: int) -> tuple:
    """The quick run's key in the shared cache: the seed and the settings (one run per server)."""
    return seed, tuple(sorted(UPDATE_QUICK.items()))


def curves_of(rows: dict) -> dict:
    return {r: {"steps": [p[0] for p in row["score_curve"]], "updated": [p[2] for p in row["score_curve"]],
                "old": [p[3] for p in row["score_curve"]]} for r, row in rows.items()}


def training_figure(curves: dict):
    return fig_update_training(curves, names=names(), labels=labels(), steps=UPDATE_QUICK["steps"],
                               font_size=ui.font_size(), height=420 if ui.lecture() else 360)


def train(seed: int, progress, chart) -> dict:
    """The seed's quick run from the worker (or the shared cache), its curves redrawn as the evals arrive."""
    curves, last = {r: {"steps": [], "updated": [], "old": []} for r in UPDATE_RULES}, [0.0]
    steps = UPDATE_QUICK["steps"]

    def on_progress(reports):
        for step, scores in reports:
            for r, score in zip(UPDATE_RULES, scores):
                curves[r]["steps"].append(step)
                curves[r]["updated"].append(score["updated"])
                curves[r]["old"].append(score["old"])
        step, scores = reports[-1]
        said = " · ".join(ui.tr("update.progress_rule", rule=names()[r], updated=pct(s["updated"]), old=pct(s["old"]))
                          for r, s in zip(UPDATE_RULES, scores))
        progress.progress(min(step / steps, 1.0), text=ui.tr("update.training", step=step, steps=steps, scores=said))
        if time.perf_counter() - last[0] > REDRAW_EVERY:
            last[0] = time.perf_counter()
            chart.plotly_chart(ui.at_screen_scale(training_figure(curves)), key=f"update_live_{step}", theme=None)

    trained = compute.run_job("update.train", run_key(seed), work.train_update,
                              UPDATE_RULES, seed, dict(UPDATE_QUICK), on_progress=on_progress,
                              on_fail=lambda: st.session_state.pop("update_train_pending", None))
    progress.empty()
    return trained["rows"]


def quick_note(rows: dict) -> str:
    """The run's reading, worded by its own numbers: the delta rule ahead on rewritten keys by at least 30
    points, and where linear attention's misses went."""
    lin, delta = rows["linear"], rows["deltanet"]
    gap = delta["updated"] - lin["updated"]
    wrong = 1 - lin["updated"]
    share = lin["old"] / wrong if wrong > 0 else 0.0
    key = "quick_apart" if gap >= 0.30 else "quick_close"
    return ui.tr(f"update.{key}", gap=round(gap * 100), old=pct(lin["old"]), share=round(share * 100),
                 delta_old=pct(delta["old"]))


# --- inside the trained models -------------------------------------------------------------------
@st.cache_resource(show_spinner=False)
def trained(rule: str, layers: int):
    spec = config()["inspect"]
    path = update_inspect.model_file(rule, layers, spec["pairs"], spec["updates"])
    return update_inspect.load(path, vocab(), config()["widths"][0]), update_inspect.metadata(path)


@st.cache_data(max_entries=BOUNDS["update.paths"], show_spinner=False)
def paths(layers: int, seed: int) -> tuple[dict, list[int]]:
    spec, c = config()["inspect"], config()
    tokens, _, _ = update_inspect.example(spec["pairs"], spec["updates"], c["seq_len"], vocab(), seed=seed)
    key = update_inspect.rewritten_keys(tokens, vocab())[0]
    return {r: update_inspect.answer_path(trained(r, layers)[0], tokens, key, vocab()) for r in INSPECTED}, tokens[0].tolist()


@st.cache_data(show_spinner=False)
def gates(layers: int) -> dict:
    spec, c = config()["inspect"], config()
    return {r: update_inspect.gates_at_writes(trained(r, layers)[0], spec["pairs"], spec["updates"], c["seq_len"], vocab())
            for r in INSPECTED}


def inside_view() -> None:
    spec = config()["inspect"]
    st.markdown(ui.tr("update.inside_intro", pairs=spec["pairs"], updates=spec["updates"], seed=spec["seed"]))
    left, right = st.columns(2)
    with left:
        layers = ui.linked(st.segmented_control, ui.tr("update.depth"), config()["layers"], key="update_layers",
                           default=1, required=True, format_func=lambda n: ui.tr("update.depth_n", layers=n))
    with right:
        seed = ui.linked_int(st, ui.tr("update.sequence"), 0, 99, 0, key="update_sequence",
                             help=ui.tr("update.sequence_help"))
    found, _ = paths(layers, seed)
    one = next(iter(found.values()))
    titles = [names()[r] for r in found]
    fig = fig_answer_paths(found, names=names(), titles=titles, labels=labels(), font_size=ui.font_size(),
                           height=400 if ui.lecture() else 340)
    ui.show_figure(fig, key="update_paths", alt=ui.tr("update.paths_alt"))
    st.caption(ui.tr("update.paths_caption", token=f"k{one.key}", values=", ".join(f"v{v - vocab().first_value}" for v in one.values)))
    ui.note(path_note(found))
    ui.note(gate_note(gates(layers), layers))


def path_note(found: dict) -> str:
    """What each model answers for the key when it is asked: the latest value, an old one, or neither."""
    parts = []
    for r, p in found.items():
        last = p.probs[-1]
        said = int(np.argmax(last))
        kind = "latest" if said == len(p.values) - 1 else "older"
        parts.append(ui.tr(f"update.path_{kind}", rule=names()[r], p=round(float(last[said]) * 100),
                           latest=round(float(last[-1]) * 100)))
    return " ".join(parts)


def gate_note(found: dict, layers: int) -> str:
    """β (and Gated DeltaNet's α) at first writes against rewrites, in every layer: each sentence says whether
    the gate moved by at least GATE_MOVE there."""
    out = []
    for r, g in found.items():
        if r == "linear":
            if layers > 1:                  # how two linear layers can do what one delta-rule layer does
                first, again, _ = g.read[0]
                ratio = again / first
                out.append(ui.tr("update.read_more" if ratio >= READ_MORE else "update.read_same",
                                 ratio=f"{ratio:.1f}", more=READ_MORE))
            continue
        for i in range(layers):
            first, again, filler = g.beta[i]
            move = "rises" if again - first >= GATE_MOVE else "drops" if first - again >= GATE_MOVE else "same"
            out.append(ui.tr(f"update.beta_{move}", rule=names()[r], layer=i + 1, first=f"{first:.2f}",
                             again=f"{again:.2f}", filler=f"{filler:.2f}"))
            if g.alpha is not None:
                first, again, filler = g.alpha[i]
                move = "drops" if first - again >= GATE_MOVE else "rises" if again - first >= GATE_MOVE else "same"
                out.append(ui.tr(f"update.alpha_{move}", rule=names()[r], layer=i + 1, first=f"{first:.2f}",
                                 again=f"{again:.2f}", filler=f"{filler:.2f}"))
    return " ".join(out)
