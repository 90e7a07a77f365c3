"""Figure builders: arrays in, a plotly Figure (or, for tables that change every step, HTML) out.
No streamlit, no randomness, no I/O."""
from gdn.figures.memory import fig_memory_player, fig_memory_step, fig_timeline, memory_step_html

__all__ = ["fig_memory_player", "fig_memory_step", "fig_timeline", "memory_step_html"]
