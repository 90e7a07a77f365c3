"""Real model (真实模型): a prompt through a Qwen3.5 checkpoint; its real per-head gates, from both kernels."""
import hashlib
import html
import time
from pathlib import Path

import streamlit as st

from gdn.qwen35 import check_folder
from gdn.qwen35.analysis import error_kind, gate_run, layer_inputs
from gdn.qwen35.demo.evidence import evidence, intervention_table
from gdn.qwen35.gates import head_summary
from gdn.qwen35.sources import (ALLOW_DOWNLOADS, MAX_DOWNLOAD_GB, download, downloads_allowed, max_download_bytes,
                                plan_download)
from gdn.qwen35.tokenizer import DEFAULT_MAX_TOKENS
from app_pages import _real_model_views as views
from app_pages._support import compute, ui

# The demo models (trained or random) get their own task prompts; natural text only means something to
# a real Qwen3.5 checkpoint, so only a real one gets those presets.
TASK_PRESETS = ["recall", "switch", "copy"]
TEXT_PRESETS = ["password", "topic_switch", "repeat", "mixed"]
ALL_PRESETS = ["custom", *TASK_PRESETS, *TEXT_PRESETS]
MAX_UPLOAD_BYTES = 200_000     # prompt files; the server refuses more than server.maxUploadSize (1 MB) first
UPLOAD_TYPES = (".txt", ".md")
QWEN_08B = "Qwen/Qwen3.5-0.8B"
QWEN_08B_GB = 1.6              # its safetensors + tokenizer (the one-click button says so before anything is fetched)
AUTO_LOAD_BYTES = 300 << 20    # checkpoints up to this size load as soon as they are picked
OTHER, DOWNLOAD = "__folder__", "__download__"
VIEWS = tuple(views.VIEWS)


def fail(message: str, kind: str | None = None) -> None:
    """A bad input: translated headline, the precise reason underneath, and nothing more on the page."""
    st.error(ui.tr(f"real_model.err_{kind or error_kind(message)}"), icon=":material/error:")
    st.code(message, language=None, wrap_lines=True)
    st.stop()


preset_text = views.preset_text


def model_kind(folder: str, found: dict) -> str:
    """"trained" (the shipped demo trained on its tasks), "random" (the random-weight demo) or "real"."""
    _, kind, random = found.get(folder, (None, None, False))
    return "random" if random else "trained" if kind == "trained" else "real"


def chip(i: int, piece: str, token_id: int) -> str:
    """One token as a chip; "+" marks a token whose bytes the previous chip already shows (CJK)."""
    shown = html.escape(piece or "+").replace(" ", "␣").replace("\n", "↵")
    return f'<span class="rm-chip{"" if piece else " rm-cont"}" title="t = {i + 1} · id {token_id}">{shown}</span>'


@st.cache_resource(show_spinner=False)
def trained_evidence(folder: str) -> dict:
    """Gate evidence of the shipped trained model on its fixed task batch (computed once per server; others
    asking meanwhile wait for this one). Outside the forward-pass slots: it is a few small forwards of the
    3 M-parameter demo, and holding a slot for them would queue every visitor's Run behind it."""
    return evidence(compute.model(folder))


def evidence_fields(ev: dict | None) -> dict:
    """Numbers for the trained-model note and the task presets' stories."""
    if ev is None:
        return {"s_where": ui.tr("real_model.any_head"), "b_where": ui.tr("real_model.any_head")}
    s, b = ev["switch_head"], ev["beta_head"]
    pct = lambda x: f"{100 * x:.0f}%"
    return dict(s_where=ui.tr("real_model.where", layer=s["layer"], head=s["head"]),
                b_where=ui.tr("real_model.where", layer=b["layer"], head=b["head"]),
                a_switch=f"{ev['alpha_switch'][s['gdn_index']][s['head']]:.2f}",
                a_other=f"{ev['alpha_other'][s['gdn_index']][s['head']]:.2f}",
                b_value=f"{ev['beta_value'][b['gdn_index']][b['head']]:.2f}",
                b_filler=f"{ev['beta_filler'][b['gdn_index']][b['head']]:.2f}",
                recall=pct(ev["acc"]["reassigned"]), recall_lin=pct(ev["acc_ablation"]["reassigned"]),
                latest=pct(ev["acc"]["latest"]),
                none=pct(ev["acc"]["none"]), copy=pct(ev["acc"]["copy"]), n=ev["n_examples"])


