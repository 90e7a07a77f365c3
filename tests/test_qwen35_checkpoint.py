"""Every bad checkpoint of docs/architecture.md, Quality bars, gets a clear ValueError (built here, in tmp_path)."""
import json

import pytest
import torch
from safetensors.torch import load_file, save_file

from gdn.qwen35 import load_config, load_model, parse_config
from tests.qwen35_fixtures import rewrite, text_config, write_checkpoint

LAYER0 = "model.language_model.layers.0.linear_attn."


@pytest.fixture
def roots(tmp_path, monkeypatch):
    """Make tmp_path an allowed model root (as a user would with GDN_MODEL_DIRS)."""
    monkeypatch.setenv("GDN_MODEL_DIRS", str(tmp_path))
    return tmp_path




def test_good_checkpoint_loads_inside_allowed_roots(roots):
    model = load_model(write_checkpoint(roots / "ok"))
    assert model.trace([1, 2, 3]).logits.shape == (3, 512)


def test_folder_without_config(roots):
    (roots / "empty").mkdir()
    with pytest.raises(ValueError, match="no config.json in this folder"):
        load_model(roots / "empty")


def test_unsupported_model_type(roots):
    folder = write_checkpoint(roots / "llama")
    (folder / "config.json").write_text(json.dumps({"model_type": "llama", "hidden_size": 64}))
    with pytest.raises(ValueError, match="model_type 'llama' is not a Qwen3.5 checkpoint; supported types are "
                                         "qwen3_5, qwen3_5_text"):
        load_model(folder)


def test_config_that_is_not_json(roots):
    folder = write_checkpoint(roots / "badjson")
    (folder / "config.json").write_text("{oops")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_model(folder)


def test_missing_tensor(roots):
    folder = write_checkpoint(roots / "missing")
    rewrite(folder, lambda t: t.pop(LAYER0 + "A_log"))
    with pytest.raises(ValueError, match=r"missing tensor model\.language_model\.layers\.0\.linear_attn\.A_log"):
        load_model(folder)


def test_untied_config_without_lm_head(roots):
    folder = write_checkpoint(roots / "nohead", text_config(tie_word_embeddings=False))
    rewrite(folder, lambda t: t.pop("lm_head.weight"))
    with pytest.raises(ValueError, match="missing tensor lm_head.weight"):
        load_model(folder)


def test_misshaped_tensor(roots):
    folder = write_checkpoint(roots / "shape")
    rewrite(folder, lambda t: t.update({LAYER0 + "in_proj_qkv.weight": torch.zeros(100, 64, dtype=torch.bfloat16)}))
    with pytest.raises(ValueError, match=r"layers\.0\.linear_attn\.in_proj_qkv\.weight: expected shape \(128, 64\) "
                                         r"from config\.json, checkpoint has \(100, 64\)"):
        load_model(folder)


def test_corrupt_safetensors_header(roots):
    folder = write_checkpoint(roots / "corrupt", shards=2)
    shard = folder / "model-00002-of-00002.safetensors"
    shard.write_bytes(b"\x20\x00\x00\x00\x00\x00\x00\x00{this is not a header" + b"\x00" * 64)
    with pytest.raises(ValueError, match="model-00002-of-00002.safetensors: corrupt safetensors file"):
        load_model(folder)


def test_missing_shard(roots):
    folder = write_checkpoint(roots / "shard", shards=3)
    (folder / "model-00003-of-00003.safetensors").unlink()
    with pytest.raises(ValueError, match="model-00003-of-00003.safetensors: listed in model.safetensors.index.json "
                                         "but missing"):
        load_model(folder)


def shard_of(folder, name):
    return json.loads((folder / "model.safetensors.index.json").read_text())["weight_map"][name]


def test_index_that_maps_a_tensor_to_the_wrong_shard_is_refused_at_open(roots):
    """Before, headers were pooled over all shards, so this opened fine and failed mid-load."""
    folder = write_checkpoint(roots / "wrong_shard", shards=2)
    index = json.loads((folder / "model.safetensors.index.json").read_text())
    name = LAYER0 + "A_log"
    right = index["weight_map"][name]
    wrong = next(f for f in set(index["weight_map"].values()) if f != right)
    index["weight_map"][name] = wrong
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    with pytest.raises(ValueError, match=rf"{name}: model.safetensors.index.json maps it to {wrong}, but it is stored "
                                         rf"in {right}"):
        load_model(folder, lazy=True)


@pytest.mark.parametrize("with_index", [True, False], ids=["indexed", "no-index"])
def test_two_shards_holding_the_same_tensor_are_refused(roots, with_index):
    folder = write_checkpoint(roots / f"dup_{with_index}", shards=2)
    name = LAYER0 + "A_log"
    home = shard_of(folder, name)
    other = next(p for p in folder.glob("*.safetensors") if p.name != home)
    tensors = load_file(str(other))
    tensors[name] = load_file(str(folder / home))[name]
    save_file(tensors, str(other), metadata={"format": "pt"})
    if not with_index:
        (folder / "model.safetensors.index.json").unlink()
    first, second = sorted([home, other.name])
    with pytest.raises(ValueError, match=rf"{name}: stored in both {first} and {second}"):
        load_model(folder, lazy=True)


