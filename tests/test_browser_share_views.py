"""Every kind of share link the app makes, made by the share button in one tab and opened in a fresh tab of
another browser context (a new session, nothing kept in the tab): the same page, the same widget values, the
same player position and numbers. The waits are for the figure or the widget itself, never a fixed time."""
from urllib.parse import quote

import pytest

from app_pages._real_model.replay_link import ReplaySpec
from devtools.app_server import wait_for_app

pytestmark = pytest.mark.browser

COUNTER = "document.querySelector('.gdn-counter')?.textContent || ''"
FIGURE = "[...document.querySelectorAll('.gdn-player-figure td[data-panel]')].map(td => td.textContent).join(' ')"
SIZE = {"width": 1280, "height": 800}


def share(page) -> str:
    """Click the sidebar's share button (either language) and return the link its dialog shows."""
    page.locator(".st-key-share_open button").click()
    code = page.locator('[data-testid="stDialog"] [data-testid="stCode"]')
    code.wait_for(timeout=30_000)
    link = code.inner_text().strip()
    page.keyboard.press("Escape")
    return link


@pytest.fixture
def fresh(tabs):
    """A tab of its own browser context (no cookies or storage of `page`): the link's first visitor."""
    tab = tabs.open(SIZE, locale="en-GB")
    yield tab
    tabs.wipe(tab)


def open_in(tab, link: str, chart: bool = True) -> None:
    tab.goto(link)
    wait_for_app(tab, chart=chart)


def widget_value(tab, key: str) -> str:
    """What a keyed widget shows: a select's chosen label, a number box's or a slider's value."""
    box = tab.locator(f".st-key-{key}")
    box.wait_for(timeout=30_000)
    number = box.locator("input")
    if number.count() and number.first.get_attribute("type") == "number":
        return number.first.input_value()
    thumb = box.locator('[data-testid="stSliderThumbValue"]')
    if thumb.count():
        return thumb.first.inner_text().strip()
    return box.inner_text().strip()


def test_a_replayed_head_reopens_at_the_same_step_with_the_same_numbers(page, fresh, app_url):
    page.goto(f"{app_url}/real_model?lang=en&real_model_preset=recall&real_model_view=replay&real_model_layer=1"
              "&real_model_iv=beta%3D0.00%3Bhead%3Dall")
    wait_for_app(page, chart=False)
    page.locator(".st-key-real_model_replay button").click()
    page.wait_for_selector(".gdn-player-figure td[data-panel]", timeout=60_000)
    page.locator("h1").click()
    page.keyboard.press("ArrowRight")
    page.wait_for_function("location.search.includes('memory_stage=')", timeout=20_000)
    step, numbers = page.evaluate(COUNTER), page.evaluate(FIGURE)
    link = share(page)
    assert "/memory_table?" in link and "memory_replay_of=" in link and "memory_preset=replay" in link, link
    fresh.goto(link)                                        # through the real-model page, back to the memory page
    fresh.wait_for_function(f"({COUNTER}) === {step!r}", timeout=90_000)
    fresh.wait_for_selector(".gdn-player-figure td[data-panel]")
    assert fresh.evaluate(FIGURE) == numbers
    assert "β := 0.00" in fresh.inner_text(".gdn-player") or "β := 0.00" in fresh.inner_text("body")
    assert fresh.locator('[data-testid="stAlert"]').filter(has_text="cannot").count() == 0
    assert not fresh.problems and not page.problems, (fresh.problems, page.problems)


