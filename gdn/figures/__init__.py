"""Figure builders: arrays in, plotly Figure out. No streamlit, no randomness, no I/O."""
from gdn.figures.memory import fig_memory_player, fig_memory_step, fig_timeline

__all__ = ["fig_memory_player", "fig_memory_step", "fig_timeline"]
