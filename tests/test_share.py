"""Share links and their QR codes."""
from app_pages._support.share import qr_png, share_url


def test_share_url_names_the_page_once():
    params = {"lang": "zh", "memory_t": 3}
    assert share_url("http://10.0.0.5:8501/", "compare", params) == "http://10.0.0.5:8501/compare?lang=zh&memory_t=3"
    assert share_url("http://h:8501/compare", "compare", params) == "http://h:8501/compare?lang=zh&memory_t=3"
    assert share_url("http://h:8501/compare/", "compare", {}) == "http://h:8501/compare"
    assert share_url("http://h:8501", "", {"lang": "en"}) == "http://h:8501/?lang=en"
    assert share_url("http://h:8501/app/", "cost", {"cost_model": "Qwen3.5-9B"}) == \
        "http://h:8501/app/cost?cost_model=Qwen3.5-9B"                      # served under a base path


def test_qr_code_is_a_png_made_here():
    png = qr_png("http://127.0.0.1:8501/?lang=zh")
    assert png.startswith(b"\x89PNG") and len(png) > 200
