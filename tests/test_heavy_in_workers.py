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


RUN_FIGURES = ("gates_html", "overview_html", "token_cards_html", "fig_gates_predictions", "fig_head_detail",
               "fig_state_block", "fig_head_params")


def test_a_runs_figures_are_built_in_the_worker_and_only_placed_by_the_page(monkeypatch):
    """A Run's gates (HTML for a short prompt, Plotly for a long one), its overview and the head view's figures
    are drawn in the worker that ran the prompt: the page's process calls none of their builders. Before, every
    layer's gates and overview were built in the Streamlit process (views/gates.py's layer_views), where five
    Runs queued behind one interpreter."""
    import sys

    from gdn.figures import real_model as figs
    import app_pages._real_model.views  # noqa: F401 -- the page's modules, so their bound names are patched too
    built = []
    for name in RUN_FIGURES:
        real = getattr(figs, name)
        for module in [m for m in list(sys.modules.values()) if getattr(m, name, None) is real]:
            monkeypatch.setattr(module, name, lambda *a, _real=real, _name=name, **k: built.append(_name) or _real(*a, **k))
    at = open_app("en", page="app_pages/real_model.py")
    # prompts no other test runs (a result kept by this server would be no build at all)
    for words in ("the heron is grey . ask heron ? ", "the heron is grey and the lynx is pale . ask lynx ? " * 12):
        at.text_area(key="real_model_prompt_edit").set_value(words).run()
        at.button(key="real_model_run").click().run()
        assert not at.exception
        drawn = [e for e in at.get("bidi_component") if e.proto.id.endswith("real_model_layer_gates_swap")]
        assert drawn or at.get("plotly_chart"), "no gates were placed"
    at.segmented_control(key="real_model_view").set_value("head").run()
    assert not at.exception and len(at.get("plotly_chart")) == 3
    assert built == []


def test_a_worker_starts_without_figure_code_and_draws_without_streamlit():
    """What a worker imports at start (work.py and its warm-up) holds no Plotly (through caches.py it did:
    0.14-0.93 s per start), and the module it draws a Run with, once one comes, no Streamlit."""
    import subprocess
    import sys
    from pathlib import Path
    code = ("import sys; from app_pages._support import work; work.warm(); start = {'plotly', 'streamlit'} & set(sys.modules)\n"
            "import app_pages._real_model.drawn; print(sorted(start), 'streamlit' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1]).stdout.split("\n")[-2]
    assert out == "[] False", out


def test_a_head_views_figures_built_in_a_worker_look_like_the_pages_own(tmp_path):
    """Built where Streamlit is not imported, a figure embedded plain Plotly's template; the page's own figures
    carry the one Streamlit installs as Plotly's default (its title place among others: a worker's head view
    put its title on the key-dim axis's title in lecture mode). Unpickled on the page, a worker's figures now
    take the page's template."""
    import pickle
    import subprocess
    import sys
    from pathlib import Path

    import plotly.io as pio
    import streamlit  # noqa: F401  (the page's process: Streamlit's template is Plotly's default)

    out = tmp_path / "views.pickle"
    code = ("import pickle, sys; from app_pages._real_model import drawn; from gdn.qwen35.sources import TRAINED_PATH\n"
            "ids = tuple(range(3, 40))\n"
            "views = drawn.head_views(str(TRAINED_PATH), ids, tuple(map(str, ids)), 'x', 1, 1, 32, 'zh', (22, True))\n"
            "assert 'streamlit' not in sys.modules\n"
            "open(sys.argv[1], 'wb').write(pickle.dumps(views))")
    subprocess.run([sys.executable, "-c", code, str(out)], check=True, cwd=Path(__file__).resolve().parents[1])
    views = pickle.loads(out.read_bytes())
    assert pio.templates.default == "streamlit"
    for fig in (views.detail, views.state, views.params):
        assert fig.layout.template == pio.templates["streamlit"]
