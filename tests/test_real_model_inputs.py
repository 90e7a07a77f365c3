"""Two defects of issue 49's probe on the real-model page: a 20 MB folder name typed in the box was echoed
back whole in the error message, and a tokenizer of another model (ids past the embedding's rows) was
listed as usable and then failed as "missing or unreadable"."""
import json

import pytest

from gdn.i18n import t
from gdn.qwen35 import load_model
from gdn.qwen35.analysis import describe
from gdn.qwen35.errors import CheckpointError
from gdn.qwen35.sources import ECHO_CHARS, FOLDER_NAME_MAX, check_folder, scan_sources
from gdn.qwen35.synth import text_config, write_checkpoint
from tests.test_real_model_page import open_demo

PASTED = "/models/" + "Qwen3.5-0.8B-" * (20_000_000 // 13)       # the probe's 20 MB paste


def test_a_pasted_megabyte_folder_name_is_refused_and_echoed_only_in_part():
    with pytest.raises(CheckpointError) as refused:
        check_folder(PASTED)
    message = str(refused.value)
    assert refused.value.kind == "long_name"
    assert message.startswith(PASTED[:ECHO_CHARS] + "…") and len(message) < ECHO_CHARS + 200
    assert f"{len(PASTED):,} characters" in message and f"{FOLDER_NAME_MAX:,}" in message


def test_a_long_name_under_the_cap_is_still_cut_in_its_message(tmp_path, monkeypatch):
    monkeypatch.setenv("GDN_MODEL_DIRS", str(tmp_path))
    name = str(tmp_path / ("x" * 300))                # one part longer than a file name may be: cannot be opened
    with pytest.raises(CheckpointError) as refused:
        check_folder(name)
    assert refused.value.kind == "unreadable" and str(refused.value).startswith(name[:ECHO_CHARS] + "…")
    assert name not in str(refused.value)


def test_a_pasted_megabyte_repo_id_is_echoed_only_in_part():
    from gdn.qwen35.sources import plan_download
    with pytest.raises(CheckpointError) as refused:
        plan_download(PASTED)                                            # the download panel's box
    assert refused.value.kind == "repo_id" and len(str(refused.value)) < ECHO_CHARS + 200


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_says_the_pasted_name_is_too_long_without_repeating_it(lang):
    at = open_demo(lang)
    at.selectbox(key="real_model_source").set_value("__folder__").run()
    at.text_input(key="real_model_folder_edit").set_value(PASTED).run()
    assert not at.exception
    assert at.error[0].value == t("real_model.err_long_name", lang)
    assert len(at.code[-1].value) < ECHO_CHARS + 200 and at.code[-1].value.startswith(PASTED[:ECHO_CHARS] + "…")


def another_models_tokenizer(vocab_size: int, extra: int = 10) -> str:
    """A tokenizer.json whose ids run `extra` past an embedding of vocab_size rows (the last two as added
    tokens, as a chat model's specials are)."""
    n = vocab_size + extra
    vocab = {f"t{i}": i for i in range(n - 2)}
    added = [{"id": i, "content": f"<|special{i}|>", "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for i in (n - 2, n - 1)]
    return json.dumps({"version": "1.0", "added_tokens": added, "model": {"type": "BPE", "vocab": vocab, "merges": []}})


@pytest.fixture
def mismatched(tmp_path, monkeypatch):
    monkeypatch.setenv("GDN_MODEL_DIRS", str(tmp_path))
    cfg = text_config()
    return write_checkpoint(tmp_path / "other-tokenizer", cfg, tokenizer_json=another_models_tokenizer(cfg["vocab_size"])), cfg


def test_a_tokenizer_of_another_model_is_listed_unusable_saying_both_sizes(mismatched):
    folder, cfg = mismatched
    rows, ids = cfg["vocab_size"], cfg["vocab_size"] + 10
    assert any(s.path == folder for s in scan_sources())                # a checkpoint, found...
    with pytest.raises(CheckpointError) as described:
        describe(folder)                                                 # ...and refused by what the picker asks
    with pytest.raises(CheckpointError) as loaded:
        load_model(folder)                                               # and loading, whatever was listed
    for refused in (described.value, loaded.value):
        assert refused.kind == "tokenizer_vocab", refused
        assert f"{ids:,} token ids" in str(refused) and f"only {rows:,} rows" in str(refused)
        assert "copy the checkpoint's own tokenizer.json" in str(refused)


def test_a_tokenizer_that_fits_is_still_usable(tmp_path):
    cfg = text_config()
    folder = write_checkpoint(tmp_path / "fits", cfg, tokenizer_json=another_models_tokenizer(cfg["vocab_size"], extra=0))
    assert describe(folder).config.vocab_size == cfg["vocab_size"]
    assert load_model(folder, allow_any_folder=True).tokenizer is not None


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_lists_it_with_its_reason_and_says_what_is_wrong_when_typed(lang, mismatched):
    folder, cfg = mismatched
    at = open_demo(lang)
    assert not at.exception and str(folder) not in at.selectbox(key="real_model_source").options
    reasons = " ".join(c.value for c in at.code)
    assert f"only {cfg['vocab_size']:,} rows" in reasons                # in the list of unusable folders
    at.selectbox(key="real_model_source").set_value("__folder__").run()
    at.text_input(key="real_model_folder_edit").set_value(str(folder)).run()
    assert not at.exception
    assert at.error[0].value == t("real_model.err_tokenizer_vocab", lang)
    assert f"{cfg['vocab_size'] + 10:,} token ids" in at.code[-1].value
