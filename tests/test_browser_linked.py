"""Linked hovers in headless Chromium: pointing at a token anywhere on the real-model page lights that
token in every figure and shows its card (its α and β for every head, its top-3 guesses)."""
import re

import pytest

from devtools.app_server import wait_for_app

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_hovering_a_token_links_every_figure(page, app_url, lang):
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{app_url}/real_model?lang={lang}")
    wait_for_app(page)
    page.wait_for_selector(".rm-gates td[data-tok]")
    page.wait_for_selector(".rm-chip[data-tok]")                  # the chips are drawn under the views
    heads = page.locator('.rm-gates tr[data-gate="alpha"]').count()
    page.locator('.rm-gates tr[data-gate="beta"] td[data-tok="5"]').first.hover()
    card = page.locator('.gdn-tok-card[data-card="5"]')
    card.wait_for(state="visible")
    # Lit: the token's α and β cells of every head, its three guesses, its tick, its column in the guesses
    # table and its chip.
    lit = page.evaluate("[...document.querySelectorAll('.gdn-tok-hover')].map(e => e.dataset.tok)")
    assert set(lit) == {"5"} and len(lit) >= 2 * heads + 3
    assert page.locator('.rm-chip.gdn-tok-hover').count() == 1
    # The card's numbers are the cells' numbers: each cell's hover title holds its value to 3 digits.
    titles = page.evaluate("""[...document.querySelectorAll('.rm-gates tr[data-gate="alpha"] td[data-tok="5"]')]
                              .map(td => td.title)""")
    alphas = [float(re.search(r"α = (-?[\d.]+)", t).group(1)) for t in titles]
    shown = [float(x) for x in card.locator("tr").nth(1).locator("td").all_inner_texts()]
    assert shown == pytest.approx([round(a, 2) for a in alphas], abs=0.006)
    # The whole card shows inside its fixed-height slot: the β row too (it was once clipped away).
    overflow = page.evaluate("""(() => { const c = document.querySelector('.gdn-tok-card[data-card="5"]');
        return c.getBoundingClientRect().bottom - c.closest('.gdn-tok-slot').getBoundingClientRect().bottom; })()""")
    assert overflow <= 1, overflow
    page.locator('.rm-chip[data-tok="2"]').hover()                # a chip lights the figures too
    page.locator('.gdn-tok-card[data-card="2"]').wait_for(state="visible")
    assert page.locator('.rm-gates td[data-tok="2"].gdn-tok-hover').count() >= 2 * heads
    assert not page.problems, page.problems
