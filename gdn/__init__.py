"""Gated DeltaNet Explorer's library. Imports flow one way, each folder using only those after it:

    gdn.figures, gdn.qwen35, gdn.recall, gdn.practice  ->  gdn.lessons  ->  gdn.ops

    ops/       the kernels: recurrent reference, chunked (WY/UT), state-norm scan, input checks
    lessons/   the toy math behind each page, one module per page (memory, compare, playground, ...)
    figures/   one module per page: arrays in, plotly Figure out (the only place plotly is imported)
    recall/    associative recall (MQAR): tiny models on our kernels, their training and the shipped sweep
    practice/  the practice page's exercises and the judge that runs learners' code in a sandboxed child
    qwen35/    real Qwen3.5 checkpoints: config, safetensors, the model, its trace; demo/ the shipped demos
    live/      the live class's store: rooms, questions and votes in SQLite or PostgreSQL (no UI)
    i18n.py    string lookup (the strings live in assets/i18n/)
    lru.py     the one bounded LRU map (shared caches, figure skeletons, CUDA graphs)
    units.py   how numbers, sizes and half-lives are written, everywhere
    timing.py  timing the token loop against the chunked kernel (in a child process for the page)
    rules.py   the write rules' one colour each, on every page

Never imports streamlit, and `import gdn` or `import gdn.lessons` never imports plotly
(tests/test_boundaries.py checks both): everything here runs in a notebook too.
"""
from gdn.ops import chunk_gated_delta_rule, recurrent_gated_delta_rule

__all__ = ["chunk_gated_delta_rule", "recurrent_gated_delta_rule"]
