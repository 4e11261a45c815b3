"""Local inference servers for machines without a GPU: llama.cpp, SmolLM2, vLLM on CPU."""
