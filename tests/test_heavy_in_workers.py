"""One path for heavy work (issue 50): every page that computes with a model sends it to the worker line
(app_pages/_support/jobs.py); the Streamlit process keeps a checkpoint's config and tokenizer and reads no
weight. Before, the start page's live diagram, compare's two calls, the recall page's trained trace and the
trained demo's evidence ran in the server process (in-process slots and a cached model)."""
from tests.apptest import open_app

PAGES = (("app_pages/start.py", {}), ("app_pages/compare.py", {"compare_variant": "stream"}),
         ("app_pages/recall.py", {}), ("app_pages/real_model.py", {}))


def test_no_page_reads_a_weight_or_runs_a_model_in_the_server(monkeypatch):
    from gdn.qwen35.checkpoint import Checkpoint
    from gdn.recall import inspect
    from app_pages import _recall_views
    from app_pages._real_model import about
    from app_pages._support import compute
    # what an earlier test left in this process's caches would hide a read: start from none (a function that
    # is no cache any more has no clear)
    for cached in (getattr(compute, "_open", None), about.trained_evidence, _recall_views.trained_trace):
        getattr(cached, "clear", lambda: None)()
    read = []
    for name in ("load_many", "rows"):
        real = getattr(Checkpoint, name)
        monkeypatch.setattr(Checkpoint, name, lambda self, *a, _real=real, _name=name, **k:
                            read.append(_name) or _real(self, *a, **k))
    real_shipped = inspect.load_shipped
    monkeypatch.setattr(inspect, "load_shipped", lambda *a, **k: read.append("recall model") or real_shipped(*a, **k))
    for page, params in PAGES:
        at = open_app("en", page, **params)
        assert not at.exception, (page, at.exception)
    assert read == []
