"""Real Qwen3.5 checkpoints: config, lazy safetensors access, the text decoder and its gate trace.

    from gdn.qwen35 import load_model, list_sources
    model = load_model(list_sources()[0].path)
    enc = model.tokenizer.encode("记忆会衰减 memory fades")
    trace = model.trace(enc.ids, kernel="chunk")
"""
from gdn.qwen35.config import Qwen35Config, load_config, parse_config
from gdn.qwen35.model import ModelCache, Qwen35ForCausalLM, load_model
from gdn.qwen35.sources import DEMO_PATH, Source, allowed_roots, check_folder, download, list_sources
from gdn.qwen35.tokenizer import Encoded, Qwen35Tokenizer, load_tokenizer
from gdn.qwen35.trace import LayerTrace, Trace, state_norm_scan

__all__ = ["DEMO_PATH", "Encoded", "LayerTrace", "ModelCache", "Qwen35Config", "Qwen35ForCausalLM",
           "Qwen35Tokenizer", "Source", "Trace", "allowed_roots", "check_folder", "download", "list_sources",
           "load_config", "load_model", "load_tokenizer", "parse_config", "state_norm_scan"]
