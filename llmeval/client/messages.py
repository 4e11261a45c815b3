"""What a chat message holds: its text (a string or text parts) and its reasoning (either
field name servers use), made safe to store."""

from __future__ import annotations

from typing import Any


class MalformedText(ValueError):
    """A message field that should hold text holds something else."""


def clean_text(text: str) -> str:
    """Text safe to store: valid surrogate pairs joined, lone surrogates replaced by U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def text_of(value: Any) -> str:
    """Message text: a string, or the text parts of a list of content parts."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(
            p["text"] for p in value if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    raise MalformedText(f"message text is a {type(value).__name__}")


def message_texts(message: dict[str, Any]) -> tuple[str, str]:
    """The content and the reasoning (either field name) of a message or a stream delta."""
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    return text_of(message.get("content")), text_of(reasoning)