def test_modules_have_exactly_the_checkpoint_names_and_shapes():
    """The loader is a key-for-key copy: every module parameter is a checkpoint tensor of that shape."""
    from gdn.qwen35.checkpoint import model_shapes
    from gdn.qwen35.model import TextModel
    from gdn.qwen35.synth import config_json
    moe_config = text_config(num_experts=8, num_experts_per_tok=2, moe_intermediate_size=32,
                             shared_expert_intermediate_size=32, tie_word_embeddings=False)
    for text, moe in ((text_config(), False), (text_config(linear_num_value_heads=8), False), (moe_config, True)):
        cfg = parse_config(config_json(text, moe=moe))
        with torch.device("meta"):
            params = {n: tuple(p.shape) for n, p in TextModel(cfg).named_parameters()}
        assert params == {n: s for n, s in model_shapes(cfg).items() if n != "lm_head.weight"}


@pytest.mark.parametrize("escape", ["../outside.safetensors", "/etc/passwd"])
def test_index_cannot_point_outside_the_folder(roots, escape):
    folder = write_checkpoint(roots / "hostile", shards=2)
    index = json.loads((folder / "model.safetensors.index.json").read_text())
    first = next(iter(index["weight_map"]))
    index["weight_map"][first] = escape
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    with pytest.raises(ValueError, match=r"is not a \*\.safetensors file in this folder"):
        load_model(folder)


def test_unreadable_names_become_clear_errors(roots):
    from gdn.qwen35 import check_folder
    with pytest.raises(ValueError, match="cannot be opened"):
        check_folder(roots / ("x" * 300))                               # name too long for the filesystem


def test_truncated_tensor_data(roots):
    folder = write_checkpoint(roots / "truncated")
    path = folder / "model.safetensors"
    path.write_bytes(path.read_bytes()[:-1000])
    with pytest.raises(ValueError, match="corrupt safetensors file|could not be read"):
        load_model(folder)


@pytest.mark.parametrize("bad", [float("nan"), float("inf")], ids=["nan", "inf"])
def test_non_finite_weights(roots, bad):
    folder = write_checkpoint(roots / "nonfinite")

    def poison(t):
        t[LAYER0 + "out_proj.weight"][3, 5] = bad
    rewrite(folder, poison)
    with pytest.raises(ValueError, match=r"layers\.0\.linear_attn\.out_proj\.weight: contains NaN or Inf"):
        load_model(folder)


def test_folder_outside_allowed_roots(tmp_path, monkeypatch):
    monkeypatch.delenv("GDN_MODEL_DIRS", raising=False)
    folder = write_checkpoint(tmp_path / "elsewhere")
    with pytest.raises(ValueError, match="is outside the allowed model folders; .*GDN_MODEL_DIRS") as err:
        load_model(folder)
    assert "assets" not in str(err.value) and "huggingface" not in str(err.value)   # no server roots shown
    with pytest.raises(ValueError, match="outside the allowed") as err:
        load_model(folder / ".." / ".." / "..")
    assert str(folder / ".." / ".." / "..") in str(err.value)                         # named as typed, not resolved


def test_symlinks_cannot_lead_outside_the_roots(roots, tmp_path_factory):
    """A weight file or a folder linked from inside an allowed root to outside it is refused, and a
    linked folder is not listed (it would be refused when picked)."""
    from gdn.qwen35 import list_sources
    outside = write_checkpoint(tmp_path_factory.mktemp("outside") / "ckpt")
    folder = write_checkpoint(roots / "linked_file")
    (folder / "model.safetensors").unlink()
    (folder / "model.safetensors").symlink_to(outside / "model.safetensors")
    with pytest.raises(ValueError, match="model.safetensors links outside the allowed model folders"):
        load_model(folder)
    (roots / "linked_folder").symlink_to(outside, target_is_directory=True)
    with pytest.raises(ValueError, match="outside the allowed model folders"):
        load_model(roots / "linked_folder")
    assert not any(s.path.name in ("linked_file", "linked_folder", "ckpt") for s in list_sources())


def test_no_weights_at_all(roots):
    folder = roots / "noweights"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "qwen3_5_text", **text_config()}))
    (folder / "pytorch_model.bin").write_bytes(b"pickle would go here")
    with pytest.raises(ValueError, match="no \\*.safetensors file"):
        load_model(folder)


def test_config_parsing_variants(tmp_path):
    text = text_config(num_hidden_layers=8)
    del text["layer_types"]
    cfg = parse_config({"model_type": "qwen3_5", "text_config": text})
    assert cfg.layer_types[3] == cfg.layer_types[7] == "full_attention"
    assert cfg.n_layers_of("linear_attention") == 6
    assert cfg.rope_theta == 1e7 and cfg.rotary_dim == 8
    with pytest.raises(ValueError, match="must be a multiple of linear_num_key_heads"):
        parse_config({"model_type": "qwen3_5_text", **text_config(linear_num_value_heads=3)})
    with pytest.raises(ValueError, match="layer_types has 2 entries but num_hidden_layers is 4"):
        parse_config({"model_type": "qwen3_5_text", **text_config(layer_types=["linear_attention"] * 2)})
    with pytest.raises(ValueError, match="needs num_experts"):
        parse_config({"model_type": "qwen3_5_moe_text", **text_config()})
    assert load_config(write_checkpoint(tmp_path, text_config(), multimodal=False)).model_type == "qwen3_5_text"


