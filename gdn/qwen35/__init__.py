"""Real Qwen3.5 checkpoints: config, lazy safetensors access, the text decoder and its gate trace.

    config.py      the text decoder's configuration, parsed from config.json
    checkpoint.py  lazy, validated safetensors access (one file or sharded)
    snapshot.py    one read-only copy of each weights file per machine, mapped by every process
    filecaps.py    size caps on config.json, the index and tokenizer.json, checked before parsing
    errors.py      CheckpointError: every refused checkpoint, folder or download, with its kind
    sources.py     the allowed roots, finding checkpoints in them, hub downloads
    tokenizer.py   tokenizer.json through `tokenizers`, with display pieces
    layers.py      the decoder's building blocks in plain PyTorch
    model.py       the decoder and its trace (with gate interventions)
    interventions.py  the gate interventions (set_alpha / set_beta) checked and grouped by layer
    trace.py       what a trace records per GDN layer, and its state diagnostics
    predict.py     top-3 next-token guesses at every position, with or without an intervention
    analysis.py    what the real-model page asks of a checkpoint (describe, load stages)
    gates.py       the real-model page's math on the gates: half-lives, summaries, exports, the kernel check
    synth.py       random-weight checkpoints in the exact on-disk format
    demo/          the shipped demo models, their tasks, tokenizer, training and evidence

    from gdn.qwen35 import list_sources, load_model
    src = list_sources()[0]                       # the shipped demo first (src.random_weights is True)
    model = load_model(src.path)                  # or lazy=True: layers are read on first use
    enc = model.tokenizer.encode("记忆会衰减 memory fades", max_tokens=2048)
    enc.ids, enc.pieces, enc.truncated            # pieces merge byte tokens: never "\ufffd"
    trace = model.trace(enc.ids, kernel="chunk")  # or "recurrent"; upto_layer=i runs layers 0..i only
    lt = trace.layers[0]                          # kind, output [T, D], g / beta [T, HV] float32
    lt.state_norms[:, head]                       # ||S_t|| per token (computed on first access)
    lt.state_at(t, head)                          # [K, V] memory table of one head after token t
    more = model.trace(next_ids, cache=trace.cache)  # continues the same sequence
"""
from gdn.ops import state_norm_scan
from gdn.qwen35.config import Qwen35Config, load_config, parse_config
from gdn.qwen35.model import ModelCache, Qwen35ForCausalLM, load_model
from gdn.qwen35.sources import DEMO_PATH, Source, allowed_roots, check_folder, list_sources
from gdn.qwen35.tokenizer import Encoded, Qwen35Tokenizer, load_tokenizer
from gdn.qwen35.trace import LayerTrace, Trace

__all__ = ["DEMO_PATH", "Encoded", "LayerTrace", "ModelCache", "Qwen35Config", "Qwen35ForCausalLM",
           "Qwen35Tokenizer", "Source", "Trace", "allowed_roots", "check_folder", "list_sources",
           "load_config", "load_model", "load_tokenizer", "parse_config", "state_norm_scan"]
