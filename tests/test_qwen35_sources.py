"""Checkpoint sources (allowed roots, HF cache discovery, download helper), the tokenizer, the demo."""
import filecmp
import json
from pathlib import Path

import pytest
import torch

from gdn.qwen35 import DEMO_PATH, check_folder, list_sources, load_model, load_tokenizer
from gdn.qwen35.demo.make_random import make_demo
from gdn.qwen35.sources import download, plan_download
from tests.qwen35_fixtures import write_checkpoint


@pytest.fixture
def hf_cache(tmp_path, monkeypatch):
    """An empty HF hub cache in tmp_path; GDN_MODEL_DIRS unset."""
    cache = tmp_path / "hub"
    cache.mkdir()
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.delenv("GDN_MODEL_DIRS", raising=False)
    return cache


def test_trained_demo_first_then_the_random_one_labelled_random(hf_cache):
    from gdn.qwen35.sources import TRAINED_PATH
    sources = list_sources()
    assert sources[0].kind == "trained" and not sources[0].random_weights and sources[0].path == TRAINED_PATH
    assert sources[1].kind == "demo" and sources[1].random_weights and "random" in sources[1].label
    assert sources[1].path == DEMO_PATH


def test_hf_cache_snapshot_and_env_dirs_are_found(hf_cache, tmp_path, monkeypatch):
    snap = write_checkpoint(hf_cache / "models--Qwen--Qwen3.5-Tiny" / "snapshots" / "abc123def")
    other = hf_cache / "models--meta--Llama" / "snapshots" / "0000"
    other.mkdir(parents=True)
    (other / "config.json").write_text(json.dumps({"model_type": "llama"}))
    mine = tmp_path / "mine"
    write_checkpoint(mine / "tiny")
    monkeypatch.setenv("GDN_MODEL_DIRS", str(mine))
    by_kind = {s.kind: s for s in list_sources()}
    assert by_kind["hf-cache"].path == snap and by_kind["hf-cache"].label.startswith("Qwen/Qwen3.5-Tiny")
    assert by_kind["env"].path == mine / "tiny"
    assert not any("Llama" in s.label for s in list_sources())
    assert load_model(snap).trace([1, 2]).logits is not None          # the HF cache is an allowed root


def test_check_folder_refuses_escapes(hf_cache, tmp_path):
    assert check_folder(DEMO_PATH) == DEMO_PATH.resolve()
    with pytest.raises(ValueError, match="outside the allowed model folders"):
        check_folder(hf_cache / ".." )
    with pytest.raises(ValueError, match="outside the allowed model folders"):
        check_folder("/etc")


class FakeHub:
    """Stands in for huggingface_hub: serves one repo's files from a checkpoint written in tmp_path and
    records every file asked for (so a test can prove no weight was fetched before the checks)."""

    def __init__(self, cache, source, sizes=None):
        self.cache, self.source, self.fetched, self.revisions = cache, source, [], []
        self.sizes = sizes or {p.name: p.stat().st_size for p in source.iterdir()}

    def hf_hub_download(self, *, repo_id, filename, revision, cache_dir):
        assert Path(cache_dir).parent == self.cache      # a staging folder in the cache root, never the cache
        self.fetched.append(filename)
        self.revisions.append(revision)
        snapshot = Path(cache_dir) / f"models--{repo_id.replace('/', '--')}" / "snapshots" / "rev0"
        snapshot.mkdir(parents=True, exist_ok=True)
        (snapshot / filename).write_bytes((self.source / filename).read_bytes())
        return str(snapshot / filename)

    def HfApi(self):
        hub = self

        class Api:
            def model_info(self, repo_id, revision, files_metadata):
                assert files_metadata
                entry = lambda name, size: type("Sibling", (), {"rfilename": name, "size": size})()
                return type("Info", (), {"sha": "c0ffee", "siblings": [entry(n, s) for n, s in hub.sizes.items()] +
                                         [entry("pytorch_model.bin", 9), entry("sub/model.safetensors", 9)]})()
        return Api()


def test_downloads_are_off_unless_the_operator_allows_them(hf_cache, tmp_path, monkeypatch):
    hub = FakeHub(hf_cache, write_checkpoint(tmp_path / "src"))
    monkeypatch.delenv("GDN_ALLOW_DOWNLOADS", raising=False)
    with pytest.raises(ValueError, match="downloads are turned off.*GDN_ALLOW_DOWNLOADS=1"):
        plan_download("Qwen/Fake", hub=hub)
    assert hub.fetched == []


