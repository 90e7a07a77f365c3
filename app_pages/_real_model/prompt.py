"""The prompt: a preset or the user's text (typed or uploaded, read in memory), the Run button, and the
trace of the prompt through the model (tokens and every GDN layer's gates, from the shared caches)."""
from __future__ import annotations

import hashlib

import streamlit as st

from gdn.qwen35.tokenizer import DEFAULT_MAX_TOKENS, trim_prompt
from app_pages._real_model import keys
from app_pages._real_model.context import Loaded, Request, Trace
from app_pages._real_model.fail import fail
from app_pages._real_model.presets import is_preset_text, preset_text, presets_for
from app_pages._support import compute, ui, work

MAX_UPLOAD_BYTES = 200_000     # prompt files; the server refuses more than server.maxUploadSize (1 MB) first
UPLOAD_TYPES = (".txt", ".md")
# The widget's own texts (and its "1MB" limit) are English only: ours replace them (a %-template: %s is
# the browse button's words, %% a literal percent).
UPLOAD_CSS = f"<style>\n{(ui.ASSETS / 'real_model' / 'upload.css').read_text(encoding='utf-8')}</style>"


def on_preset() -> None:
    if st.session_state[keys.PRESET] != "custom":
        st.session_state[keys.PROMPT_EDIT] = preset_text(st.session_state[keys.PRESET])
        st.session_state[keys.AUTORUN] = True


