"""Model answers (HOSTILE text: the content of the final `\\boxed{}`) -> LaTeX for math_verify.parse.

Only string rewriting. Every regex here is linear on any input: no nested or adjacent
unbounded quantifiers that can backtrack (adjacent optional runs use possessive `*+`), and
the rules that look at the end of the answer look only at its last `_TAIL` characters.
The result goes to `math_verify.parse` and nowhere else (never sympify/parse_expr/eval).

The gold (trusted) steers a few rules: the letters it uses as variables are never stripped
as units or ordinal suffixes, and an `e` it uses keeps `2e-3` from being read as e-notation.
"""

from __future__ import annotations

import re

from llmeval.verify.gold import (
    DOLLAR,
    PROSE,
    brace_trailing_letters,
    e_notation,
    half_open,
    normalize_gold,
    shared_spelling,
    strip_unit_words,
)
from llmeval.verify.typeset import TEXT, TEXT_WRAPPER

_TAIL = 400  # trailing units / mod clauses are looked for in this many last characters

# Unicode: one str.translate (C speed, no per-match callback). Superscript runs become
# `^{...}`: each character maps to \x00 c \x01, then adjacent markers merge.
_SUPERSCRIPT_CHARS = "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿⁱ"
_UNICODE = {
    "−": "-",
    "–": "-",
    "×": "\\times ",
    "·": "\\cdot ",
    "⋅": "\\cdot ",
    "÷": "\\div ",
    "π": "\\pi ",
    "∞": "\\infty ",
    "≤": "\\le ",
    "≥": "\\ge ",
    "≠": "\\ne ",
    "°": "^{\\circ}",
    "\u00a0": " ",
    "€": "",
    "£": "",
    "¥": "",
}
_TRANSLATE = str.maketrans(
    {
        "\x00": "",
        "\x01": "",
        **_UNICODE,
        **{
            ch: "\x00" + plain + "\x01"
            for ch, plain in zip(_SUPERSCRIPT_CHARS, "0123456789+-=()ni", strict=True)
        },
    }
)


def _unicode(text: str) -> str:
    text = text.translate(_TRANSLATE)
    if "\x00" in text:
        text = text.replace("\x01\x00", "").replace("\x00", "^{").replace("\x01", "}")
    return text


_SQRT = re.compile(r"√(\d++|[A-Za-z])")

_ORDINAL = re.compile(
    rf"(?<![\w.])(\d++)(?:\s*+\^\s*+(?:\{{\s*+)?(?:{TEXT}\s*+\{{\s*+)?"
    r"(st|nd|rd|th)\s*+\}?\s*+\}?|(st|nd|rd|th)(?![A-Za-z]))"
)
_PERCENT = re.compile(r"(?<!\\)%")
_PERCENT_WORD = re.compile(rf"{TEXT}\s*+\{{\s*+(?:percent|\\?%)\s*+\}}|\bpercent\b")
_UNIT_TEXT = re.compile(
    rf"{TEXT}\s*+\{{([^{{}}]{{0,80}})\}}"
    r"(?:\s*+\^\s*+(?:\{\s*+-?\d\s*+\}|\d))?\s*+$"
)
_UNIT_WORDS = re.compile(r"[A-Za-z][A-Za-z .\-/]*+(?:\^\s*+\{?\d\}?)?")
_SPACES = re.compile(r"(?:\s|\\[,;: ])*+$")  # spacing ending the text (`15,000 \,`)
_COMMANDS = re.compile(r"\\[A-Za-z]++")
# A congruence's modulus: `\pmod{17}`, `\bmod`, `\mod`, `\pod`, `(mod 17)`, `(\text{mod } 17)`
_MOD = re.compile(rf"\\[pb]?mod|\\pod|\(\s*+(?:{TEXT}\s*+\{{\s*+)?mod|{TEXT}\s*+\{{\s*+mod")

_ORDINAL_SUFFIX = {1: "st", 2: "nd", 3: "rd"}


def gold_letters(gold: str) -> frozenset[str]:
    """Letters the gold uses as variables (outside commands and \\text{} words)."""
    bare = TEXT_WRAPPER.sub(" ", gold)
    bare = _COMMANDS.sub(" ", bare)
    return frozenset(ch for ch in bare if ch.isascii() and ch.isalpha())


def _ordinal_ok(number: str, suffix: str) -> bool:
    value = int(number[-2:]) if len(number) >= 2 else int(number)
    if 11 <= value % 100 <= 13:
        return suffix == "th"
    return suffix == _ORDINAL_SUFFIX.get(value % 10, "th")


def _strip_ordinals(text: str, letters: frozenset[str]) -> str:
    def repl(match: re.Match[str]) -> str:
        number, suffix = match.group(1), match.group(2) or match.group(3)
        if set(suffix) & letters or not _ordinal_ok(number, suffix):
            return match.group(0)
        return number

    return _ORDINAL.sub(repl, text)


def _strip_units(text: str) -> str:
    """Drop trailing `\\text{unit words}` after a number or a closing group (up to 3)."""
    for _ in range(3):
        head, tail = text[:-_TAIL], text[-_TAIL:]
        match = _UNIT_TEXT.search(tail)
        if match is None:
            break
        before = head + tail[: match.start()]
        before = before[: _SPACES.search(before, max(0, len(before) - _TAIL)).start()]  # type: ignore[union-attr]
        words = match.group(1).strip()
        if not before or not (before[-1].isdigit() or before[-1] in "}).%"):
            break
        if not words or not _UNIT_WORDS.fullmatch(words):
            break
        text = before
    return text


def _strip_mod(text: str, gold: str) -> str:
    """`n \\equiv 5 \\pmod{17}` -> `5` (the residue), when the gold has no congruence."""
    if "\\equiv" in gold or "mod" in gold:
        return text
    at = text.rfind("\\equiv")
    if at < 0:
        return text
    tail = text[at + len("\\equiv") :]
    cut = _MOD.search(tail)
    if cut is None:
        return text
    residue = tail[: cut.start()].strip()
    if residue.endswith("\\"):  # a `\ ` spacing before `(\text{mod}`
        residue = residue[:-1].rstrip()
    return residue or text


def normalize_answer(answer: str, gold: str) -> str:
    """The answer rewritten for math_verify.parse (docs/verifier.md's "Answer forms"); linear time."""
    gold_latex = normalize_gold(gold) or ""
    letters = gold_letters(gold_latex)
    text = answer
    # Each rule runs only when its trigger is present (a C-speed substring test), so a
    # 1 MB answer costs a handful of regex passes, each linear.
    if not text.isascii():
        text = _unicode(text)
        text = _SQRT.sub(r"\\sqrt{\1}", text)
    if "$" in text:
        text = PROSE.sub("", text)
        text = text.replace("\\$", "")
        text = DOLLAR.sub(" ", text)
    if ("e" in text or "E" in text) and not ({"e", "E"} & letters):
        text = e_notation(text)
    text = shared_spelling(text)
    if "\\equiv" in text:
        text = _strip_mod(text, gold)
    if "percent" in text or "%" in text:
        text = _PERCENT_WORD.sub("\\%", text)
        text = _PERCENT.sub(r"\\%", text)
    if any(suffix in text for suffix in ("st", "nd", "rd", "th")):
        text = _strip_ordinals(text, letters)
    text = strip_unit_words(_strip_units(text), letters)
    return brace_trailing_letters(half_open(text.strip()), letters)
