"""Write a tiny random-weight Llama with a locally trained byte-level BPE tokenizer (vLLM tests).

Standalone: runs in the vLLM venv (torch, transformers, tokenizers), never imports llmeval.
Usage: python random_hf_llama.py OUT_DIR CORPUS_FILE...
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

CHATML = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def corpus(files: list[str]) -> list[str]:
    """Problem texts of JSONL files (or plain lines), for training the tokenizer."""
    texts = []
    for name in files:
        for line in Path(name).read_text().splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                texts.append(line)
                continue
            texts += [str(row.get(k, "")) for k in ("problem", "answer", "solution")]
    return texts


def write(out_dir: Path, texts: list[str], vocab_size: int = 1024) -> None:
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(texts, trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<|endoftext|>", eos_token="<|im_end|>",
        pad_token="<|endoftext|>", unk_token=None,
    )  # fmt: skip
    fast.chat_template = CHATML
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(fast), hidden_size=128, intermediate_size=256, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=2, head_dim=64, max_position_embeddings=4096,
        bos_token_id=fast.bos_token_id, eos_token_id=fast.eos_token_id, tie_word_embeddings=False,
    )  # fmt: skip
    model = LlamaForCausalLM(config).to(torch.bfloat16)
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir, safe_serialization=True)
    fast.save_pretrained(out_dir)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    write(Path(sys.argv[1]), corpus(sys.argv[2:]))
