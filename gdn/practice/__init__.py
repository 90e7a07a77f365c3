"""Practice: exercises on the gated delta rule, and a judge that runs a learner's code in a locked-in child
process and says where it leaves the reference (docs/practice.md: the threat model).

    exercises.py   the bank, easy to hard: what each defines, its starter file, its tests
    cases.py       each exercise's tests: visible examples and hidden random ones, and their checks
    reference.py   the reference solutions in float64 and the classic mistakes (never sent anywhere)
    compare.py     what came back against the reference: shapes by axis, errors, the first wrong token
    verdict.py     the verdict as lines of i18n keys, put into words in the learner's language
    judge.py       one run of an exercise's tests on a learner's file
    runner.py      the child: limits, or bubblewrap's sandbox where the server is shared
    harness.py     the child's own side: locks itself in, runs the calls, sends tensors back
    __main__.py    python -m gdn.practice list | stub ID | judge FILE --exercise ID
"""
