"""Text made safe to print: names a file or a server chose (a model id, a subject, a problem id,
a path) with their control, format and surrogate characters as spaces, so that ESC, BEL or a
newline cannot clear the screen, set the window title, draw a hyperlink or forge a line."""

from __future__ import annotations

import unicodedata
from typing import Any, TypeVar, cast

from llmeval.errors import redact

# control (ESC, BEL, newline), format (bidi overrides, zero-width), surrogates, and the line
# and paragraph separators some terminals and log viewers break lines at
_UNSAFE = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
T = TypeVar("T")


def printable(text: str) -> str:
    """`text` with every control, format and surrogate character as a space: every name that
    comes from a file or a server is printed through this."""
    if text.isprintable():  # (the common case; False also for harmless ones, checked below)
        return text
    return "".join(" " if unicodedata.category(c) in _UNSAFE else c for c in text)


def printable_line(text: str) -> str:
    """A whole line llmeval prints (a message, a log line, a progress line): its secrets
    hidden (`errors.redact`), then `printable`, so it stays one line."""
    return printable(redact(text))


def printable_copy(value: T) -> T:
    """A copy of a record (a score report) to print: every string in it, keys included,
    through `printable`; the record written to files keeps the names as they are."""
    return cast(T, _copy(value))


def _copy(value: Any) -> Any:
    if isinstance(value, str):
        return printable(value)
    names = getattr(type(value), "model_fields", None)  # a pydantic record
    if names is not None:
        return value.model_copy(update={name: _copy(getattr(value, name)) for name in names})
    if isinstance(value, dict):
        return {_copy(k): _copy(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_copy(v) for v in value)
    return value