def test_an_index_can_only_name_safetensors_shards(roots, tmp_path_factory):
    """check_folder looks for links out of the roots among *.safetensors files; a shard named "w0" that
    links outside would slip past it, so the index may name only *.safetensors files."""
    outside = write_checkpoint(tmp_path_factory.mktemp("outside") / "ckpt", shards=2)
    folder = write_checkpoint(roots / "sneaky", shards=2)
    index = json.loads((folder / "model.safetensors.index.json").read_text())
    first = sorted(set(index["weight_map"].values()))[0]
    (folder / "w0").symlink_to(outside / first)
    index["weight_map"] = {n: ("w0" if f == first else f) for n, f in index["weight_map"].items()}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    with pytest.raises(ValueError, match="'w0' is not a \\*\\.safetensors file"):
        load_model(folder)


def test_a_header_cannot_claim_more_bytes_than_its_file(roots):
    from gdn.qwen35.analysis import describe
    folder = write_checkpoint(roots / "liar")
    path = folder / "model.safetensors"
    raw = path.read_bytes()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + n])
    name = next(k for k in header if k.endswith("embed_tokens.weight"))
    header[name]["shape"] = [10 ** 200, 10 ** 200]
    new = json.dumps(header).encode()
    path.write_bytes(len(new).to_bytes(8, "little") + new + raw[8 + n:])
    with pytest.raises(ValueError, match="corrupt safetensors file .*byte range"):
        describe(folder)


@pytest.mark.parametrize("shape", [(), (1,), (1, 5), (37, 3), (1000, 8), (0, 4)])
def test_block_copy_equals_a_plain_cast(shape, monkeypatch):
    """The tensors of a file are copied out of the memory map by a few threads, big ones in row blocks,
    each block summed as the finiteness check: every result must be the plain cast, in memory of its own,
    whatever the shape and however the rows split, and a NaN or Inf in any block must fail its tensor's
    check and no other's."""
    from gdn.qwen35 import checkpoint as ck

    monkeypatch.setattr(ck, "COPY_BLOCK_BYTES", 64)                 # force many blocks on small tensors
    src = torch.randn(shape, dtype=torch.float32)
    other = torch.randn(7, 3)
    for dtype in (torch.float32, torch.bfloat16):
        (out, finite), (out2, finite2) = ck._copy_all([(src, dtype), (other, torch.float32)])
        assert out.dtype == dtype and out.shape == src.shape and torch.equal(out, src.to(dtype)) and finite is True
        assert torch.equal(out2, other) and finite2 is True
        assert out.data_ptr() != src.data_ptr() or src.numel() == 0
        with torch.inference_mode():                             # a trace loads its layers in inference mode
            assert torch.equal(ck._copy_all([(src, dtype)])[0][0], src.to(dtype))
    if src.numel():
        for bad in (float("nan"), float("inf")):
            damaged = src.clone()
            damaged.view(-1)[-1] = bad                            # in the last block
            (_, finite), (_, finite2) = ck._copy_all([(damaged, torch.bfloat16), (other, torch.float32)])
            assert finite is False and finite2 is True and not ck.is_finite(damaged)


def test_a_copy_that_fails_names_its_tensor_only():
    """A block whose copy raises (a read error inside the memory map) comes back as that tensor's
    exception, the others intact; load_many turns it into the 'could not be read' message."""
    from gdn.qwen35 import checkpoint as ck

    class Unreadable(torch.Tensor):
        def __getitem__(self, index):
            raise OSError("input/output error")

    good = torch.randn(6, 4)
    bad = torch.randn(6, 4).as_subclass(Unreadable)
    (out, ok), (_, failed) = ck._copy_all([(good, torch.float32), (bad, torch.float32)])
    assert ok is True and torch.equal(out, good)
    assert isinstance(failed, OSError) and "input/output" in str(failed)


def test_gdn_layers_and_defaults_come_from_the_config_itself():
    """gdn_layers: layer i is full attention iff (i + 1) % 4 == 0 in the default pattern; DEFAULTS are the
    dataclass's own defaults (one place to change a default)."""
    import dataclasses

    from gdn.qwen35.config import DEFAULTS, Qwen35Config, default_layer_types
    cfg = Qwen35Config(num_hidden_layers=10, layer_types=default_layer_types(10))
    assert cfg.gdn_layers == tuple(i for i in range(10) if (i + 1) % 4)
    defaults = {f.name: f.default for f in dataclasses.fields(Qwen35Config)}
    assert DEFAULTS and all(defaults[k] == v for k, v in DEFAULTS.items())
    assert "num_experts" not in DEFAULTS and "hidden_size" in DEFAULTS
