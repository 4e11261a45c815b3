"""llmeval: resumable evaluation of reasoning models on JSONL files (infer, then eval)."""

__version__ = "0.1.0"
