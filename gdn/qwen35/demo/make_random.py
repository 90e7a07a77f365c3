"""Generate the shipped demo checkpoint: random weights in the exact Qwen3.5 format, plus a small
bilingual byte-level BPE tokenizer. Deterministic: running it again gives identical files.

    python -m gdn.qwen35.demo.make_random            # writes assets/models/qwen35-demo-random/

The weights are RANDOM: the gates it shows have the right shapes and ranges but no learned meaning.
The app labels it that way; point the app at a real Qwen3.5 checkpoint for real gates.
"""
from __future__ import annotations

import sys
from pathlib import Path

from tokenizers import Tokenizer

from gdn.qwen35.demo.bpe import train_bpe, write_tokenizer_config
from gdn.qwen35.sources import DEMO_PATH
from gdn.qwen35.synth import text_config, write_checkpoint

CORPUS = """\
The memory of a linear attention layer is a small table: keys select rows, values are written into it.
The delta rule first asks the table what it remembers for a key, then writes only the error.
A gate alpha close to one keeps the memory; a gate close to zero forgets it quickly.
The write strength beta decides how much of the error is written for each token.
Gated DeltaNet combines the decay gate with the delta rule, so old facts can fade and new facts overwrite.
Qwen3.5 uses three Gated DeltaNet layers and then one full attention layer, again and again.
The chunked kernel gives the same answer as the recurrent loop, only faster.
Paris is the capital of France. Tokyo is the capital of Japan. Beijing is the capital of China.
The city moved its office: the new address replaces the old one in memory.
Numbers like 2024, 3.14 and 42 are split into single digits by the tokenizer.
线性注意力的记忆是一张小表：键选择行，值被写进去。
增量规则先问记忆表对这个键记得什么，然后只写入误差。
门控 alpha 接近一时保留记忆，接近零时很快遗忘。
写入强度 beta 决定每个词元写入多少误差。
门控增量网络把衰减门和增量规则结合起来，旧的事实会淡去，新的事实会覆盖。
千问 3.5 先用三层门控增量网络，再用一层完整注意力，如此重复。
分块算法和逐步递推给出相同的结果，只是更快。
巴黎是法国的首都。东京是日本的首都。北京是中国的首都。
这座城市搬了办公室：新的地址在记忆中替换了旧的地址。
老师在课堂上用这个页面讲解记忆表、遗忘和覆盖。
"""
TOKENIZER_VOCAB = 1024


def build_tokenizer() -> Tokenizer:
    return train_bpe(CORPUS.splitlines() * 4, TOKENIZER_VOCAB)


def demo_text_config(vocab_size: int) -> dict:
    """8 layers (6 GDN + 2 attention), HK = 2 key heads shared by HV = 4 value heads, d_k = d_v = 32."""
    return text_config(
        vocab_size=vocab_size, hidden_size=128, intermediate_size=256, num_hidden_layers=8,
        num_attention_heads=4, num_key_value_heads=2, head_dim=32,
        linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=32, linear_value_head_dim=32,
        tie_word_embeddings=True, eos_token_id=0)


def make_demo(folder: Path = DEMO_PATH) -> Path:
    tok = build_tokenizer()
    n = tok.get_vocab_size(with_added_tokens=True)
    vocab = -(-n // 64) * 64                                  # embedding rows padded, as in the releases
    write_checkpoint(folder, demo_text_config(vocab), seed=0, shards=2, tokenizer_json=tok.to_str(pretty=True))
    write_tokenizer_config(folder)
    (folder / "README.md").write_text(
        "# qwen35-demo-random\n\nRANDOM weights in the exact Qwen3.5 checkpoint format (config.json with\n"
        "text_config, two safetensors shards with the real tensor names, bf16 with float32 A_log and\n"
        "linear_attn.norm), and a small bilingual byte-level BPE tokenizer. The gates it shows have the\n"
        "right shapes and ranges but no learned meaning. Regenerate with `python -m gdn.qwen35.demo.make_random`.\n")
    return folder


if __name__ == "__main__":
    print(make_demo(Path(sys.argv[1]) if len(sys.argv) > 1 else DEMO_PATH))