def upload_problem(name: str, data: bytes) -> str | None:
    """Why an uploaded prompt file cannot be used (translated), or None."""
    if not name.lower().endswith(UPLOAD_TYPES):       # checked here, not by the widget: its refusal is English only
        return ui.tr("real_model.upload_wrong_type", name=ui.plain(name), types=", ".join(UPLOAD_TYPES))
    if len(data) > MAX_UPLOAD_BYTES:                  # kB rounded up: 200,001 bytes is "201 kB", above "200 kB"
        return ui.tr("real_model.upload_too_large", name=ui.plain(name), kb=-(-len(data) // 1000),
                     limit=MAX_UPLOAD_BYTES // 1000)
    try:
        if "\x00" not in data.decode("utf-8-sig"):
            return None
    except UnicodeDecodeError:
        pass
    return ui.tr("real_model.upload_not_text", name=ui.plain(name))


def on_upload() -> None:
    """Read an uploaded prompt in memory (never written to disk) into the text area, or note why not."""
    f = st.session_state.get(keys.UPLOAD)
    st.session_state.pop(keys.UPLOAD_ERROR, None)
    if f is None:
        return
    data = f.getvalue()
    problem = upload_problem(f.name, data)
    if problem is not None:
        st.session_state[keys.UPLOAD_ERROR] = (problem,)
        return
    st.session_state.update({keys.PROMPT_EDIT: data.decode("utf-8-sig"), keys.PRESET: "custom", keys.AUTORUN: True})


def preset_picker(kind: str) -> str:
    """The preset picker (linked); the text area follows a preset into the other language."""
    presets = presets_for(kind)
    ui.seed_from_url(keys.PRESET, presets, presets[1])
    preset = st.session_state[keys.PRESET]
    other = {"zh": "en", "en": "zh"}[ui.lang()]
    if keys.PROMPT_EDIT not in st.session_state or (
            preset != "custom" and st.session_state[keys.PROMPT_EDIT] == preset_text(preset, other)):
        st.session_state[keys.PROMPT_EDIT] = preset_text(preset)        # follow a language switch
    st.selectbox(ui.tr("real_model.preset"), presets, key=keys.PRESET, on_change=on_preset,
                 format_func=ui.label_maker("real_model.preset_"))
    ui.sync_to_url(keys.PRESET, presets[1])
    return preset


def more_input() -> int:
    """The folded extras: a prompt file to upload and the token cap. Returns the cap."""
    with st.expander(ui.tr("real_model.more_input"), icon=":material/upload_file:"):
        st.html(UPLOAD_CSS % ui.tr("real_model.upload_browse"))
        st.file_uploader(ui.tr("real_model.upload"), key=keys.UPLOAD, on_change=on_upload,
                         help=ui.tr("real_model.upload_help", limit=MAX_UPLOAD_BYTES // 1000))
        st.caption(ui.tr("real_model.upload_limit", limit=MAX_UPLOAD_BYTES // 1000, types=", ".join(UPLOAD_TYPES)))
        return st.slider(ui.tr("real_model.max_tokens"), 16, DEFAULT_MAX_TOKENS, 512, step=16,
                         key=ui.bound(keys.MAX_TOKENS), bind="query-params", help=ui.tr("real_model.max_tokens_help"))


def ask(loaded: Loaded) -> tuple[Request, str]:
    """The prompt column under the model picker. Returns the request to show and the preset picked. The
    request changes on Run, a new preset or upload, or a new model; an edit alone only says it is not run yet."""
    preset = preset_picker(loaded.kind)
    text = st.text_area(ui.tr("real_model.prompt"), key=keys.PROMPT_EDIT, height=96 if ui.lecture() else 110,
                        max_chars=MAX_UPLOAD_BYTES)       # the browser stops a paste here; bytes are checked below
    clicked = st.button(ui.tr("real_model.run"), key=keys.RUN, type="primary", icon=":material/play_arrow:",
                        width="stretch")
    max_tokens = more_input()
    if keys.UPLOAD_ERROR in st.session_state:
        st.error(st.session_state[keys.UPLOAD_ERROR][0], icon=":material/error:")
    request = st.session_state.get(keys.REQUEST)
    if clicked or st.session_state.pop(keys.AUTORUN, False) or request is None or request.folder != loaded.folder:
        request = st.session_state[keys.REQUEST] = Request(folder=loaded.folder, text=text, max_tokens=max_tokens)
    elif (request.text, request.max_tokens) != (text, max_tokens):
        st.caption(ui.tr("real_model.stale"))
    return request, preset


def last_folder() -> str | None:
    """The checkpoint the real-model page last ran a prompt through in this session (the start page offers it)."""
    request = st.session_state.get(keys.REQUEST)
    return request.folder if request is not None else None


def trimmed_words(removed: dict[str, dict[str, int]]) -> str:
    """{"end": {"newline": 1}} as "1 line break at the end", in the page's language."""
    def items(counts):
        return ui.tr("real_model.trim_list").join(
            ui.tr(f"real_model.trim_{kind}_1" if n == 1 else f"real_model.trim_{kind}_n", n=n) for kind, n in counts.items())
    return ui.tr("real_model.trim_and").join(ui.tr(f"real_model.trim_{side}", items=items(removed[side]))
                                             for side in ("start", "end") if side in removed)


def trace(loaded: Loaded, request: Request) -> Trace:
    """Tokenize the request (here: the tokenizer is quick) and run every GDN layer's gates in a worker process
    (shared caches: a prompt runs once per server; the presets pinned)."""
    if not request.text.strip():
        fail(ui.tr("real_model.empty_detail"), "empty")
    n_bytes = len(request.text.encode("utf-8"))
    if n_bytes > MAX_UPLOAD_BYTES:                          # the same cap as uploads, before the tokenizer sees it
        fail(ui.tr("real_model.prompt_too_long", kb=-(-n_bytes // 1000), limit=MAX_UPLOAD_BYTES // 1000),
             "prompt_too_long")
    pin = is_preset_text(request.text)
    # Blank characters around the prompt go first (a file's trailing newline became a token, graded as the
    # answer); the page says what went. The demo models were trained on text that starts with a space
    # (" the tiger is red ."): without one the first word falls apart into bytes, so theirs gets one back.
    text, removed = trim_prompt(request.text)
    if removed:                                              # lecture mode hides captions: a callout there
        (st.info if ui.lecture() else st.caption)(ui.tr("real_model.trimmed", what=trimmed_words(removed)))
    model_text = " " + text if loaded.demo else text
    text_key = hashlib.sha256(model_text.encode("utf-8")).hexdigest()
    encoded, key = compute.shared_caches()["real_model.encode"], (loaded.folder, text_key, request.max_tokens)
    enc = encoded.get(key)
    if enc is None:                 # the tokenizer is quick and the server keeps it: no job for it
        enc = loaded.tokenizer.encode(model_text, max_tokens=request.max_tokens)
        encoded.put(key, enc, pin=pin)
    st.session_state[keys.PROMPT_TOKENS] = enc.n_total
    if enc.truncated:
        st.warning(ui.tr("real_model.truncated", total=enc.n_total, kept=len(enc.ids)), icon=":material/content_cut:")
    ids = tuple(enc.ids)
    try:
        run = compute.run_job("real_model.run", (loaded.folder, ids), work.gate_run, loaded.folder, ids, pin=pin)
    except ValueError as e:                                 # e.g. a model without a GDN layer, typed in as a folder
        fail(e)
    return Trace(enc=enc, run=run)