def test_a_replay_link_of_a_typed_prompt_says_what_it_could_not_restore(fresh, app_url):
    spec = ReplaySpec(1, 0, 1, 4, 4, 512, "typed", "", "qwen35-demo-random")
    open_in(fresh, f"{app_url}/memory_table?lang=zh&memory_preset=replay&memory_replay_of={quote(spec.text())}")
    assert "第 1 层、头 0、词元 1–4" in fresh.inner_text('[data-testid="stAlert"]')
    assert "链接从不携带输入的提示" in fresh.inner_text("body")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_intervention_reopens(page, fresh, app_url, lang):
    page.goto(f"{app_url}/real_model?lang={lang}&real_model_preset=recall&real_model_view=intervene"
              "&real_model_layer=1&real_model_iv=alpha%3D0.35%3Bhead%3D2")
    wait_for_app(page)
    shown = {k: widget_value(page, k) for k in ("real_model_iv_head", "real_model_iv_alpha", "real_model_layer")}
    link = share(page)
    assert "real_model_iv=alpha%3D0.35%3Bhead%3D2" in link and "real_model_view=intervene" in link, link
    open_in(fresh, link)                                   # waits for the before/after figure
    assert {k: widget_value(fresh, k) for k in shown} == shown
    assert fresh.locator(".st-key-real_model_iv_alpha_on input").is_checked()
    assert share(fresh) == link                             # the same view names itself the same way


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_real_model_replay_view_reopens_with_its_window(page, fresh, app_url, lang):
    page.goto(f"{app_url}/real_model?lang={lang}&real_model_preset=recall&real_model_view=replay&real_model_layer=1"
              "&real_model_head=2&real_model_replay_len=5&real_model_replay_start=3")
    wait_for_app(page, chart=False)
    keys = ("real_model_layer", "real_model_head", "real_model_replay_len", "real_model_replay_start")
    shown = {k: widget_value(page, k) for k in keys}
    assert shown["real_model_replay_len"] == "5" and shown["real_model_replay_start"] == "3"
    link = share(page)
    open_in(fresh, link, chart=False)
    assert {k: widget_value(fresh, k) for k in keys} == shown


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_practice_exercise_reopens_without_the_code(page, fresh, app_url, lang):
    page.goto(f"{app_url}/practice?lang={lang}&practice_exercise=recurrence")
    wait_for_app(page, chart=False)
    chosen = widget_value(page, "practice_exercise")
    link = share(page)
    assert "practice_exercise=recurrence" in link and "code" not in link.split("?")[1], link
    open_in(fresh, link, chart=False)
    assert widget_value(fresh, "practice_exercise") == chosen


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("prefix", ["recall", "update"])
def test_a_training_seed_reopens(page, fresh, app_url, prefix, lang):
    page.goto(f"{app_url}/{prefix}?lang={lang}&{prefix}_seed=42")
    wait_for_app(page)
    assert widget_value(page, f"{prefix}_seed") == "42"
    link = share(page)
    assert f"{prefix}_seed=42" in link
    open_in(fresh, link)
    assert widget_value(fresh, f"{prefix}_seed") == "42"


# Each number's drawn width against its cell's: a number wider than its cell less a 2 px gap ran into the next
# ("-0.01-0.01"); the page and each figure no wider than the window and its column.
MEASURE_TABLES = """() => {
  const cramped = [];
  for (const td of document.querySelectorAll('.gdn-player-figure td.cell')) {
    const range = document.createRange(); range.selectNodeContents(td);
    const text = range.getBoundingClientRect().width, cell = td.getBoundingClientRect().width;
    if (td.textContent && text > cell - 2) cramped.push(`${td.textContent}: ${text.toFixed(1)} in ${cell.toFixed(1)}`);
  }
  const figures = [...document.querySelectorAll('.gdn-player-figure .gdn-memory')]
    .filter(f => f.scrollWidth > f.clientWidth + 1).length;
  return {page: document.documentElement.scrollWidth - document.documentElement.clientWidth, figures,
          cramped: cramped.slice(0, 5), cells: document.querySelectorAll('.gdn-player-figure td.cell').length};
}"""


@pytest.mark.parametrize("screen, mode", [((1280, 720), "&mode=lecture"), ((1440, 900), "")])
@pytest.mark.parametrize("dims", [4, 8])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_replayed_tables_fit_the_screen_with_numbers_apart(tabs, app_url, screen, mode, dims, lang):
    """A real head's tables (numbers like "-0.01"), as a lecturer projects them: no sideways scrolling and no
    two numbers touching, at 4 dims (one row of four tables) and 8 (two rows of two)."""
    tab = tabs.open({"width": screen[0], "height": screen[1]})
    try:
        spec = ReplaySpec(1, 0, 1, 12, dims, 512, f"recall.{lang}", "", "qwen35-demo-random")
        tab.goto(f"{app_url}/memory_table?lang={lang}{mode}&memory_preset=replay&memory_t=3&memory_stage=write"
                 f"&memory_replay_of={quote(spec.text())}")
        tab.wait_for_url("**/memory_table?**", timeout=90_000)
        tab.wait_for_selector(".gdn-player-figure td.cell", timeout=90_000)
        wait_for_app(tab)
        got = tab.evaluate(MEASURE_TABLES)
        assert got["cells"] >= 4 * dims * dims
        assert got["page"] <= 0 and got["figures"] == 0 and not got["cramped"], got
    finally:
        tabs.wipe(tab)
