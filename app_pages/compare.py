"""Compare (对比): one stream through linear attention, DeltaNet and Gated DeltaNet, stepped together;
the variants (β per channel, α per key dim, two calls with the state carried or reset); the transpose bug."""

import numpy as np
import streamlit as st

from gdn.figures.compare import fig_transpose_bug, fig_two_calls
from gdn.i18n import prompt
from gdn.lessons.compare import (
    COMPARE_PRESETS,
    VARIANTS,
    bug_stream,
    gated_final_state,
    two_calls,
)
from gdn.lessons.memory import k1_update
from gdn.lessons.stream import STAGES
from gdn.qwen35.sources import TRAINED_PATH
from gdn.units import fmt_diff
from app_pages._compare_frames import compare_variants, variant_opening
from app_pages._support import compute, ui, work
from app_pages._support.player import chosen_variant, player

ui.stepping_title("compare")        # the player opens past step 1 and says why
variant = chosen_variant("compare", VARIANTS)      # switched in the browser (the player's variant bar)
axis = {"key": ui.tr("common.key_dim"), "value": ui.tr("common.value_dim"), "dim": ui.tr("common.dim")}


def two_calls_panel() -> None:
    """Variant "stream": the k1 story fed in two calls, with the state carried or reset (toy, then the model)."""
    ui.note(ui.tr("compare.stream_story"))
    s, target = k1_update(), COMPARE_PRESETS["k1_update"]().target
    T = s.shape[0]
    # Tokens count from 1 as on the figure's axis: "starts at token 3" splits between t = 2 and t = 3. The
    # key was compare_stream_cut (0-based, "2" meant token 3): an old link is read once and corrected.
    if (old := st.query_params.pop("compare_stream_cut", None)) and str(old).isdigit():
        st.session_state.setdefault("compare_stream_start", min(max(int(old) + 1, 2), T))
    start = st.slider(ui.tr("compare.stream_cut"), 2, T, 3, key=ui.bound("compare_stream_start"), bind="query-params")
    run = two_calls(s, int(start) - 1)
    names = {n: ui.tr(f"compare.stream_{n}") for n in ("one", "carried", "reset")}
    panels = {"one": run.one_call, "carried": run.carried, "reset": run.reset}
    tokens = [ui.tr(f"compare.tok_k1_update_{t}").split(":")[0].split("：")[0] for t in range(T)]
    ui.show_figure(ui.shared_figure(fig_two_calls, panels, run.cut, titles=names, token_labels=tokens, axis=axis,
                                    font_size=ui.font_size(), height=420 if ui.lecture() else 340),
                   key="compare_stream_fig", alt=ui.tr("compare.stream_alt"))
    m = st.columns(2)
    m[0].metric(ui.tr("compare.stream_diff"), fmt_diff(run.max_diff))
    m[1].metric(ui.tr("compare.stream_reset_err"), f"{np.linalg.norm(run.reset[-1] - target[-1]):.2f}")
    model_two_calls()


def streaming_prompt(lang: str) -> tuple[str, str]:
    """The trained model's recall preset, cut before its first question: (the facts, the question up to "?")."""
    text = prompt("recall", lang)
    ask, mark = {"en": (" ask ", "?"), "zh": (" 问 ", "？")}[lang]
    start = text.index(ask)
    return text[:start], text[start + 1:text.index(mark, start) + 1]


@st.fragment
def model_two_calls() -> None:
    """The same on the shipped trained model: a recall prompt split before its question."""
    folder = str(TRAINED_PATH)
    st.subheader(ui.tr("compare.stream_real_header", model=TRAINED_PATH.name))
    tokenizer = compute.tokenizer(folder)                 # its weights: in the worker that runs the two calls
    first, second = streaming_prompt(ui.lang())
    ids_first = tokenizer.encode(first, max_tokens=512).ids
    ids = tokenizer.encode(first + " " + second, max_tokens=512).ids
    st.markdown(ui.tr("compare.stream_real_story", first=ui.plain(first), second=ui.plain(second)))   # prompt text: as itself
    key = (folder, tuple(ids), len(ids_first))
    run = compute.run_job("compare.stream", key, work.two_calls, *key, pin=True)      # one prompt per language
    word = lambda top: ", ".join(f"“{tokenizer.piece(i).strip()}” {p:.0%}" for i, p in top)
    rows = {ui.tr(f"compare.stream_{n}"): word(top) for n, top in
            (("one", run.top_one), ("carried", run.top_carried), ("reset", run.top_reset))}
    st.dataframe({"": list(rows), ui.tr("compare.stream_pred"): list(rows.values())}, hide_index=True,
                 key="compare_stream_table")
    st.caption(ui.tr("compare.stream_real_diff", logits=fmt_diff(run.max_logit_diff, "float32"),
                                 states=fmt_diff(run.max_state_diff, "float32")))
    st.info(ui.tr("compare.stream_request_note"), icon=":material/lock:")


with st.columns([1, 2])[0] if not ui.lecture() else st.sidebar:    # hidden by CSS unless "rules" is shown
    name = ui.linked(st.selectbox, ui.tr("compare.preset"), COMPARE_PRESETS, key="compare_preset",
                     default="k1_update", format_func=ui.label_maker("compare.preset_"))
variants = compare_variants(name)
drawn = next(v for v in variants if v.name == (variant if variant != "stream" else "rules"))
player("compare", drawn.packed, drawn.n_tokens, STAGES, variants, variant,
       opening=variant_opening(name, drawn.name))   # where the drawn streams part ways
if variant == "stream":
    two_calls_panel()
else:
    st.caption(ui.tr("compare.stage_note"))

st.divider()
st.subheader(ui.tr("compare.bug_title"))
st.markdown(ui.tr("compare.bug_intro"))
c1, c2, c3 = st.columns([1, 1, 3])
K = c1.slider(ui.tr("compare.bug_dk"), 2, 4, 2, key=ui.bound("compare_bug_dk"), bind="query-params")
V = c2.slider(ui.tr("compare.bug_dv"), 2, 4, 2, key=ui.bound("compare_bug_dv"), bind="query-params")
c3.code("S += k[:, None] * e[None, :]  # [K,1]·[1,V] → [K,V] ✓\n"       # short lines: the ✓/✗ stay in view
        "S += k[None, :] * e[:, None]  # [1,K]·[V,1] → [V,K] ✗", language="python", wrap_lines=True)
stream = bug_stream(K, V)
right = gated_final_state(stream)
try:
    wrong = gated_final_state(stream, transpose_bug=True)
except ValueError as e:
    st.error(ui.tr("compare.bug_fails", K=K, V=V), icon=":material/error:")
    st.code(f"ValueError: {e}", language=None)
    st.success(ui.tr("compare.bug_why"), icon=":material/check_circle:")
else:
    st.warning(ui.tr("compare.bug_runs", K=K, diff=f"{np.abs(wrong - right).max():.2f}"), icon=":material/warning:")
    titles = (ui.tr("compare.bug_right"), ui.tr("compare.bug_wrong"), ui.tr("compare.bug_diff"))
    # built once per (K, V), language and mode for the whole server: Plotly's validated build was most of
    # the page's run (~30 of ~45 ms, bench/bench_run_cpu.py), and every run of the page draws it
    ui.show_figure(ui.shared_figure(fig_transpose_bug, right, wrong, titles=titles, axis=axis,
                                    font_size=ui.font_size(), height=380 if ui.lecture() else 320),
                   key="compare_bug_fig", alt=ui.tr("compare.bug_alt"))
