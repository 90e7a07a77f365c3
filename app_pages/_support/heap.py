"""Keep Python's garbage collector from pausing every step: import once per server process.

Streamlit runs a full collection (gc.collect(2)) after every script run, fragments included. With torch,
plotly, pandas and the app's modules loaded, that walks about 250,000 long-lived objects: 110-180 ms per
run on the 2-core box, holding the GIL, so the run's last messages (the new figure) waited behind it and a
key press on the memory page took that much longer. Those objects live as long as the server: gc.freeze()
moves them to a permanent generation the collector never walks again (a full collection then takes
well under a millisecond), while everything created later, sessions and figures, is still collected.
"""
import gc

import pandas  # noqa: F401  (the libraries every page loads: import them before freezing)
import plotly.graph_objects  # noqa: F401
import torch  # noqa: F401

import gdn.figures
import gdn.lessons.memory
import gdn.qwen35  # noqa: F401

gc.collect()          # what is garbage now is freed, not frozen
gc.freeze()
