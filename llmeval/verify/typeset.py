"""Typesetting: the commands whose braces hold text and the spacing commands (one list each,
for every rule that reads or drops them), and an answer that is its gold as written: the same
text once typesetting that never changes the math is dropped. Decided before any parser, so
the verifier is reflexive by construction."""

from __future__ import annotations

import re

# Commands whose braces hold text, not math: `\text{ cm}`, `\mathrm{e}`, `\textbf{(C)}`
TEXT = r"\\(?:textbf|textit|textrm|text|mathrm|mathbf|mathit|mbox|operatorname|rm)"
TEXT_WRAPPER = re.compile(TEXT + r"\s*+\{([^{}]*+)\}")  # its content: `\text{(C)}` -> `(C)`
# Spacing commands (thin, medium, thick and negative spaces, `\ `, quads, `~`): never part of
# the math, in any rule (a `\\` ending a matrix row is no `\ `)
SPACING = r"(?<!\\)\\[,;:!> ]|\\(?:q?quad|enspace|thinspace|medspace|thickspace)(?![A-Za-z])|~"
# Typesetting that never changes the math: math delimiters, \left/\right, spacing, \displaystyle
_TYPESETTING = re.compile(
    rf"(?<!\\)(?:\$|\\[()\[\]])|\\(?:left|right|displaystyle)(?![A-Za-z])|{SPACING}"
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
