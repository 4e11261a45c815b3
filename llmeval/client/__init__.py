"""The chat client: the only home of httpx."""
