"""Every page reopens from its link: set the query parameters a shared URL carries, and the widgets
show them (the browser side of the sync is covered by tests/test_browser_links.py)."""
import pytest

from tests.apptest import open_app


def test_cost_link_round_trip():
    at = open_app("en", page="app_pages/cost.py", cost_model="Qwen3.5-9B", cost_dtype="bf16", cost_batch="8",
                  cost_T="4096", cost_interval="2")
    assert not at.exception
    assert at.selectbox(key="cost_model").value == "Qwen3.5-9B"
    assert at.session_state["cost_dtype"] == "bf16"
    assert at.number_input(key="cost_batch").value == 8
    assert at.session_state["cost_T"] == 4096 and at.session_state["cost_interval"] == 2


def test_real_model_link_round_trip():
    at = open_app("zh", page="app_pages/real_model.py", real_model_max_tokens="64", real_model_view="head")
    assert not at.exception
    assert at.slider(key="real_model_max_tokens").value == 64
    assert at.session_state["real_model_view"] == "head"


@pytest.mark.parametrize("page,params", [
    ("app_pages/memory_table.py", {"memory_preset": "random", "memory_dk": "5", "memory_t": "3"}),
    ("app_pages/compare.py", {"compare_preset": "city", "compare_t": "3"}),
    ("app_pages/chunking.py", {"chunking_T": "9", "chunking_C": "3"}),
])
def test_share_link_in_the_sidebar_carries_the_view(page, params):
    at = open_app("en", page=page, mode="lecture", **params)
    assert not [c for c in at.code if c.value.startswith("http")]      # made only when asked for
    at.button(key="share_open").click().run()
    link = next(c.value for c in at.code if c.value.startswith("http"))
    assert "lang=en" in link and "mode=lecture" in link
    for key, value in params.items():
        assert f"{key}={value}" in link, (key, link)


def _widgets(block):
    for child in block.children.values():
        yield child
        if hasattr(child, "children"):
            yield from _widgets(child)


@pytest.mark.parametrize("page,params", [
    ("app_pages/memory_table.py", {"memory_preset": "random"}), ("app_pages/compare.py", {}),
    ("app_pages/chunking.py", {}), ("app_pages/playground.py", {}),
    ("app_pages/playground.py", {"playground_panel": "capacity"}),
    ("app_pages/playground.py", {"playground_panel": "knorm"}),
    ("app_pages/real_model.py", {"real_model_view": "head"}),
])
def test_every_widget_streamlit_binds_to_the_url_is_in_the_share_registry(page, params):
    """A widget drawn with bind="query-params" reads the link, so the share link must carry it: its key is
    registered (ui.bound) where it is drawn."""
    at = open_app("en", page=page, **params)
    assert not at.exception
    bound = {w.proto.query_param_key for block in (at.main, at.sidebar) for w in _widgets(block)
             if getattr(getattr(w, "proto", None), "query_param_key", "")}
    assert bound, "each of these views draws at least one bound widget"
    assert bound <= set(at.session_state["_linked"]), bound - set(at.session_state["_linked"])


def test_share_link_carries_the_intervention_and_reopens_it():
    """A share link made in the intervention view names the view, the layer and the intervention (one
    value: the gates set, their constants, the head), and nothing else of the view; opened in a fresh
    session it reopens the same toggles and constants, and so the same answers."""
    at = open_app("en", page="app_pages/real_model.py", real_model_view="intervene")
    at.toggle(key="real_model_iv_alpha_on").set_value(True).run()
    at.slider(key="real_model_iv_alpha").set_value(0.35).run()
    assert not at.exception and at.session_state["real_model_iv_alpha"] == 0.35
    at.button(key="share_open").click().run()
    link = next(c.value for c in at.code if c.value.startswith("http"))
    assert "real_model_view=intervene" in link and "real_model_layer=" in link
    assert "real_model_iv=alpha%3D0.35%3Bhead%3D" in link or "real_model_iv=alpha=0.35;head=" in link, link
    assert "real_model_iv_" not in link and "_edit" not in link and "real_model_source" not in link
    params = dict(p.split("=", 1) for p in link.split("?", 1)[1].split("&"))
    from urllib.parse import unquote
    again = open_app("en", page="app_pages/real_model.py", **{k: unquote(v) for k, v in params.items() if k != "lang"})
    assert not again.exception
    assert again.toggle(key="real_model_iv_alpha_on").value and not again.toggle(key="real_model_iv_beta_on").value
    assert again.slider(key="real_model_iv_alpha").value == 0.35
    assert again.selectbox(key="real_model_iv_head").value == at.selectbox(key="real_model_iv_head").value
    assert again.dataframe[0].value.equals(at.dataframe[0].value)          # the same answers before and after
