"""Keep Python's full garbage collections from pausing a run: import once per server process.

Streamlit's default is a full collection (gc.collect(2)) after every script run, fragments included
(runner.postScriptGC); .streamlit/config.toml turns that off, because it walked every object of every
session (bench/README.md, "Live class (issue 28)"). Python's own generational collector still runs, and
its full collections (when the objects that survived the younger generations reach a quarter of the
long-lived ones) walk every long-lived object too. With torch, plotly, pandas and the app's modules
loaded, those are about 250,000 objects: 110-180 ms per full collection on the 2-core box (100 ms when
re-measured for this note), holding the GIL, so whatever run it falls in waits that much longer for its
last messages. Those objects live as long as the server: gc.freeze() moves them to a permanent
generation the collector never walks again (a full collection then takes well under a millisecond),
while everything created later, sessions and figures, is still collected. (Were postScriptGC turned
back on, its collection after each run would skip the frozen objects too, but still walk every
session's.)
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
