"""The exercise bank, easy to hard: what each asks for, its starter file and its tests.

    EXERCISES["recurrence"].stub()          # the starter file the learner edits
    EXERCISES["recurrence"].cases(seed)     # its tests: the visible examples, then hidden random ones

An exercise's statement, examples and hints are strings (assets/i18n/<lang>/practice.json:
practice.ex_<id>_title, _statement, _hint_1, _hint_2, ...); its starter file is assets/practice/stubs/<id>.py.
The reference solutions live in gdn/practice/reference.py and never leave the server.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from gdn.practice import cases

STUBS = Path(__file__).resolve().parents[2] / "assets" / "practice" / "stubs"


@dataclass(frozen=True)
class Exercise:
    id: str
    level: str                     # easy | medium | hard
    defines: tuple[str, ...]       # what the learner's file must define
    build: Callable                # (torch.Generator) -> list[cases.Case]
    hints: int                     # how many hints (practice.ex_<id>_hint_<n>), opened one per failed run

    def stub(self) -> str:
        return (STUBS / f"{self.id}.py").read_text(encoding="utf-8")

    def cases(self, seed: int) -> list[cases.Case]:
        return self.build(torch.Generator().manual_seed(seed))


EXERCISES = {e.id: e for e in (
    Exercise("read", "easy", ("read",), cases.read_cases, 2),
    Exercise("four_stages", "easy", ("step",), cases.four_stage_cases, 3),
    Exercise("gates", "easy", ("gates", "half_life"), cases.gate_cases, 3),
    Exercise("recurrence", "medium", ("delta_rule",), cases.recurrence_cases, 3),
    Exercise("stream", "medium", ("Stream",), cases.stream_cases, 2),
    Exercise("chunk", "hard", ("recurrence", "chunk"), cases.chunk_cases, 3),
)}