def test_download_checks_config_and_size_first_then_fetches_with_progress(hf_cache, tmp_path, monkeypatch):
    monkeypatch.setenv("GDN_ALLOW_DOWNLOADS", "1")
    source = write_checkpoint(tmp_path / "src", shards=2)
    hub = FakeHub(hf_cache, source)
    plan = plan_download("Qwen/Fake", hub=hub)
    assert hub.fetched == ["config.json"]                               # nothing but the config before the plan
    names = {n for n, _ in plan.files}
    assert "model.safetensors.index.json" in names and not any(n.endswith(".bin") or "/" in n for n in names)
    assert plan.total_bytes == sum(p.stat().st_size for p in source.iterdir() if p.name in names)
    seen = []
    folder = download(plan, hub=hub, progress=lambda done, total, name: seen.append((done, total)))
    assert plan.revision == "c0ffee" and set(hub.revisions[1:]) == {"c0ffee"}    # every fetch pinned to the checked commit
    assert seen[-1] == (plan.total_bytes, plan.total_bytes) and [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert load_model(folder).trace([1, 2]).logits is not None
    with pytest.raises(ValueError, match="not a Hugging Face repo id"):
        plan_download("../../etc/passwd", hub=hub)
    monkeypatch.setenv("GDN_MAX_DOWNLOAD_GB", "0.000001")               # 1 kB cap
    with pytest.raises(ValueError, match="more than this server downloads"):
        plan_download("Qwen/Fake", hub=hub)


def test_download_refuses_a_repo_that_is_not_qwen35_before_any_weight(hf_cache, tmp_path, monkeypatch):
    monkeypatch.setenv("GDN_ALLOW_DOWNLOADS", "1")
    source = write_checkpoint(tmp_path / "src")
    cfg = json.loads((source / "config.json").read_text())
    (source / "config.json").write_text(json.dumps({**cfg, "model_type": "llama"}))
    hub = FakeHub(hf_cache, source)
    with pytest.raises(ValueError, match="is not a Qwen3.5 checkpoint"):
        plan_download("Meta/Llama", hub=hub)
    assert hub.fetched == ["config.json"]


def test_demo_checkpoint_is_reproducible_and_small(tmp_path):
    fresh = make_demo(tmp_path / "demo")
    names = sorted(p.name for p in DEMO_PATH.iterdir())
    assert sorted(p.name for p in fresh.iterdir()) == names
    match, mismatch, errors = filecmp.cmpfiles(DEMO_PATH, fresh, names, shallow=False)
    assert not mismatch and not errors, f"regenerate the demo: python -m gdn.qwen35.demo.make_random ({mismatch})"
    assert sum(p.stat().st_size for p in DEMO_PATH.iterdir()) < 5_000_000
    cfg = json.loads((DEMO_PATH / "config.json").read_text())
    assert cfg["model_type"] == "qwen3_5" and cfg["text_config"]["model_type"] == "qwen3_5_text"
    assert (DEMO_PATH / "model.safetensors.index.json").is_file()


def test_demo_model_traces_a_bilingual_prompt():
    model = load_model(DEMO_PATH)
    assert model.dtype == torch.float32 and model.cfg.linear_num_value_heads > model.cfg.linear_num_key_heads
    enc = model.tokenizer.encode("记忆会衰减，memory fades.")
    trace = model.trace(enc.ids)
    assert trace.logits.shape == (len(enc.ids), model.cfg.vocab_size)
    lt = trace.layers[0]
    assert lt.g.shape == lt.beta.shape == lt.state_norms.shape == (len(enc.ids), 4)


@pytest.mark.parametrize("text", ["记忆会衰减，龍龘 memory fades.", "naïve café 🙂 2024", "巴黎是法国的首都。"])
def test_display_pieces_never_show_replacement_chars(text):
    tok = load_tokenizer(DEMO_PATH)
    enc = tok.encode(text)
    assert "".join(enc.pieces) == text
    assert all("\ufffd" not in p for p in enc.pieces)
    assert len(enc.pieces) == len(enc.group) == len(enc.ids)
    assert all(enc.pieces[g] for g in enc.group)          # every token points at a non-empty piece
    assert tok.decode(enc.ids) == text


def test_token_limit_truncates_and_reports():
    tok = load_tokenizer(DEMO_PATH)
    enc = tok.encode("记忆 memory " * 200, max_tokens=50)
    assert len(enc.ids) == 50 and enc.truncated and enc.n_total > 50
    assert not tok.encode("hi", max_tokens=50).truncated
    with pytest.raises(ValueError, match="no tokenizer.json"):
        load_tokenizer(DEMO_PATH.parent)
