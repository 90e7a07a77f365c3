"""fla's gated-delta test grid, run against our chunked kernel: every case pass / fail / unsupported.

    python bench/fla_grid.py PATH/TO/fla/tests/ops/test_gdn.py [--out DIR] [-k EXPR]

On a CUDA machine with flash-linear-attention installed (its tests are not in its wheels: pass a copy
of the repository's test file of the installed version). Before pytest imports that file, fla's
`chunk_gated_delta_rule` is swapped for `ours_as_fla`: our gdn.ops.chunk_gated_delta_rule behind fla's
signature. So every test that calls fla's chunk kernel calls ours instead, forward and backward, under
fla's own inputs, references (its naive recurrence, or the same call without the option under test)
and tolerances. fla's other kernels (fused_recurrent, the gate) are not swapped: their cases run fla.

A case is
    pass / fail       pytest's verdict, on a case that called ours
    unsupported       ours refused an argument of fla's signature (raised Unsupported)
    not ours          the case never called the chunk kernel (fla's other kernels; listed, not counted)
    skip              skipped by fla's own conditions (hardware, environment)
Prints one line per case and the counts; --out DIR also writes grid.json there.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere without installing
from gdn.ops import chunk_gated_delta_rule

# fla's keyword arguments that ours takes under the same name (beside q, k, v, g, beta)
SAME_NAME = ("scale", "initial_state", "output_final_state", "use_qk_l2norm_in_kernel", "use_beta_sigmoid_in_kernel",
             "allow_neg_eigval", "state_v_first", "cu_seqlens", "chunk_size", "use_gate_in_kernel", "A_log", "dt_bias")
# fla's arguments that only tell its kernels what they could work out themselves: read, then not needed
HINTS = ("chunk_indices", "cu_seqlens_cpu")


class Unsupported(NotImplementedError):
    """An argument of fla's signature that ours cannot honour."""


_calls: Counter = Counter()      # per test node id: how many times ours ran
_current = [""]                  # the node id of the test running now


def ours_as_fla(q, k, v, g, beta, scale=None, initial_state=None, output_final_state=False, **kwargs):
    """fla's chunk_gated_delta_rule signature (q, k, v, g, beta positional; the rest by keyword, as fla's
    tests and layers pass them), computed by ours."""
    _calls[_current[0]] += 1
    unknown = sorted(set(kwargs) - set(SAME_NAME) - set(HINTS) - {"cp_context"})
    if kwargs.get("cp_context") is not None:
        raise Unsupported("cp_context (context parallelism across devices)")
    if unknown:
        raise Unsupported(f"arguments {unknown}")
    if kwargs.get("cu_seqlens_cpu") is not None:              # the same offsets, already on the host: no sync
        kwargs["cu_seqlens"] = kwargs["cu_seqlens_cpu"]
    same = {name: kwargs[name] for name in SAME_NAME if name in kwargs}
    if not same.get("use_beta_sigmoid_in_kernel"):
        # fla takes a given beta up to 2 unasked (allow_neg_eigval only doubles its sigmoid); ours checks
        # [0, 1] unless allow_neg_eigval widens it (gdn.ops.options)
        same["allow_neg_eigval"] = True
    return chunk_gated_delta_rule(q, k, v, g=g, beta=beta, scale=scale, initial_state=initial_state,
                                  output_final_state=output_final_state, **same)


def swap_in() -> None:
    """Put ours where fla's tests import the chunk kernel from (before they are imported)."""
    import fla.ops.gated_delta_rule as package
    package.chunk_gated_delta_rule = ours_as_fla
    package.chunk_gdn = ours_as_fla


class Recorder:
    """A pytest plugin: each case's outcome, and whether it called ours."""

    def __init__(self):
        self.outcomes: dict[str, str] = {}

    def pytest_runtest_setup(self, item):
        _current[0] = item.nodeid

    def pytest_runtest_logreport(self, report):
        if report.when == "call" or report.outcome != "passed":      # setup skips and errors count too
            if report.nodeid in self.outcomes and self.outcomes[report.nodeid] != "passed":
                return                                                 # keep the first problem
            text = str(report.longrepr) if report.failed else ""
            self.outcomes[report.nodeid] = "unsupported" if "Unsupported" in text else report.outcome


def verdict(outcome: str, called: bool) -> str:
    if outcome == "skipped":
        return "skip"
    if outcome == "unsupported":
        return "unsupported"
    if not called:
        return "not ours"
    return "pass" if outcome == "passed" else "fail"


def main(argv=None) -> int:
    import pytest
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("tests", help="fla's gated-delta test file (tests/ops/test_gdn.py of the installed version)")
    p.add_argument("--out", help="a folder for grid.json")
    p.add_argument("-k", dest="select", help="pytest -k expression: run only these cases")
    args = p.parse_args(argv)
    # fla skips its grouped-value-head cases unless told its backend dispatch is off (they would go to a
    # tilelang backend there); ours has no backends, so they run like the rest
    os.environ.setdefault("FLA_DISABLE_BACKEND_DISPATCH", "1")
    swap_in()
    recorder = Recorder()
    pytest_args = [args.tests, "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "--rootdir",
                   str(Path(args.tests).resolve().parent)] + (["-k", args.select] if args.select else [])
    pytest.main(pytest_args, plugins=[recorder])
    rows = {node: verdict(outcome, _calls[node] > 0) for node, outcome in recorder.outcomes.items()}
    for node, row in rows.items():
        print(f"{row:12s} {node.split('::', 1)[-1]}")
    counts = Counter(rows.values())
    print("\ncases that call the chunk kernel: " + ", ".join(
        f"{counts[name]} {name}" for name in ("pass", "fail", "unsupported")) +
        f"; skipped {counts['skip']}, fla's other kernels {counts['not ours']}")
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "grid.json").write_text(json.dumps({"cases": rows, "counts": dict(counts)}, indent=1))
    return 0 if counts["fail"] == counts["unsupported"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
