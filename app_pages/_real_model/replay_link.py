"""A replay's address. The memory page shows a replayed real head from a payload kept in the session, which a
link cannot carry (hundreds of numbers); what a link carries instead is what the replay was made of (the
model's name, the example prompt and its language, the token cap, layer, head, window, dims and the
intervention) as one value, ?memory_replay_of=... A fresh session opened from such a link hands that to the
real-model page, which runs the prompt again and comes back to the memory page at the link's step
(reopen_pending); whatever cannot be made again (a typed prompt, a model this server does not have) is said
in words, never replaced by something else in silence.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from pathlib import Path

import streamlit as st

from app_pages._real_model import keys
from app_pages._real_model.presets import ALL_PRESETS, preset_text
from app_pages._support import compute, ui
from app_pages._support.path import go
from app_pages._support.share import visible_cut

LINK = "memory_replay_of"              # the memory page's link value (memory_ prefix: its share links carry it)
PENDING = "real_model_replay_pending"  # (state) a ReplaySpec to make again, with the step to open it at
TYPED = "typed"                        # ReplaySpec.prompt of a prompt typed or uploaded: not in any link


@dataclass(frozen=True)
class ReplaySpec:
    layer: int
    head: int
    start: int          # the window's first token, counted from 1
    length: int
    dims: int
    tokens: int         # the prompt's token cap
    prompt: str         # "recall.en": an example prompt and the language of its text; TYPED otherwise
    iv: str             # the intervention's link text (intervene.link_text), "" for none
    model: str          # the checkpoint folder's name; last in the text: a folder name may hold any character

    def text(self) -> str:
        """"layer:1,head:0,start:1,length:12,dims:4,tokens:512,prompt:recall.en,iv:,model:demo-trained"."""
        return ",".join(f"{name}:{value}" for name, value in asdict(self).items())

    @classmethod
    def parse(cls, text: str | None) -> ReplaySpec | None:
        """text()'s inverse; None for anything else (a cut or edited link)."""
        head, sep, model = (text or "").partition(",model:")
        try:
            values = dict(part.split(":", 1) for part in head.split(",")) if sep else {}
            numbers = {f.name: int(values[f.name]) for f in fields(cls) if f.type == "int"}
            spec = cls(**numbers, prompt=values["prompt"], iv=values["iv"], model=model)
        except (KeyError, ValueError):
            return None
        return spec if set(values) == {f.name for f in fields(cls)} - {"model"} and spec.length >= 1 else None

    @property
    def preset(self) -> tuple[str, str] | None:
        """(example prompt, language) of an example prompt; None for a typed one."""
        name, _, language = self.prompt.partition(".")
        return (name, language) if name in ALL_PRESETS[1:] and language in ui.LANG_NAMES else None

    def place(self) -> str:
        """"layer 1, head 0, tokens 1–12": what the replay showed, in the page's words."""
        return ui.tr("real_model.replay_place", layer=self.layer, head=self.head, a=self.start,
                     b=self.start + self.length - 1)


def prompt_name(text: str) -> str:
    """A prompt's ReplaySpec.prompt: "<example>.<language>" when the text is an example prompt's, else TYPED."""
    return next((f"{p}.{language}" for p in ALL_PRESETS[1:] for language in ui.LANG_NAMES
                 if text == preset_text(p, language)), TYPED)


def folder_named(name: str) -> str | None:
    """This server's checkpoint folder of that name (the link names a model by its folder's name, never a path)."""
    return next((folder for _, folder, _, _ in compute.sources() if Path(folder).name == name), None)


def hand_over(spec: ReplaySpec, t: int | None, stage: str | None) -> str:
    """Make the linked replay again: set the real-model page to it and switch there (it comes back at step
    (t, stage)). Returns, without switching, why it cannot: the words the memory page shows."""
    if spec.preset is None:
        return ui.tr("memory.replay_lost_typed", place=spec.place())
    folder = folder_named(spec.model)
    if folder is None:
        return ui.tr("memory.replay_lost_model", place=spec.place(), model=ui.plain(visible_cut(spec.model, 60)))
    preset, language = spec.preset
    st.session_state.update({
        keys.SOURCE: folder, keys.VIEW: "replay", keys.LAYER: spec.layer, keys.HEAD: spec.head,
        # the picker would turn another language's example text into this one's: that text is "custom" here
        keys.PRESET: preset if language == ui.lang() else "custom", keys.PROMPT_EDIT: preset_text(preset, language),
        keys.AUTORUN: True, keys.REPLAY_START: spec.start, keys.REPLAY_LEN: spec.length, keys.REPLAY_DIMS: spec.dims,
        keys.IV_LINK: spec.iv or None, PENDING: (spec, t, stage)})
    st.session_state.pop(keys.MAX_TOKENS, None)          # a slider bound to the link: it reads the cap from there
    go("app_pages/real_model.py", **{keys.MAX_TOKENS: str(spec.tokens)})
    return ""


def reopen_from_link() -> str:
    """A fresh session whose link names a replay (?memory_preset=replay): hand it to the real-model page (which
    switches there), or the words saying why it cannot be shown."""
    spec = ReplaySpec.parse(st.query_params.get(LINK))
    if spec is None:                       # a classroom exercise's stream, or a link cut short: nothing to make
        return ui.tr("memory.replay_lost_link")
    return hand_over(spec, st.query_params.get("memory_t"), st.query_params.get("memory_stage"))
