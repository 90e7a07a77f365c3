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
