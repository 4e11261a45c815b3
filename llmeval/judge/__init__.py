"""The opt-in LLM judge: asked only where the rules said `incorrect`, from its own prompt."""
