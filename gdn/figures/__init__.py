"""Figure builders: arrays in, a plotly Figure (or, for tables that change every step, HTML) out.
No streamlit, no randomness, no I/O.

    common.py            the shared look: colour scales, cell labels, fonts, horizontal axis titles
    scale.py             a figure drawn for 1280x720, its pixel lengths times a larger screen's scale
    tables.py            signed number tables as HTML (the stepped pages' cells)
    svg_chart.py         small SVG line charts for the frames the explorer swaps in the browser
    start.py             the start page's layer diagram and hybrid stack as HTML
    start_attention.py   the start page's first figure: softmax attention -> one table, as HTML
    memory.py            the memory-table page: one token's update of one head as aligned panels
    geometry_html.py     the playground's 2-D write as SVG frames
    playground.py        the playground's capacity figure
    playground_html.py   the playground toys answered in the browser: each frame's HTML
    recall.py            the recall page: the shipped MQAR results, a live run, the write step, gate init
    update.py            the update page: the shipped results, the live curves, the answer for a rewritten key
    compare.py           three rules side by side on the same token
    cost.py              state against KV-cache memory over context length
    chunking.py          the chunking page: affine maps, in-chunk matrices, both kernels, timing
    real_model.py        the real-model page: the gates of a Qwen3.5 prompt
    live.py              the live class's answer bars as HTML
"""
from gdn.figures.memory import fig_memory_player, fig_memory_step, fig_timeline, memory_step_html

__all__ = ["fig_memory_player", "fig_memory_step", "fig_timeline", "memory_step_html"]
