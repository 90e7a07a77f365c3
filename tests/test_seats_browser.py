"""The teacher's seats panel in a real browser (issue 49): the Room popover's widgets mount only when it
opens, so what AppTest cannot see is checked here. Opening it changes nothing in the store (a number
input seeded through the session once reported its minimum on mounting, and the cap fell to 1); the
seats by network refresh by themselves; one click removes a burst."""
import re

import pytest

from gdn.i18n import t
from gdn.live import store as live
from gdn.live.store import Store
from devtools.app_server import IDLE

SCRIPT = "203.0.113.66"


@pytest.fixture(scope="module")
def own_server(tmp_path_factory):
    """The app on a store of its own: (its URL, the store)."""
    from devtools.app_server import start_server
    db = str(tmp_path_factory.mktemp("seats") / "class.db")
    with start_server(env={"GDN_CLASS_DB": db}) as (url, _):
        yield url, Store(db, mint=(500, 100, live.ADDRESS_SEATS))


@pytest.mark.browser
def test_the_room_popover_shows_the_cap_and_removes_a_burst_in_one_click(own_server, browser):
    url, store = own_server
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(f"{url}/classroom?lang=en")
    page.locator(".st-key-live_start button:visible").first.click(timeout=90_000)
    code = page.locator(".gdn-live-code").get_attribute("data-code", timeout=30_000)
    page.locator('[data-testid="stPopover"] button').first.click()
    page.locator(".st-key-live_address_seats input").wait_for(timeout=20_000)
    page.wait_for_function(IDLE, timeout=30_000)
    assert page.locator(".st-key-live_address_seats input").input_value() == str(live.ADDRESS_SEATS)
    assert store.room(code).address_seats == live.ADDRESS_SEATS                  # opening it set nothing
    for _ in range(live.ADDRESS_SEATS + 5):
        try:
            store.join(code, SCRIPT)
        except live.AddressFull:
            pass
    store.join(code, "198.51.100.7")
    group = t("live.group", "en", seats=live.ADDRESS_SEATS, answered=0)
    page.get_by_text(group).wait_for(timeout=20_000)                             # the panel refreshed itself
    remove = page.locator("[class*='st-key-live_drop_'] button:visible", has_text=re.compile(f"{live.ADDRESS_SEATS}$"))
    remove.first.click()                                   # (while the panel redraws, an old copy may linger)
    page.get_by_text(t("live.barred_note", "en", n=1)).wait_for(timeout=20_000)
    assert store.room(code).seats == 1 and store.room(code).address_seats == live.ADDRESS_SEATS
    context.close()
