"""What the real-model page has loaded and run, passed to every view explicitly (no module globals).

    Loaded       the checkpoint: folder, kind, tokenizer, describe() info        (source.py)
    Request      what the user asked to run: folder, prompt text, token cap      (prompt.py)
    Trace        the prompt through the model: tokens and every GDN layer's gates (prompt.py)
    ViewContext  the three, plus the chosen layer and head                       (the page's layer fragment)
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from gdn.figures.real_model import draws_as_html
from gdn.qwen35.analysis import GateRun
from gdn.qwen35.demo.stories import answer_slots
from gdn.qwen35.gates import head_summary
from gdn.qwen35.predict import Predictions
from gdn.units import fmt_count
from app_pages._real_model import drawn
from app_pages._real_model.presets import is_preset_text
from app_pages._support import compute, ui, work


@dataclass(frozen=True)
class Loaded:
    folder: str                # checkpoint folder
    kind: str                  # "trained" | "random" (the shipped demos) | "real"
    tokenizer: object          # its Qwen35Tokenizer: all this process keeps of it (the workers hold the weights)
    info: object               # gdn.qwen35.analysis.describe(folder): config, sizes, GDN layers

    @property
    def config(self):
        return self.info.config

    @property
    def name(self) -> str:
        return Path(self.folder).name

    @property
    def demo(self) -> bool:
        return self.kind != "real"

    @property
    def counts(self) -> dict:
        """What the texts count, read from the checkpoint: layers (all, Gated DeltaNet, full attention),
        value heads per layer, and the parameters as gdn.units writes them ("3.0 M")."""
        cfg, gdn = self.config, len(self.info.gdn_layers)
        return dict(layers=cfg.num_hidden_layers, gdn=gdn, full=cfg.layer_types.count("full_attention"),
                    heads=cfg.linear_num_value_heads, params=fmt_count(self.info.n_params))


@dataclass(frozen=True)
class Request:
    folder: str                # the model it was asked of (a new model runs the prompt anew)
    text: str                  # the prompt as typed
    max_tokens: int            # the tokenizer's cap


@dataclass
class Trace:
    enc: object                # the tokenizer's Encoded (ids, pieces, group, truncated)
    run: GateRun               # every GDN layer's gates for this prompt: g, beta [L, T, H]

    @property
    def ids(self) -> tuple:
        return tuple(self.enc.ids)

    @property
    def tokens(self) -> list[str]:
        return self.enc.pieces

    @property
    def T(self) -> int:
        return len(self.enc.ids)

    @cached_property
    def summary(self) -> dict:
        return head_summary(self.run.g, self.run.beta)                   # [L, H] each


@dataclass
class ViewContext:
    loaded: Loaded
    request: Request
    trace: Trace
    layer: int                 # chosen decoder layer (a GDN layer)
    head: int                  # chosen value head
    started: float = field(default_factory=time.perf_counter)   # when this run began (the timing caption)

    # -- what the views read, by name ----------------------------------------------------------
    folder = property(lambda self: self.loaded.folder)
    tokenizer = property(lambda self: self.loaded.tokenizer)
    kind = property(lambda self: self.loaded.kind)
    demo = property(lambda self: self.loaded.demo)
    enc = property(lambda self: self.trace.enc)
    run = property(lambda self: self.trace.run)
    ids = property(lambda self: self.trace.ids)
    tokens = property(lambda self: self.trace.tokens)
    T = property(lambda self: self.trace.T)
    summary = property(lambda self: self.trace.summary)

    @property
    def dims(self) -> tuple[int, int]:
        """(K, V): the checkpoint's key and value head dims."""
        return self.loaded.config.linear_key_head_dim, self.loaded.config.linear_value_head_dim

    @property
    def fs(self) -> int:
        return ui.font_size()

    @property
    def lecture(self) -> bool:
        return ui.lecture()

    @property
    def labels(self) -> dict:
        return drawn.labels(ui.lang())

    @property
    def li(self) -> int:
        return self.run.layers.index(self.layer)                          # index among GDN layers

    @property
    def heads(self) -> list[int]:
        return list(range(self.run.g.shape[-1]))

    @property
    def g(self) -> np.ndarray:
        return self.run.g[self.li]                                        # [T, H]

    @property
    def beta(self) -> np.ndarray:
        return self.run.beta[self.li]                                     # [T, H]

    @property
    def alpha(self) -> np.ndarray:
        return np.exp(self.g)                                             # [T, H]

    # -- computed in a worker process on first use, kept in the shared caches ----------------------
    def views(self) -> drawn.RunViews:
        """Every GDN layer's gates and overview, the guesses and the answers, built in the worker that runs
        the prompt's forward pass (drawn.py), once per trace and language (and, for a prompt too long for
        HTML, per layer and size of its Plotly figure); the example prompts pinned."""
        plotly = None
        if not draws_as_html(self.T, len(self.heads)):
            extra = 14 * max(0, len(self.heads) - 8)
            plotly = (self.layer, self.fs, (640 if self.lecture else 540) + 2 * extra)
        return compute.run_job("real_model.views", (self.folder, self.ids, ui.lang(), plotly), drawn.views, self.folder,
                               self.ids, tuple(self.tokens), ui.lang(), self.demo, plotly,
                               pin=is_preset_text(self.request.text))

    def head_inputs(self, **overrides) -> dict[str, np.ndarray]:
        """The chosen head's q, k [T, K], v [T, V], g, beta [T] (LayerInputs.head), under the interventions
        in overrides (set_alpha / set_beta), if any."""
        key = (self.folder, self.ids, self.layer, self.head, work.overrides_key(overrides))
        return compute.run_job("real_model.inputs", key, work.head_inputs, self.folder, self.ids, self.layer, self.head,
                               overrides)

    def head_views(self, t: int) -> drawn.HeadViews:
        """The chosen head's figures with token t (from 0) chosen, drawn in a worker (drawn.head_views)."""
        key = (self.folder, self.ids, self.layer, self.head, t, ui.lang(), (self.fs, self.lecture))
        return compute.run_job("real_model.head", key, drawn.head_views, self.folder, self.ids, tuple(self.tokens),
                               self.tokens[self.enc.group[t]], self.layer, self.head, t, ui.lang(), (self.fs, self.lecture))

    @property
    def norms(self) -> np.ndarray:
        """||S_t|| of the chosen layer [T, H]."""
        return compute.run_job("real_model.norms", (self.folder, self.ids, self.layer), work.state_norms, self.folder,
                               self.ids, self.layer)

    @property
    def slots(self) -> list[tuple[int, int]]:
        """Answer slots of a task prompt (demo models only): (t, expected next token id)."""
        return answer_slots(self.tokens, list(self.ids)) if self.demo else []

    def predictions(self, **overrides) -> Predictions:
        """Top-3 next tokens at every position (cached per prompt and intervention, shared by all sessions)."""
        key = (self.folder, self.ids, work.overrides_key(overrides))
        return compute.run_job("real_model.pred", key, work.predictions, self.folder, self.ids, tuple(self.slots),
                               self.demo, overrides)

    def piece(self, token_id: int) -> str:
        return self.tokenizer.piece(int(token_id))        # part of a character: its bytes, ⟨e4 b8⟩
