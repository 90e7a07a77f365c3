"""The model picker: the checkpoints found on this server, a folder typed in, or a download; then the load."""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from gdn.qwen35 import check_folder
from gdn.qwen35.sources import model_name
from gdn.units import fmt_count
from app_pages._real_model import download, keys
from app_pages._real_model.context import Loaded
from app_pages._real_model.fail import fail
from app_pages._support import compute, ui

OTHER, DOWNLOAD = "__folder__", "__download__"      # the picker's last two options
AUTO_LOAD_BYTES = 300 << 20    # checkpoints up to this size load as soon as they are picked


def model_kind(folder: str, found: dict) -> str:
    """"trained" (the shipped demo trained on its tasks), "random" (the random-weight demo) or "real"."""
    _, kind, random = found.get(folder, (None, None, False))
    return "random" if random else "trained" if kind == "trained" else "real"


def source_label(option: str, found: dict) -> str:
    """One line per checkpoint: its name and its size (layers, GDN layers, heads, parameters, MB)."""
    if option in (OTHER, DOWNLOAD):
        return ui.tr(f"real_model.source_{'folder' if option == OTHER else 'download'}")
    label, kind, random = found[option]
    name = (ui.tr("real_model.label_random", name=Path(option).name) if random else
            ui.tr("real_model.label_trained", name=Path(option).name) if kind == "trained" else label)
    i = compute.info(option)
    return ui.tr("real_model.source_line", name=name, layers=i.config.num_hidden_layers, gdn=len(i.gdn_layers),
                 heads=i.config.linear_num_value_heads, params=fmt_count(i.n_params), mb=f"{i.disk_bytes / 1e6:.1f}")


def pick_folder() -> tuple[str, dict]:
    """The picker (and what it opens: the broken list, the folder box, the download panel). Returns the
    chosen folder and the usable checkpoints found {folder: (label, kind, random)}; stops the page otherwise."""
    listed = {folder: (label, kind, random) for label, folder, kind, random in compute.sources()}
    problems = {folder: compute.inspect(folder)[1] for folder in listed}
    broken = {folder: problem for folder, problem in problems.items() if problem is not None}
    found = {folder: entry for folder, entry in listed.items() if folder not in broken}   # only these can be picked
    options = [*found, OTHER, DOWNLOAD]
    picked = st.session_state.pop(keys.PICKED, None)           # just downloaded (never kept: it is a path)
    if picked in options:
        st.session_state[keys.SOURCE] = picked
    if st.session_state.get(keys.SOURCE) not in options:
        st.session_state[keys.SOURCE] = options[0]
    labels = {o: source_label(o, found) for o in options}      # format_func may run later, outside this run
    source = st.selectbox(ui.tr("real_model.source"), options, key=keys.SOURCE, format_func=labels.get)
    if broken:
        with st.expander(ui.tr("real_model.broken", n=len(broken)), icon=":material/report:"):
            for folder, problem in broken.items():
                st.markdown(f"**{ui.plain(listed[folder][0])}**")
                st.code(problem, language=None, wrap_lines=True)
    if source == DOWNLOAD:
        download.panel()                                        # always stops: a finished download reruns
    if source != OTHER:
        return source, found
    typed = st.text_input(ui.tr("real_model.folder"), key=keys.FOLDER_EDIT, placeholder="/path/to/Qwen3.5-0.8B",
                          help=ui.tr("real_model.folder_help"))
    if not typed.strip():
        st.info(ui.tr("real_model.folder_empty"), icon=":material/folder_open:")
        st.stop()
    try:
        return str(check_folder(typed.strip())), found
    except ValueError as e:
        fail(e)


def load(title_box) -> Loaded:
    """Pick and describe a checkpoint, and open its tokenizer (a large one only after a click: its Runs load
    its weights, in the workers; this process reads none); the page title names it."""
    folder, found = pick_folder()
    try:
        info = compute.info(folder)
    except ValueError as e:
        fail(e)
    cfg, kind = info.config, model_kind(folder, found)
    # The title names what is loaded (the demo is no Qwen3.5 release, only built like one), its size counted
    # from the checkpoint itself.
    title = ui.tr(f"real_model.title_{kind}", name=ui.plain(model_name(folder)), params=fmt_count(info.n_params))
    (title_box.subheader if ui.lecture() else title_box.title)(title)      # one line at lecture size
    if kind == "random":
        st.warning(ui.tr("real_model.random_weights"), icon=":material/casino:")
    if info.read_bytes > AUTO_LOAD_BYTES and folder not in st.session_state.get(keys.CONFIRMED, ()):
        st.caption(ui.tr("real_model.plan", tensors=info.n_tensors, mb=f"{info.read_bytes / 1e6:.1f}",
                         files=info.n_files, gdn=len(info.gdn_layers), layers=cfg.num_hidden_layers,
                         heads=cfg.linear_num_value_heads, K=cfg.linear_key_head_dim, V=cfg.linear_value_head_dim))
        if not st.button(ui.tr("real_model.load", mb=f"{info.read_bytes / 1e6:.0f}"), key=keys.LOAD):
            st.stop()
        st.session_state[keys.CONFIRMED] = (folder,)
    try:
        tokenizer = compute.tokenizer(folder)
    except ValueError as e:
        fail(e)
    if tokenizer is None:
        fail(f"{Path(folder).name}: no tokenizer.json; copy the checkpoint's tokenizer.json into this folder", "tokenizer")
    return Loaded(folder=folder, kind=kind, tokenizer=tokenizer, info=info)
