"""What the judge says: a Verdict of per-test results, each a list of Lines (a string key and its fields), put
into words by gdn.i18n in the learner's language. The page and the command line show the same lines.

    verdict.passed           every test passed and nothing went wrong around them
    words(verdict, "en")     ["✗ your code ran out of CPU time (5 s)", ...] or ["✓ the 2×2 example", ...]
"""
from __future__ import annotations

from dataclasses import dataclass, field

from gdn.i18n import t


@dataclass(frozen=True)
class Word:
    """A field that is itself a translated word (practice.<key>): the stage in "token 3, in the write". Its own
    type, so no text of the learner's (a message, a line of code) is ever looked up as a key."""
    key: str


def stage_word(name: str) -> Word:
    return Word(f"stage_{name}")


@dataclass(frozen=True)
class Line:
    key: str                       # practice.<key> in assets/i18n/<lang>/practice.json
    fields: dict = field(default_factory=dict)

    def say(self, lang: str) -> str:
        fields = {k: t(f"practice.{v.key}", lang) if isinstance(v, Word) else v for k, v in self.fields.items()}
        return t(f"practice.{self.key}", lang, **fields)


@dataclass
class TestResult:
    name: Line                     # what was tested ("the 2×2 example", "random shapes B=2 T=9 ...")
    passed: bool
    hidden: bool = False           # its inputs are not shown (its name says its shapes and seed)
    details: list[Line] = field(default_factory=list)    # why it failed, most telling first


@dataclass
class Verdict:
    exercise: str
    tests: list[TestResult] = field(default_factory=list)
    problem: list[Line] = field(default_factory=list)    # the code did not get as far as the tests
    printed: str = ""              # the end of what the code printed
    seed: int = 0                  # the hidden tests' seed (the command line's --seed repeats them)
    sandboxed: bool = False

    @property
    def passed(self) -> bool:
        return not self.problem and bool(self.tests) and all(r.passed for r in self.tests)

    @property
    def counts(self) -> tuple[int, int]:
        return sum(r.passed for r in self.tests), len(self.tests)

    def first_failure(self) -> TestResult | None:
        return next((r for r in self.tests if not r.passed), None)


def words(verdict: Verdict, lang: str) -> list[str]:
    """The verdict as lines of text: the problem, or one line per test and its details indented under it."""
    out = [line.say(lang) for line in verdict.problem]
    for r in verdict.tests:
        out.append(("✓ " if r.passed else "✗ ") + r.name.say(lang))
        out += ["    " + d.say(lang) for d in r.details]
    passed, total = verdict.counts
    out.append(Line("summary_pass" if verdict.passed else "summary_fail", {"passed": passed, "total": total,
                                                                            "seed": verdict.seed}).say(lang))
    return out
