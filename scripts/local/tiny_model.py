"""A tiny random-weight llama GGUF (≈500 KB, written in well under a second) for llama-server tests.

No model file ships in git: tests write this one into a temporary folder. Its text is random
characters, but the server path (chat template, sampling, seeds, streaming, usage) is real.
"""

from __future__ import annotations

from pathlib import Path

# ChatML, the template SmolLM2 and Qwen-style models use; its markers are plain characters here.
CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

N_BLOCKS = 2
N_EMBD = 64
N_HEADS = 4
N_FF = 128
N_CTX = 4096


def _vocab() -> tuple[list[str], list[int]]:
    """Tokens and types: <unk> <s> </s>, all 256 bytes, the space marker, printable ASCII.

    Every byte has a token: llama.cpp's byte fallback answers HTTP 400 for a character it
    cannot spell (a tab, an accent, a `≤` in a MATH-500 problem).
    """
    import gguf

    tt = gguf.TokenType
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    types = [tt.UNKNOWN, tt.CONTROL, tt.CONTROL] + [tt.BYTE] * 256
    tokens += ["\u2581"] + [chr(c) for c in range(33, 127)]
    types += [tt.NORMAL] * (len(tokens) - len(types))
    return tokens, [int(t) for t in types]


def write_tiny_model(path: str | Path, *, seed: int = 0) -> Path:
    """Write the tiny random llama model to `path` (deterministic for a given seed)."""
    import gguf
    import numpy as np

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    tokens, types = _vocab()
    n_vocab = len(tokens)

    def weight(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.1).astype(np.float32)

    def norm() -> np.ndarray:
        return np.ones(N_EMBD, dtype=np.float32)

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("llmeval-tiny-random")
    writer.add_context_length(N_CTX)
    writer.add_embedding_length(N_EMBD)
    writer.add_block_count(N_BLOCKS)
    writer.add_feed_forward_length(N_FF)
    writer.add_head_count(N_HEADS)
    writer.add_head_count_kv(N_HEADS)
    writer.add_rope_dimension_count(N_EMBD // N_HEADS)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores([0.0] * 259 + [-float(i) for i in range(n_vocab - 259)])
    writer.add_token_types(types)
    writer.add_unk_token_id(0)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(False)
    writer.add_chat_template(CHATML_TEMPLATE)

    # numpy shapes are (rows, cols) = GGUF's dimensions reversed.
    writer.add_tensor("token_embd.weight", weight(n_vocab, N_EMBD))
    for i in range(N_BLOCKS):
        blk = f"blk.{i}"
        writer.add_tensor(f"{blk}.attn_norm.weight", norm())
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            writer.add_tensor(f"{blk}.{name}.weight", weight(N_EMBD, N_EMBD))
        writer.add_tensor(f"{blk}.ffn_norm.weight", norm())
        writer.add_tensor(f"{blk}.ffn_gate.weight", weight(N_FF, N_EMBD))
        writer.add_tensor(f"{blk}.ffn_up.weight", weight(N_FF, N_EMBD))
        writer.add_tensor(f"{blk}.ffn_down.weight", weight(N_EMBD, N_FF))
    writer.add_tensor("output_norm.weight", norm())
    writer.add_tensor("output.weight", weight(n_vocab, N_EMBD))

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
