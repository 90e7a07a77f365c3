"""The judge: run a learner's file against an exercise's tests in a child process and say what went wrong.

    verdict = judge("recurrence", source, sandbox=True, seed=7)
    words(verdict, "en")        # ["✓ one head, 4 tokens ...", "✗ random shapes B=2 T=7 ...",
                                #  "    token 3, the write", "    your write is transposed ...", ...]

All of an exercise's tests run in one child (one import of torch); the reference side runs here, in
float64. Nothing the child sends is trusted: its tensors are read as safetensors, its reports as JSON.
"""
from __future__ import annotations

import logging
import random
from errno import EFBIG, EPERM

from gdn.practice.cases import CallFailed
from gdn.practice.exercises import EXERCISES
from gdn.practice.harness import REFUSED
from gdn.practice.runner import LIMITS, Child, Limits, run_child
from gdn.practice.verdict import Line, TestResult, Verdict

MAX_SOURCE = 64_000                # characters of a learner's file


class Got:
    """What one case's calls returned: got(call) -> the values as tensors (None for a value that was not one)."""

    def __init__(self, child: Child, prefix: str):
        self.child, self.prefix = child, prefix

    def report(self, call: str) -> dict:
        return self.child.reports.get(f"{self.prefix}{call}", {"ok": False, "error": "lost", "message": "", "lines": []})

    def __call__(self, call: str) -> list:
        report = self.report(call)
        if not report.get("ok"):
            raise CallFailed(report)
        kinds = report.get("kinds") or []
        return [self.child.tensors.get(f"{self.prefix}{call}.{j}") for j in range(len(kinds))]

    def kinds(self, call: str) -> list[str]:
        return list(self.report(call).get("kinds") or [])


def error_lines(report: dict, limits: Limits) -> list[Line]:
    """An exception in the learner's code, with their own lines only; a missing function by its name; what
    the judge refused, and the limits, in the learner's words (told apart by type and errno, not by text)."""
    error, message, errno = report.get("error"), str(report.get("message", "")), report.get("errno")
    if error == "missing":
        return [Line("missing", {"name": message})]
    if error == "SyntaxError":
        return [Line("syntax", {"line": report.get("line"), "message": message, "text": report.get("text", "")})]
    yours = [Line("your_line", {"line": text}) for text in report.get("lines", [])[-4:]]
    if errno == EFBIG:
        return [Line("output", {"mb": limits.file_mb})]
    if error == "MemoryError" or (error == "RuntimeError" and "can't allocate memory" in message):
        return [Line("memory", {"mb": limits.memory_mb}), *yours]
    if error == "PermissionError" and message.startswith(REFUSED):
        what, _, detail = message.removeprefix(REFUSED).partition(":")
        return [Line("refused", {"what": what, "detail": detail}), *yours]
    if errno == EPERM:
        return [Line("not_permitted"), *yours]
    return [Line("exception", {"error": error or "?", "message": message}), *yours]


def ended_lines(child: Child, limits: Limits) -> list[Line]:
    """Why the child ended without an answer, in the learner's terms."""
    return {"timeout": [Line("timeout", {"s": round(limits.wall_s)})],
            "cpu": [Line("cpu", {"s": limits.cpu_s})],
            "output": [Line("output", {"mb": limits.file_mb})],
            "crashed": [Line("crashed", {"signal": child.signal})],
            "exited": [Line("exited", {"code": child.code})],
            "no_start": [Line("no_start")]}.get(child.ended, [])


def judge(exercise_id: str, source: str, *, sandbox: bool, seed: int | None = None,
          limits: Limits = LIMITS) -> Verdict:
    """Every test of the exercise on `source`; never raises for anything the source does."""
    exercise = EXERCISES.get(exercise_id)
    if exercise is None:
        raise ValueError(f"no exercise {exercise_id!r}; choose one of {', '.join(EXERCISES)}")
    seed = random.randrange(1, 10_000) if seed is None else seed
    verdict = Verdict(exercise_id, seed=seed, sandboxed=sandbox)
    if len(source) > MAX_SOURCE:
        verdict.problem = [Line("too_long", {"n": MAX_SOURCE})]
        return verdict
    tests = exercise.cases(seed)
    calls, inputs = [], {}
    for i, case in enumerate(tests):
        rename = {name: f"{i}/{name}" for name in case.inputs}
        inputs.update({rename[n]: x for n, x in case.inputs.items()})
        calls += [c | {"id": f"{i}/{c['id']}", "args": [rename.get(a, a) if isinstance(a, str) else a for a in c["args"]]}
                  for c in case.calls]
    child = run_child(source, calls, inputs, sandbox=sandbox, limits=limits)
    verdict.printed = child.printed
    if child.ended != "ok":
        verdict.problem = ended_lines(child, limits)
        return verdict
    if "source" in child.reports:                         # the file itself did not run (a syntax error, an exception)
        verdict.problem = error_lines(child.reports["source"], limits)
        return verdict
    for i, case in enumerate(tests):
        try:
            details = case.check(Got(child, f"{i}/"))
        except CallFailed as failed:
            details = error_lines(failed.report, limits)
        except Exception as e:  # noqa: BLE001 -- values so odd the comparison itself broke: the test fails, said so
            logging.getLogger(__name__).exception("comparing %s, test %d", exercise_id, i)   # a judge bug shows too
            details = [Line("compare_failed", {"error": type(e).__name__})]
        verdict.tests.append(TestResult(case.name, not details, case.hidden, details))
    return verdict
