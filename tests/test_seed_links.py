"""A quick run's seed, and the run a view showed, reopen from the share link (recall and update pages, zh and
en); a run the server does not keep is said in words, and a link never starts a training by itself. The
practice page's link names the exercise and never the learner's code."""
from urllib.parse import parse_qsl, urlsplit

import pytest

from tests.apptest import open_app

PAGES = {"recall": ("app_pages/recall.py", "recall_train", "recall_quick_run"),
         "update": ("app_pages/update.py", "update_train", "update_quick_run")}


@pytest.fixture
def tiny_quick_runs(monkeypatch):
    """Both quick runs at 4 steps: a few seconds each (the settings are part of the cache key, so a tiny run
    never stands in for a real one)."""
    from gdn.recall import quick, update
    for table in (quick.QUICK, update.UPDATE_QUICK):
        monkeypatch.setitem(table, "steps", 4)
        monkeypatch.setitem(table, "eval_every", 2)
        monkeypatch.setitem(table, "test_sequences", 8)


def share_params(at) -> dict:
    at.button(key="share_open").click().run()
    link = next(c.value for c in at.code if c.value.startswith("http"))
    return dict(parse_qsl(urlsplit(link).query))


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("prefix", ["recall", "update"])
def test_a_quick_run_reopens_from_its_link(prefix, lang, tiny_quick_runs):
    page, button, shown = PAGES[prefix]
    seed = {"recall": 5, "update": 6}[prefix] + (10 if lang == "zh" else 0)
    at = open_app(lang, page=page, **{f"{prefix}_seed": str(seed)})
    at.button(key=button).click().run()
    assert not at.exception
    params = share_params(at)
    assert params[f"{prefix}_seed"] == str(seed) and params[f"{prefix}_ran"] == str(seed), params
    again = open_app(params.pop("lang"), page=page, **params)
    assert not again.exception
    assert again.number_input(key=f"{prefix}_seed").value == seed
    run, before = again.session_state[shown], at.session_state[shown]
    assert run["seed"] == seed and run["rows"] == before["rows"]
    assert again.success and str(seed) in again.success[0].value
    assert not [i for i in again.info if i.icon == ":material/link_off:"]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("prefix", ["recall", "update"])
def test_a_quick_run_this_server_does_not_keep_is_said_not_trained(prefix, lang, tiny_quick_runs):
    page, _, shown = PAGES[prefix]
    at = open_app(lang, page=page, **{f"{prefix}_seed": "77", f"{prefix}_ran": "77"})
    assert not at.exception
    assert shown not in at.session_state and not at.success
    said = " ".join(i.value for i in at.info if i.icon == ":material/link_off:")
    assert "77" in said and ("quick run" in said if lang == "en" else "快速训练" in said), said
    assert at.number_input(key=f"{prefix}_seed").value == 77


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_practice_link_names_the_exercise_and_never_the_code(lang):
    at = open_app(lang, page="app_pages/practice.py", practice_exercise="recurrence")
    assert at.selectbox(key="practice_exercise").value == "recurrence"
    at.session_state["practice_pending"] = ("recurrence", "def secret_solution(): pass", 1)
    params = share_params(at)
    assert params["practice_exercise"] == "recurrence" and params["lang"] == lang
    assert not any("secret_solution" in v for v in params.values()) and set(params) == {"lang", "practice_exercise"}
    again = open_app(params.pop("lang"), page="app_pages/practice.py", **params)
    assert again.selectbox(key="practice_exercise").value == "recurrence"
