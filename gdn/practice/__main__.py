"""The judge on the command line (the page's verdict lines, word for word):

    python -m gdn.practice list
    python -m gdn.practice stub recurrence > mine.py
    python -m gdn.practice judge mine.py --exercise recurrence [--sandbox] [--seed N] [--lang zh]

Exit status: 0 every test passed, 1 a test failed, 2 a bad call, 3 --sandbox where no sandbox can be had.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gdn.i18n import LANGS, t
from gdn.practice.exercises import EXERCISES
from gdn.practice.judge import MAX_SOURCE, judge
from gdn.practice.runner import sandbox_problem
from gdn.practice.verdict import words

PASSED, FAILED, BAD_CALL, NO_SANDBOX = 0, 1, 2, 3


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m gdn.practice", description="Practice the gated delta rule: "
                                "list the exercises, print a starter file, judge your file.")
    p.add_argument("--lang", choices=LANGS, default="en", help="the language of titles and verdicts (default en)")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="the exercises, easy to hard")
    stub = sub.add_parser("stub", help="print an exercise's starter file")
    stub.add_argument("exercise", choices=list(EXERCISES))
    run = sub.add_parser("judge", help="run an exercise's tests on your file")
    run.add_argument("file", type=Path)
    run.add_argument("--exercise", required=True, choices=list(EXERCISES))
    run.add_argument("--sandbox", action="store_true", help="judge in the sandbox a shared server uses (bubblewrap)")
    run.add_argument("--seed", type=int, default=None, help="the hidden tests' seed (a verdict names its seed)")
    for sp in sub.choices.values():
        sp.add_argument("--lang", choices=LANGS, default=argparse.SUPPRESS, help="as above, after the command")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command == "list":
        for i, (eid, ex) in enumerate(EXERCISES.items(), 1):
            print(f"{i}. {eid:<12} {t(f'practice.level_{ex.level}', args.lang):<7} {t(f'practice.ex_{eid}_title', args.lang)}")
        return PASSED
    if args.command == "stub":
        sys.stdout.write(EXERCISES[args.exercise].stub())
        return PASSED
    try:
        source = args.file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        print(f"cannot read {args.file}: {e}", file=sys.stderr)
        return BAD_CALL
    if len(source) > MAX_SOURCE:
        print(f"{args.file} is longer than {MAX_SOURCE} characters", file=sys.stderr)
        return BAD_CALL
    if args.sandbox and (why := sandbox_problem()) is not None:
        print(f"no sandbox on this machine: {why}", file=sys.stderr)
        return NO_SANDBOX
    verdict = judge(args.exercise, source, sandbox=args.sandbox, seed=args.seed)
    print("\n".join(words(verdict, args.lang)))
    if verdict.printed:
        print(f"\n--- {t('practice.printed_title', args.lang)} ---\n{verdict.printed.rstrip()}")
    return PASSED if verdict.passed else FAILED


if __name__ == "__main__":
    sys.exit(main())
