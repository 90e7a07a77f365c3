"""A shared link opened first on a freshly started server shows the full app (navigation, language,
lecture mode), not a bare page script."""
import pytest

from devtools.app_server import app_server, wait_for_app

pytestmark = pytest.mark.browser


def test_deep_link_on_a_fresh_server(browser):
    with app_server() as url:                                       # its own server: this is its first request
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(f"{url}/chunking?lang=zh&mode=lecture&chunking_T=8")
        wait_for_app(page)
        assert "分块" in page.inner_text("h1")
        assert page.get_by_role("link", name="记忆表").count() >= 1          # top navigation is there
        assert page.evaluate("getComputedStyle(document.body).fontSize") == "22px"   # lecture CSS applied
        assert "_ui" not in page.inner_text("body")                           # no legacy page list
        page.close()


def open_share(page) -> str:
    """Click the sidebar's "Share this view" and return the link its dialog shows."""
    page.get_by_role("button", name="Share this view").click()
    code = page.locator('[data-testid="stDialog"] [data-testid="stCode"]')
    code.wait_for(timeout=30_000)
    return code.inner_text().strip()


def test_share_link_in_the_browser_reopens_the_view(page, app_url):
    page.goto(f"{app_url}/?lang=en")
    wait_for_app(page)
    page.goto(f"{app_url}/compare?lang=en&compare_preset=city&compare_t=3")
    wait_for_app(page)
    link = open_share(page)
    assert link.startswith(f"{app_url}/compare?") and "/compare/compare" not in link
    assert "compare_preset=city" in link and "compare_t=3" in link
    # the QR code is drawn (the dialog's image arrives as its own request, after the link)
    page.wait_for_function("""() => { const img = document.querySelector('[data-testid="stDialog"] img');
                              return img && img.complete && img.naturalWidth > 100; }""", timeout=30_000)
    page.goto(link)
    wait_for_app(page)
    assert "Hangzhou" in page.inner_text("body") or "杭州" in page.inner_text("body")
    assert not page.problems, page.problems


def test_memory_page_has_its_own_address(page, app_url):
    """/memory (the memory page's old name) used to end in Streamlit's "page not found"."""
    page.goto(f"{app_url}/memory?lang=en&memory_preset=k1_update")
    wait_for_app(page)
    body = page.inner_text("body")
    assert "not found" not in body.lower() and "The memory table S" in page.inner_text("h1")
    assert page.url.split("?")[0].endswith("/memory") and "memory_preset=k1_update" in page.url


def test_share_link_follows_fragment_reruns(page, app_url):
    """Steps happen in the browser (no run at all): the share link must still name the step on
    screen (a panel drawn by the last full run said stage=decay after three presses)."""
    page.goto(f"{app_url}/memory?lang=en&memory_preset=k1_update&memory_t=2")
    wait_for_app(page)
    page.locator("h1").click()
    for step in (7, 8, 9):                                               # each press a fragment rerun
        page.keyboard.press("ArrowRight")
        page.wait_for_function(f"document.body.innerText.includes('Step {step} of 20')", timeout=20_000)
    page.wait_for_function("location.search.includes('memory_stage=write')", timeout=20_000)
    link = open_share(page)
    assert "memory_t=2" in link and "memory_stage=write" in link and "memory_preset=k1_update" in link, link
    assert "Step 9 of 20" in page.inner_text("body")                         # the click changed nothing else
    page.goto(link)
    wait_for_app(page)
    assert "Step 9 of 20" in page.inner_text("body")
    assert not page.problems, page.problems
