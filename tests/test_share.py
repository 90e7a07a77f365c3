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


def test_a_link_too_long_for_a_qr_code_gets_none_never_an_error():
    assert qr_png("http://h/" + "x" * 2400) is None                      # segno's DataOverflowError, caught
    assert qr_png("http://h/" + "x" * 1000).startswith(b"\x89PNG")


def test_the_public_url_is_checked_before_it_is_used():
    from app_pages._support.share import MAX_PUBLIC_URL, url_problem
    for good in ("http://192.168.1.20:8501", "https://class.example.org/gdn/", "http://[fe80::1]:8501/",
                 "https://课堂.example.cn"):
        assert url_problem(good) is None, good
    for bad, why in (("http://a b/", "space"), ("http://a\tb/", "space"), ("http://a\u202eb/", "space"),
                     ("http://x/" + "y" * MAX_PUBLIC_URL, "long"), ("http://[abc:8501", "malformed"),
                     ("http://h:port/", "malformed"), ("class.example.org", "scheme"), ("javascript:alert(1)", "scheme"),
                     ("http:///x", "host"), ("http://a<b>/", "host")):
        assert url_problem(bad) == why, bad


def test_text_from_a_link_is_echoed_visible_and_short():
    from app_pages._support.share import visible_cut
    assert visible_cut("AB\u202eC234", 12) == "ABC234"                    # a bidi override never reaches the page
    assert visible_cut("\u200bA\u2066B\u0000\u2028C9\u0301\u0301", 12) == "ABC9"   # zero-width, isolates, controls,
    assert visible_cut("A\u0301", 12) == "\u00c1"                           # combining marks; one that composes stays
    assert visible_cut("ＡＢＣ２３４", 12) == "ABC234"                     # full width folded
    assert visible_cut("x" * 50, 12) == "x" * 12 + "…"
