"""The real-model page's views, each a function of one ViewContext; only the chosen one runs (the others
may need a forward pass). The picker shows them in this order."""
from app_pages._real_model.views.gates import gates
from app_pages._real_model.views.head import check, head
from app_pages._real_model.views.intervene import intervene
from app_pages._real_model.views.replay import export, replay

VIEWS = {"gates": gates, "intervene": intervene, "check": check, "head": head, "replay": replay, "export": export}
