"""The real-model page's views, each a function of one ViewContext; only the chosen one runs (the others
may need a forward pass). The picker shows them in the order of VIEWS.

    gates.py      every head's gates over the prompt with the top-3 guesses, then the per-layer overview
    intervene.py  a layer's alpha or beta set to a constant: the guesses before and after
    head.py       one head up close (gates, ||S_t||, a block of its state), and check: both kernels on it
    replay.py     replay: a window of one head on the memory page; export: the gates as a file
"""
from app_pages._real_model.views.gates import gates
from app_pages._real_model.views.head import check, head
from app_pages._real_model.views.intervene import intervene
from app_pages._real_model.views.replay import export, replay

VIEWS = {"gates": gates, "intervene": intervene, "check": check, "head": head, "replay": replay, "export": export}
