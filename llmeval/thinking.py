"""Where a model's reasoning ends: the one reading of `<think>` blocks, for eval (a sample's
answer part) and the LLM judge (the part of its reply that holds its verdict). The tags are
`<think>` and `<thinking>`, in any case."""

from __future__ import annotations

import re

OPEN = re.compile(r"<think(?:ing)?[ \t]*+>", re.IGNORECASE)
CLOSE = re.compile(r"</think(?:ing)?[ \t]*+>", re.IGNORECASE)
_OPEN_AT_END = re.compile(r"<think(?:ing)?[ \t]*+>\s*+\Z", re.IGNORECASE)


def split(
    text: str, reasoning: str | None = None, starts_in_think: bool = False
) -> tuple[str, bool]:
    """(what follows the reasoning, whether the text ends inside reasoning). Reasoning runs up
    to the last closing tag. After it, an opening tag never closed starts reasoning again, to
    the end: what follows the reasoning is what precedes that tag. Without a closing tag, the
    prompt's own opening tag (`starts_in_think`) makes the whole text reasoning. A separate
    `reasoning` (a server that sends it apart) means the text after any closing tag is all
    answer."""
    last = _last_close(text)
    if last is not None:
        text = text[last.end() :]
    if reasoning:
        return text, False
    if last is None and starts_in_think:
        return "", True
    opened = OPEN.search(text)
    return (text, False) if opened is None else (text[: opened.start()], True)


def _last_close(text: str) -> re.Match[str] | None:
    """The last closing tag, looked for from the end (where it is: the text is long)."""
    at = text.rfind("</")
    while at >= 0:
        found = CLOSE.match(text, at)
        if found is not None:
            return found
        at = text.rfind("</", 0, at)
    return None


def opens_reasoning(prompt: str) -> bool:
    """Whether a prompt ends by opening the reasoning (a chat template's `<think>`)."""
    return _OPEN_AT_END.search(prompt[-64:]) is not None
