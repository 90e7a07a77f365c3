"""Numbers and words as a person reads them: 3 significant digits, agreement under the format's floor as
"< 1e-15", a prompt's surrounding blanks trimmed and named, bytes that are no character shown as bytes,
a bilingual demo's guesses kept in the prompt's script, and every chart's hovers at 3 significant digits."""
import json
import re

import numpy as np
import pytest

from gdn.qwen35 import load_model
from gdn.qwen35.sources import TRAINED_PATH
from gdn.qwen35.tokenizer import _bytes_to_unicode, show_bytes, trim_prompt
from gdn.units import AGREEMENT_FLOOR, fmt_diff, sig3
from tests.apptest import open_app
from tests.test_figures import PAGES_AND_VIEWS


def test_three_significant_digits():
    assert sig3(-14.370999999999997) == "-14.4"
    assert [sig3(x) for x in (0.0012345, 2.0, 123456, -0.0, 0.5)] == ["0.00123", "2", "1.23e5", "0", "0.5"]
    for x in np.random.default_rng(0).uniform(-1e4, 1e4, 50):                # read back, it is x to 3 digits
        assert float(sig3(x)) == pytest.approx(x, rel=5e-3)


def test_agreement_reads_as_under_the_floor():
    assert fmt_diff(0.0) == "< 1e-15" and fmt_diff(2.2e-16) == "< 1e-15"           # not 0.0e+00, not 2.2e-16
    assert fmt_diff(5e-7, "float32") == "< 1e-6" and fmt_diff(3e-6, "float32") == "3.0e-6"
    assert fmt_diff(3.4e-12) == "3.4e-12" and fmt_diff(-0.021) == "0.021"
    assert fmt_diff(AGREEMENT_FLOOR["float64"]) == "1.0e-15"                     # at the floor: a number again


def test_trim_names_what_it_removed():
    assert trim_prompt("the tiger is red .\n") == ("the tiger is red .", {"end": {"newline": 1}})
    assert trim_prompt("\r\n\r\n  x y \t") == ("x y", {"start": {"newline": 2, "space": 2}, "end": {"space": 1, "tab": 1}})
    assert trim_prompt("no blanks") == ("no blanks", {})
    assert trim_prompt("\u3000中文\u00a0") == ("中文", {"start": {"other": 1}, "end": {"other": 1}})
    assert trim_prompt(" \n ") == ("", {})


def test_bytes_that_are_no_character_show_as_bytes():
    assert show_bytes("中".encode()) == "中"
    assert show_bytes(b"a\xe4\xb8") == "a⟨e4 b8⟩"                                  # a character cut after 2 of 3 bytes
    assert show_bytes(b"\xff x") == "⟨ff⟩ x" and "\ufffd" not in show_bytes(b"\xe4\xb8\xad\xe4")
    tok = load_model(TRAINED_PATH).tokenizer
    byte_id = lambda b: tok.tok.token_to_id(_bytes_to_unicode()[b])             # the byte-level base tokens
    first, second = byte_id(0xE4), byte_id(0xB8)
    assert tok.piece(first) == "⟨e4⟩"
    pieces, group = tok.display_pieces([first, second])                        # the prompt ends mid-character
    assert pieces == ["⟨e4 b8⟩", ""] and group == [0, 0]
    full = tok.tok.encode("中", add_special_tokens=False).ids
    assert "".join(tok.display_pieces(full)[0]) == "中"


def test_demo_guesses_stay_in_the_prompt_script():
    tok = load_model(TRAINED_PATH).tokenizer
    english = tok.encode(" the tiger is red .").ids
    mask = tok.same_script_mask(english)
    decoded = [tok.tok.decode([i]) for i in range(tok.vocab_size)]
    has_cjk = np.array([bool(re.search(r"[\u3400-\u9fff]", d)) for d in decoded])
    assert has_cjk.any() and not mask[has_cjk].any()                             # no Chinese word can be guessed
    assert mask[~has_cjk].all()                                                  # everything else can
    chinese = tok.encode(" 那 虎 是 红 。").ids
    has_latin = np.array([bool(re.search(r"[A-Za-z]", d)) for d in decoded])
    assert not tok.same_script_mask(chinese)[has_latin].any()
    assert tok.same_script_mask(tok.encode(" tiger 虎").ids) is None             # both scripts: nothing kept out


HOVER_DIGITS = re.compile(r"%\{(\w+)(?::([^}]*))?\}")


def _fine_format(fmt: str | None) -> bool:
    """A d3 format that shows at most 3 significant digits (or a percentage / an integer count)."""
    return fmt is None or bool(re.fullmatch(r"[+,]?\.(?:[0-3]~?g|[0-1]%|0f)|[+]?\.[0-1]%", fmt))


@pytest.mark.parametrize("page,params", PAGES_AND_VIEWS, ids=lambda v: str(v))     # start draws HTML only
def test_every_hover_shows_three_significant_digits(page, params):
    at = open_app("en", page, **params)
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert specs
    for spec in specs:
        for name, axis in spec["layout"].items():
            if re.fullmatch(r"[xy]axis\d*", name) and axis.get("type") not in ("category", "multicategory"):
                assert axis.get("hoverformat") == ".3~g", (page, name)
        for trace in spec["data"]:
            if trace.get("type") == "heatmap":
                assert trace.get("zhoverformat") == ".3~g" or "%{z:" in trace.get("hovertemplate", "%{z:.3~g}")
            for var, fmt in HOVER_DIGITS.findall(trace.get("hovertemplate") or ""):
                assert _fine_format(fmt or None), (page, var, fmt)
