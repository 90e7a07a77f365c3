"""Fuzz: hostile links on every page and crafted checkpoint folders end in a message, never an exception.

Links: each page opened with random values (inf, 1e400, 5000 digits, words, negative numbers...) for the
keys it reads from the URL. Checkpoints: a small good checkpoint with one field of its config, index,
safetensors header or tokenizer replaced by a hostile value; describe, load_model and a trace must either
work or raise ValueError (what the page turns into a translated message).
"""
import json
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gdn.qwen35 import load_model
from gdn.qwen35.analysis import describe
from tests.apptest import open_app
from tests.qwen35_fixtures import text_config, write_checkpoint

HOSTILE = ["inf", "-inf", "1e400", "nan", "9" * 5000, "-1", "0", "abc", "", " ", "0.5", "99999", "true",
           "%00", "../../etc/passwd", "<script>", "1,2", "𝟘"]
PAGE_KEYS = {
    "app_pages/start.py": ["start_T", "start_seed", "start_shapes", "start_layer", "start_head", "start_t"],
    "app_pages/memory_table.py": ["memory_preset", "memory_seed", "memory_dk", "memory_dv", "memory_T", "memory_t",
                                  "memory_stage"],
    "app_pages/playground.py": ["playground_panel", "playground_cap_seed", "playground_cap_N", "playground_cap_dk",
                                "playground_cap_dv", "playground_overwrite_alpha", "playground_knorm_beta",
                                "playground_knorm_negative", "playground_geometry", "playground_cap_geometry"],
    "app_pages/compare.py": ["compare_variant", "compare_preset", "compare_t", "compare_stage", "compare_bug_dk",
                             "compare_bug_dv", "compare_stream_start", "compare_stream_cut"],
    "app_pages/chunking.py": ["chunking_seed", "chunking_T", "chunking_C", "chunking_d", "chunking_t", "chunking_chunk"],
    "app_pages/cost.py": ["cost_model", "cost_dtype", "cost_batch", "cost_interval", "cost_T"],
    "app_pages/real_model.py": ["real_model_preset", "real_model_layer", "real_model_head", "real_model_view",
                                "real_model_max_tokens", "real_model_t"],
    "app_pages/classroom.py": ["mode", "classroom_pick_crossover"],
    "app_pages/recall.py": ["recall_layer", "recall_beta", "recall_size"],
}
FUZZ = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("page", list(PAGE_KEYS))
def test_hostile_links_never_raise(page):
    @FUZZ
    @given(params=st.dictionaries(st.sampled_from(PAGE_KEYS[page]), st.sampled_from(HOSTILE), min_size=1, max_size=4),
           lang=st.sampled_from(["zh", "en", *HOSTILE]))
    def run(params, lang):
        at = open_app(lang, page=page, **params)
        assert not at.exception, (params, [e.value for e in at.exception])
    run()


# ---- crafted checkpoints -----------------------------------------------------------------------

CONFIG_FIELDS = ["num_hidden_layers", "vocab_size", "hidden_size", "rms_norm_eps", "layer_types",
                 "full_attention_interval", "rope_parameters", "tie_word_embeddings", "linear_num_key_heads",
                 "linear_num_value_heads", "head_dim", "partial_rotary_factor", "eos_token_id", "linear_conv_kernel_dim",
                 "num_attention_heads", "intermediate_size"]
CONFIG_VALUES = [None, "x", -1, 0, 1, 3, 10 ** 12, 10 ** 400, 1e400, float("nan"), [], {}, True, [1, 2], ["full_attention"] * 4,
                 {"rope_type": "yarn"}, {"rope_theta": "x"}, 2.5]


def write_header(path, header) -> None:
    """A safetensors file whose JSON header is `header` (anything JSON), with 64 bytes of data."""
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + bytes(64))


def mutate(folder, where: str, key, value) -> None:
    if where == "config":
        cfg = json.loads((folder / "config.json").read_text())
        if key is None:
            cfg["text_config"] = value
        else:
            cfg["text_config"][key] = value
        (folder / "config.json").write_text(json.dumps(cfg))
    elif where == "index":
        (folder / "model.safetensors.index.json").write_text(json.dumps({"weight_map": value}) if key else str(value))
    elif where == "header":
        shard = sorted(folder.glob("*.safetensors"))[0]
        write_header(shard, value)
    elif where == "tokenizer":
        tok = {"version": "1.0", "model": {"type": "BPE", "vocab": {"a": value if isinstance(value, int) else 0},
                                           "merges": []}}
        (folder / "tokenizer.json").write_text(json.dumps(tok) if key else str(value))


HEADER_VALUES = [[], "x", 5, {"model.language_model.embed_tokens.weight": "x"},
                 {"model.language_model.embed_tokens.weight": {"dtype": "I8", "shape": [4], "data_offsets": [0, 4]}},
                 {"model.language_model.embed_tokens.weight": {"dtype": "BF16", "shape": "abc", "data_offsets": [0, 4]}},
                 {"model.language_model.embed_tokens.weight": {"dtype": "F64", "shape": [-3], "data_offsets": [0, 8]}},
                 {"model.language_model.embed_tokens.weight": {"dtype": "BF16", "shape": [512, 64],
                                                               "data_offsets": [0, 10 ** 9]}},
                 {"__metadata__": "x"},
                 {"model.language_model.embed_tokens.weight": {"dtype": "BF16", "shape": [10 ** 200, 10 ** 200],
                                                               "data_offsets": [0, 64]}}]
mutation = st.one_of(
    st.tuples(st.just("config"), st.sampled_from(CONFIG_FIELDS + [None]), st.sampled_from(CONFIG_VALUES)),
    st.tuples(st.just("index"), st.booleans(), st.sampled_from([[], "x", {}, {"a": 5}, None, {"a": "../x"}, 7])),
    st.tuples(st.just("header"), st.none(), st.sampled_from(HEADER_VALUES)),
    st.tuples(st.just("tokenizer"), st.booleans(), st.sampled_from([10 ** 9, -1, "x", 3])),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(change=mutation)
def test_crafted_checkpoints_raise_only_value_errors(change, tmp_path_factory):
    folder = write_checkpoint(tmp_path_factory.mktemp("ckpt"), text_config(), shards=2,
                              tokenizer_json=json.dumps({"version": "1.0", "model": {"type": "BPE", "vocab": {"a": 0},
                                                                                      "merges": []}}))
    mutate(folder, *change)
    for step in (lambda: describe(folder), lambda: load_model(folder, allow_any_folder=True).trace([0, 0, 0])):
        try:
            step()
        except ValueError:
            pass