def on_preset() -> None:
    if st.session_state["real_model_preset"] != "custom":
        st.session_state["real_model_prompt_edit"] = preset_text(st.session_state["real_model_preset"])
        st.session_state["real_model_autorun"] = True


def on_upload() -> None:
    """Read an uploaded prompt in memory (never written to disk) into the text area, or note why not."""
    f = st.session_state.get("real_model_upload")
    st.session_state.pop("real_model_upload_error", None)
    if f is None:
        return
    data = f.getvalue()
    if not f.name.lower().endswith(UPLOAD_TYPES):     # checked here, not by the widget: its refusal is English only
        st.session_state["real_model_upload_error"] = (ui.tr("real_model.upload_wrong_type", name=ui.plain(f.name),
                                                             types=", ".join(UPLOAD_TYPES)),)
        return
    if len(data) > MAX_UPLOAD_BYTES:                  # kB rounded up: 200,001 bytes is "201 kB", above "200 kB"
        st.session_state["real_model_upload_error"] = (ui.tr("real_model.upload_too_large", name=ui.plain(f.name),
                                                             kb=-(-len(data) // 1000), limit=MAX_UPLOAD_BYTES // 1000),)
        return
    try:
        text = data.decode("utf-8-sig")
        if "\x00" in text:
            raise UnicodeDecodeError("utf-8", data, 0, 1, "NUL byte")
    except UnicodeDecodeError:
        st.session_state["real_model_upload_error"] = (ui.tr("real_model.upload_not_text", name=ui.plain(f.name)),)
        return
    st.session_state.update(real_model_prompt_edit=text, real_model_preset="custom", real_model_autorun=True)


def hub_call(action):
    """Run a hub action; a failure becomes (message, error kind) in session state, for `fail` to show."""
    st.session_state.pop("real_model_download_error", None)
    try:
        return action()
    except ValueError as e:
        st.session_state["real_model_download_error"] = (str(e), None)
    except Exception as e:  # network and hub errors: offline, unknown repo, gated repo, full disk...
        st.session_state["real_model_download_error"] = (f"{type(e).__name__}: {e}", "download")
    return None


def download_panel() -> None:
    """Hub downloads, if the operator allows them: check the repo's config and size first, then fetch."""
    if not downloads_allowed():
        st.info(ui.tr("real_model.download_off", var=ALLOW_DOWNLOADS, cap=MAX_DOWNLOAD_GB), icon=":material/cloud_off:")
        st.stop()
    if st.button(ui.tr("real_model.get_08b", gb=f"{QWEN_08B_GB:.1f}"), key="real_model_get_08b", type="primary",
                 icon=":material/download:"):
        st.session_state["real_model_plan"] = hub_call(lambda: plan_download(QWEN_08B))   # config checked first
        st.session_state["real_model_fetch_now"] = st.session_state["real_model_plan"] is not None
    c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
    c1.text_input(ui.tr("real_model.repo"), key="real_model_repo_edit", placeholder=QWEN_08B)
    if c2.button(ui.tr("real_model.download_check"), key="real_model_download_check"):
        repo = st.session_state.get("real_model_repo_edit", "").strip()
        st.session_state["real_model_plan"] = hub_call(lambda: plan_download(repo))
    st.caption(ui.tr("real_model.download_help", cap=f"{max_download_bytes() / 1e9:.0f}"))
    if "real_model_download_error" in st.session_state:
        fail(*st.session_state["real_model_download_error"])
    plan = st.session_state.get("real_model_plan")
    if plan is None:
        st.stop()
    st.markdown(ui.tr("real_model.download_plan", repo=ui.plain(plan.repo_id), n=len(plan.files),
                      gb=f"{plan.total_bytes / 1e9:.2f}", layers=plan.n_layers))
    go_now = st.session_state.pop("real_model_fetch_now", False)       # the one-click button: no second click
    if st.button(ui.tr("real_model.download_go", gb=f"{plan.total_bytes / 1e9:.2f}"), key="real_model_download",
                 type="primary", icon=":material/download:") or go_now:
        bar = st.progress(0.0, text=ui.tr("real_model.download_progress", done="0.00", gb=f"{plan.total_bytes / 1e9:.2f}"))
        show = lambda done, total, name: bar.progress(min(1.0, done / max(total, 1)), text=ui.tr(
            "real_model.download_progress", done=f"{done / 1e9:.2f}", gb=f"{total / 1e9:.2f}"))
        lock = compute.download_lock()
        if not lock.acquire(blocking=False):
            st.info(ui.tr("real_model.download_busy"), icon=":material/hourglass_top:")
            st.stop()
        try:
            folder = hub_call(lambda: download(plan, progress=show))
        finally:
            lock.release()
        if folder is not None:
            compute.sources.clear()
            st.session_state.pop("real_model_plan", None)
            st.session_state["real_model_picked"] = str(folder)     # the picker is drawn: set it on the rerun
            st.rerun()
        fail(*st.session_state["real_model_download_error"])
    st.stop()


UPLOAD_CSS = """<style>
.st-key-real_model_upload [data-testid="stFileUploaderDropzoneInstructions"] {display: none}
.st-key-real_model_upload [data-testid="stFileUploaderDropzone"] button {font-size: 0}
.st-key-real_model_upload [data-testid="stFileUploaderDropzone"] button::after {content: "%s"; font-size: 0.9rem}
.st-key-real_model_upload [data-testid="stFileUploaderFile"] small {display: none}
</style>"""   # the widget's own texts (and its "1MB" limit) are English only: ours replace them


title_box = st.empty()
# The view picker spans the page: beside the prompt column its six choices would not fit a projector's width.
view = ui.linked(st.segmented_control, ui.tr("real_model.view"), VIEWS, key="real_model_view", default=VIEWS[0],
                 required=True, format_func=ui.label_maker("real_model.tab_"), label_visibility="collapsed")
left, right = st.columns([1.6, 5] if ui.lecture() else [2, 5], gap="medium")

# -- 1. model and prompt (left column) ----------------------------------------------------------
with left:
    listed = {folder: (label, kind, random) for label, folder, kind, random in compute.sources()}
    problems = {folder: compute.inspect(folder)[1] for folder in listed}
    broken = {folder: problem for folder, problem in problems.items() if problem is not None}
    found = {folder: entry for folder, entry in listed.items() if folder not in broken}   # only these can be picked
    options = [*found, OTHER, DOWNLOAD]

    def source_label(option: str) -> str:
        if option in (OTHER, DOWNLOAD):
            return ui.tr(f"real_model.source_{'folder' if option == OTHER else 'download'}")
        label, kind, random = found[option]
        name = (ui.tr("real_model.label_random", name=Path(option).name) if random else
                ui.tr("real_model.label_trained", name=Path(option).name) if kind == "trained" else label)
        i = compute.info(option)
        return ui.tr("real_model.source_line", name=name, layers=i.config.num_hidden_layers, gdn=len(i.gdn_layers),
                     heads=i.config.linear_num_value_heads, params=f"{i.n_params / 1e6:.1f}",
                     mb=f"{i.disk_bytes / 1e6:.1f}")

    picked = st.session_state.pop("real_model_picked", None)       # just downloaded (never kept: it is a path)
    if picked in options:
        st.session_state["real_model_source"] = picked
    if st.session_state.get("real_model_source") not in options:
        st.session_state["real_model_source"] = options[0]
    source_labels = {o: source_label(o) for o in options}     # format_func may run later, outside this run
    source = st.selectbox(ui.tr("real_model.source"), options, key="real_model_source", format_func=source_labels.get)
    if broken:
        with st.expander(ui.tr("real_model.broken", n=len(broken)), icon=":material/report:"):
            for folder_, problem in broken.items():
                st.markdown(f"**{ui.plain(listed[folder_][0])}**")
                st.code(problem, language=None, wrap_lines=True)
    if source == DOWNLOAD:
        download_panel()
    if source == OTHER:
        typed = st.text_input(ui.tr("real_model.folder"), key="real_model_folder_edit",
                              placeholder="/path/to/Qwen3.5-0.8B", help=ui.tr("real_model.folder_help"))
        if not typed.strip():
            st.info(ui.tr("real_model.folder_empty"), icon=":material/folder_open:")
            st.stop()
        try:
            folder = str(check_folder(typed.strip()))
        except ValueError as e:
            fail(str(e))
    else:
        folder = source
    try:
        info = compute.info(folder)
    except ValueError as e:
        fail(str(e))
    cfg = info.config
    kind = model_kind(folder, found)
    title = ui.tr(f"real_model.title_{kind}", name=Path(folder).name, params=f"{info.n_params / 1e6:.1f}")
    (title_box.subheader if ui.lecture() else title_box.title)(title)      # one line at lecture size
    if kind == "random":
        st.warning(ui.tr("real_model.random_weights"), icon=":material/casino:")
    if info.read_bytes > AUTO_LOAD_BYTES and folder not in st.session_state.get("real_model_confirmed", ()):
        st.caption(ui.tr("real_model.plan", tensors=info.n_tensors, mb=f"{info.read_bytes / 1e6:.1f}",
                         files=info.n_files, gdn=len(info.gdn_layers), layers=cfg.num_hidden_layers,
                         heads=cfg.linear_num_value_heads, K=cfg.linear_key_head_dim, V=cfg.linear_value_head_dim))
        if not st.button(ui.tr("real_model.load", mb=f"{info.read_bytes / 1e6:.0f}"), key="real_model_load"):
            st.stop()
        st.session_state["real_model_confirmed"] = (folder,)
    try:
        model = compute.model(folder)
    except ValueError as e:
        fail(str(e))
    if model.tokenizer is None:
        fail(f"{Path(folder).name}: no tokenizer.json; copy the checkpoint's tokenizer.json into this folder")

    presets = ["custom", *(TEXT_PRESETS if kind == "real" else TASK_PRESETS)]
    ui.seed_from_url("real_model_preset", presets, presets[1])
    preset = st.session_state["real_model_preset"]
    other = {"zh": "en", "en": "zh"}[ui.lang()]
    if "real_model_prompt_edit" not in st.session_state or (
            preset != "custom" and st.session_state["real_model_prompt_edit"] == preset_text(preset, other)):
        st.session_state["real_model_prompt_edit"] = preset_text(preset)        # follow a language switch
    st.selectbox(ui.tr("real_model.preset"), presets, key="real_model_preset", on_change=on_preset,
                 format_func=ui.label_maker("real_model.preset_"))
    ui.sync_to_url("real_model_preset", presets[1])
    text = st.text_area(ui.tr("real_model.prompt"), key="real_model_prompt_edit", height=96 if ui.lecture() else 110,
                        max_chars=MAX_UPLOAD_BYTES)       # the browser stops a paste here; bytes are checked below
    clicked = st.button(ui.tr("real_model.run"), key="real_model_run", type="primary", icon=":material/play_arrow:",
                        width="stretch")
    with st.expander(ui.tr("real_model.more_input"), icon=":material/upload_file:"):
        st.html(UPLOAD_CSS % ui.tr("real_model.upload_browse"))
        st.file_uploader(ui.tr("real_model.upload"), key="real_model_upload", on_change=on_upload,
                         help=ui.tr("real_model.upload_help", limit=MAX_UPLOAD_BYTES // 1000))
        st.caption(ui.tr("real_model.upload_limit", limit=MAX_UPLOAD_BYTES // 1000, types=", ".join(UPLOAD_TYPES)))
        max_tokens = st.slider(ui.tr("real_model.max_tokens"), 16, DEFAULT_MAX_TOKENS, 512, step=16,
                               key=ui.bound("real_model_max_tokens"), bind="query-params",
                               help=ui.tr("real_model.max_tokens_help"))
    if "real_model_upload_error" in st.session_state:
        st.error(st.session_state["real_model_upload_error"][0], icon=":material/error:")

    request = st.session_state.get("real_model_request")
    if clicked or st.session_state.pop("real_model_autorun", False) or request is None or request["folder"] != folder:
        request = st.session_state["real_model_request"] = {"folder": folder, "text": text, "max_tokens": max_tokens}
    elif (request["text"], request["max_tokens"]) != (text, max_tokens):
        st.caption(ui.tr("real_model.stale"))
    if not request["text"].strip():
        fail(ui.tr("real_model.empty_detail"), "empty")
    n_bytes = len(request["text"].encode("utf-8"))
    if n_bytes > MAX_UPLOAD_BYTES:                          # the same cap as uploads, before the tokenizer sees it
        fail(ui.tr("real_model.prompt_too_long", kb=-(-n_bytes // 1000), limit=MAX_UPLOAD_BYTES // 1000),
             "prompt_too_long")
    is_preset = any(request["text"] == preset_text(p, lang) for p in ALL_PRESETS[1:] for lang in ui.LANG_NAMES)
    # The demo models were trained on text that starts with a space (" the tiger is red ."): without one
    # the first word falls apart into bytes ("t h e"), so their prompts get one, as in training.
    model_text = request["text"] if kind == "real" or request["text"][:1].isspace() else " " + request["text"]
    text_key = hashlib.sha256(model_text.encode("utf-8")).hexdigest()
    enc = compute.cached("encode", (folder, text_key, request["max_tokens"]), pin=is_preset,
                         compute=lambda: model.tokenizer.encode(model_text, max_tokens=request["max_tokens"]))
    st.session_state["real_model_prompt_tokens"] = enc.n_total
    T, tokens, ids = len(enc.ids), enc.pieces, tuple(enc.ids)
    if enc.truncated:
        st.warning(ui.tr("real_model.truncated", total=enc.n_total, kept=T), icon=":material/content_cut:")

    start = time.perf_counter()
    try:
        run = compute.cached("run", (folder, ids), lambda: gate_run(model, list(ids)), pin=is_preset)
    except ValueError as e:                                 # e.g. a model without a GDN layer, typed in as a folder
        fail(str(e))
    heads = list(range(cfg.linear_num_value_heads))
    layer_labels = {i: ui.tr("real_model.layer_n", i=i, n=cfg.num_hidden_layers) for i in run.layers}
    head_labels = {h: ui.tr("real_model.head_n", h=h, kh=h // (len(heads) // cfg.linear_num_key_heads)) for h in heads}


# -- 2. the layer and head pickers and the views (right column) ------------------------------------
@st.fragment
def layer_view(page_run: dict) -> None:
    """The layer and head pickers (under the prompt) and the chosen view: a fragment, so a new layer or
    head, and every widget of a view, rerun and re-send only these, not the model list, the prompt and
    the notes and tokens under the views (a layer change was a whole page of elements and charts)."""
    if st.session_state.pop("real_model_full_run", False):       # a story button: a new prompt to run
        st.rerun(scope="app")
    # the timing caption counts from the start of this run: the page's, or this fragment's own rerun
    started = page_run.pop("started", None) or time.perf_counter()
    with left:
        c1, c2 = st.columns(2)
        layer = ui.linked(c1.selectbox, ui.tr("real_model.layer"), run.layers, key="real_model_layer",
                          default=run.layers[0], format_func=layer_labels.get)
        head = ui.linked(c2.selectbox, ui.tr("real_model.head"), heads, key="real_model_head", default=0,
                         format_func=head_labels.get)
    inputs = lambda: compute.cached("inputs", (folder, ids, layer), lambda: layer_inputs(model, list(ids), layer))
    with right:
        ctx = views.ViewContext(folder=folder, request=request, enc=enc, run=run, layer=layer, head=head,
                                dims=(cfg.linear_key_head_dim, cfg.linear_value_head_dim), summary=summary,
                                labels=labels, fs=ui.font_size(), lecture=ui.lecture(), inputs=inputs, model=model,
                                kind=kind, started=started)
        views.VIEWS[view](ctx)             # only the chosen view is computed: the others may need a forward pass


summary = head_summary(run.g, run.beta)                                  # [L, H] each
labels = {n: ui.tr(f"real_model.lbl_{n}") for n in ("token", "layer", "head", "norm", "key", "value", "guess")}
layer_view({"started": start})

# -- 3. below the first screen: what this model is, its evidence, the tokens -------------------------
ev = trained_evidence(folder) if kind == "trained" else None
fields = evidence_fields(ev)
if preset != "custom":
    ui.note(ui.tr(f"real_model.story_{preset}", **fields))
ui.note(ui.tr(f"real_model.about_{kind}", **fields))
if ev is not None:
    views.evidence_table(ev, intervention_table(ev))
with st.expander(ui.tr("real_model.tokens", n=T), expanded=T <= 64 and not ui.lecture()):
    chips = "".join(chip(i, p, tid) for i, (p, tid) in enumerate(zip(tokens[:512], ids[:512])))
    st.html(f"<style>.rm-chip{{display:inline-block;margin:2px;padding:1px 6px;border-radius:6px;background:#eef2ff;"
            f"font-size:0.9em;border:1px solid #c7d2fe}}.rm-cont{{color:#94a3b8;background:#f8fafc}}</style>"
            f"<div>{chips}</div>")
    if T > 512:
        st.caption(ui.tr("real_model.tokens_more", n=T - 512))
