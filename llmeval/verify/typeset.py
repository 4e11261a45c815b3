"""Typesetting: the commands whose braces hold text (one list, for every rule that reads or
drops such a wrapper), and an answer that is its gold as written: the same text once
typesetting that never changes the math is dropped. Decided before any parser, so the
verifier is reflexive by construction."""

from __future__ import annotations

import re

# Commands whose braces hold text, not math: `\text{ cm}`, `\mathrm{e}`, `\textbf{(C)}`
TEXT = r"\\(?:textbf|textit|textrm|text|mathrm|mathbf|mathit|mbox|operatorname|rm)"
TEXT_WRAPPER = re.compile(TEXT + r"\s*+\{([^{}]*+)\}")  # its content: `\text{(C)}` -> `(C)`
# Typesetting that never changes the math: math delimiters, \left/\right, spacing, \displaystyle
_TYPESETTING = re.compile(
    r"(?<!\\)(?:\$|\\[()\[\]])|\\(?:left|right|displaystyle|q?quad)(?![A-Za-z])|\\[,;:! ]"
)
_GAP = re.compile(r"\s++")


def same_text(gold: str, answer: str) -> bool:
    """Whether an answer is its gold as written: equal after dropping math delimiters, spacing
    commands, `\\left`/`\\right` and whitespace (a space between two letters or two digits
    stays: `4 2` is not `42`), `\\dfrac`/`\\tfrac` read as `\\frac`. Decided first: correct
    under both policies, whatever the parsers make of it."""
    return _typeset(gold) == _typeset(answer)


def _typeset(text: str) -> str:
    text = _TYPESETTING.sub(" ", text).replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    return _GAP.sub(_gap, text.strip())


def _gap(match: re.Match[str]) -> str:
    text, start, end = match.string, match.start(), match.end()
    pair = text[start - 1] + text[end]  # (never at an end: the text is stripped)
    return " " if pair.isdigit() or pair.isalpha() else ""
