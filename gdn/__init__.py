"""Gated DeltaNet Explorer's library: kernels, step records, experiments, figures, Qwen3.5.

Never imports streamlit (tests/test_boundaries.py checks it): everything here runs in a notebook too.
"""
from gdn.chunked import chunk_gated_delta_rule
from gdn.recurrent import recurrent_gated_delta_rule

__all__ = ["chunk_gated_delta_rule", "recurrent_gated_delta_rule"]
