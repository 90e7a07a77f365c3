"""What only the browser can show: the chart toolbar speaks the page's language, and the prompt uploader
shows our labels, no English on a Chinese page, and its file chip inside its box, clear of the button."""
import re

import pytest

from gdn.i18n import t, table
from devtools.app_server import wait_for_app, wait_until_settled

pytestmark = pytest.mark.browser

TOOLBAR = """() => [...document.querySelectorAll('.modebar-btn')].map(b =>
    [b.getAttribute('data-title'), getComputedStyle(b, '::after').content])"""


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_chart_toolbar_tooltips_are_in_the_page_language(page, app_url, lang):
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{app_url}/cost?lang={lang}")
    wait_for_app(page)
    page.locator(".js-plotly-plot").first.hover()              # plotly draws the toolbar on hover
    page.wait_for_selector(".modebar-btn")
    buttons = page.evaluate(TOOLBAR)
    assert len(buttons) >= 5
    words = {v for k, v in table(lang).items() if k.startswith("toolbar.")}
    for title, after in buttons:
        # the tooltip is drawn from ::after: the title itself, or (Streamlit's own button) the words our CSS puts there
        shown = title if "attr" in after else after.strip('"')
        assert shown in words, (title, after)           # in zh: every tooltip Chinese, none left in English


UPLOADER = ".st-key-real_model_upload"


def open_uploader(page, app_url, lang, width, height, mode=""):
    page.set_viewport_size({"width": width, "height": height})
    page.goto(f"{app_url}/real_model?lang={lang}{mode}")
    wait_for_app(page)
    page.locator("[data-testid='stExpander'] summary").filter(has_text=t("real_model.more_input", lang)).first.click()
    page.wait_for_selector(f"{UPLOADER} button")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_uploader_labels_are_ours(page, app_url, lang):
    open_uploader(page, app_url, lang, 1440, 900)
    button = page.locator(f"{UPLOADER} [data-testid='stFileUploaderDropzone'] button").first
    assert button.evaluate("b => getComputedStyle(b, '::after').content") == f'"{t("real_model.upload_browse", lang)}"'
    text = page.locator(UPLOADER).inner_text()                 # what is drawn, Streamlit's own words included
    for icon in page.locator(f"{UPLOADER} [data-testid='stIconMaterial']").all_inner_texts():
        text = text.replace(icon, "")                          # an icon's name, drawn as its glyph by the icon font
    assert "Upload" not in text and "Drag" not in text and "MB per file" not in text
    if lang == "zh":
        leftover = re.sub(r"\.txt|\.md", "", text)
        assert not re.search(r"[A-Za-z]{3,}", leftover), text


@pytest.mark.parametrize("lang,width,height,mode", [("zh", 1440, 900, ""), ("en", 1280, 720, "&mode=lecture")])
def test_uploaded_file_chip_stays_in_its_box_and_the_blank_is_trimmed(page, app_url, lang, width, height, mode):
    open_uploader(page, app_url, lang, width, height, mode)
    page.locator(f"{UPLOADER} input[type=file]").set_input_files(files=[{
        "name": "a-rather-long-prompt-file-name.txt", "mimeType": "text/plain",
        "buffer": b"the tiger is red . ask tiger ? red .\n"}])
    page.wait_for_selector("[data-testid='stFileChip']")
    wait_for_app(page)
    wait_until_settled(page)
    box = lambda sel: page.locator(sel).first.bounding_box()
    zone, chip = box(f"{UPLOADER} [data-testid='stFileUploaderDropzone']"), box(f"{UPLOADER} [data-testid='stFileChip']")
    remove = box(f"{UPLOADER} [data-testid='stFileChipDeleteBtn']")
    add = box(f"{UPLOADER} [data-testid='stFileUploaderDropzone'] button:not([data-testid='stBaseButton-minimal'])")
    assert zone["x"] <= chip["x"] and chip["x"] + chip["width"] <= zone["x"] + zone["width"] + 0.5
    assert remove["x"] + remove["width"] <= chip["x"] + chip["width"] + 0.5          # the remove button is not cut off
    overlap_x = min(chip["x"] + chip["width"], add["x"] + add["width"]) - max(chip["x"], add["x"])
    overlap_y = min(chip["y"] + chip["height"], add["y"] + add["height"]) - max(chip["y"], add["y"])
    assert overlap_x <= 0 or overlap_y <= 0                                           # the chip and the button apart
    said = t("real_model.trimmed", lang, what=t("real_model.trim_end", lang, items=t("real_model.trim_newline_1", lang)))
    page.get_by_text(said).wait_for()
