"""Gold answers (TRUSTED text from the benchmark files) -> the LaTeX handed to math_verify.parse.

`normalize_gold(gold)` returns the gold inside one `$...$` math span (a bare string falls to
math-verify's plain-expression parser: `4x+5` -> 4), or None for an empty gold. docs/verifier.md's
tables "Gold forms" and "Spellings normalised on both sides" hold an example of each rewrite,
in the order they run; `tests/test_verdict_semantics.py` checks every row.
"""

from __future__ import annotations

import re

from llmeval.verify.typeset import SPACING, TEXT, same_text

PROSE = re.compile(r"(?<!\\)\$\s*+,?\s*+(?:where|for|with)\b.*$", re.S)
DOLLAR = re.compile(r"(?<!\\)\$")
_E_NOTATION = re.compile(r"(?<![\w.\\])(\d++\.\d*+|\.\d++|\d++)[eE]([+-]?\d{1,4})(?![\w^{]|\.\d)")
# Bare unit words ending the text after a number or a group: `125 miles`, `10weeks`, `10 cm^2`
_UNIT_WORDS = re.compile(
    r"(?<=[\d}])\s*+((?:[A-Za-z]++(?:\s*+\^\s*+(?:\{\s*+-?\d{1,2}\s*+\}|-?\d))?+\s*+)++)$"
)
_WORD = re.compile(r"[A-Za-z]+")
# Short units (longer words are units anyway; a lone letter is one only beside another unit)
_UNIT_NAMES = "cm mm km kg mg ml mL ft yd mi hr hrs yr yrs lb lbs oz mph kcal cal sec min day"
UNITS = frozenset((_UNIT_NAMES + " eV keV MeV GeV Hz kHz MHz GHz kJ kW MW mol Pa kPa atm").split())
_LOST_ROW = re.compile(r"(?<!\\)\\(?=[-+\d.])")
# `t(0,4]`: a letter before a half-open interval (never a function call: mismatched brackets)
HALF_OPEN = re.compile(r"^\s*+([A-Za-z])\s*+([(\[][^()\[\],]*+,[^()\[\]]*+[)\]])\s*+$")

# Spellings fixed the same way on BOTH sides (answer.py uses `shared_spelling` too).
# Linear-time: possessive runs only, no nested quantifiers.
_DIGIT_GROUP = re.compile(r"(?<=\d),\\!\s*+(?=\d{3}(?!\d))")
_FLOAT_DIV = re.compile(r"(?<![\w.])(\d++)\.(?=\s*+/)")
_NUMPY = re.compile(r"\bnp\.(arcsin|arccos|arctan|sin|cos|tan|exp|log|sqrt|pi)\b")
_E_SUBSCRIPT = re.compile(r"(?<![\\\w])(?<!\\mathcal\{)([Ee])(?=\s*+_)")
_SUB_TEXT = re.compile(rf"_\s*+\{{\s*+{TEXT}\s*+\{{\s*+([A-Za-z0-9]{{1,20}})\s*+\}}\s*+\}}")
_SUB_COMMAND = re.compile(r"_\s*+(?:\{\s*+\\([A-Za-z]{1,20})\s*+\}|\\([A-Za-z]{1,20})(?![A-Za-z]))")
# math-verify drops primes (`f'(x)` reads as f(x), `y'` as y): a prime is part of the name
_PRIME = re.compile(r"(?<![\\A-Za-z])([A-Za-z])('{1,3})(?![_'])")
_APPROX = re.compile(r"^\s*+\\(?:approx|sim|simeq)(?![A-Za-z])\s*+")
# `19, 46, and 82`, `7, -2 \text{ and } -5`: "and" before a list's last item is a comma
_AND = re.compile(
    rf"(?:[ \t]?,)?[ \t]?(?:{TEXT}\s*+\{{\s*+and\s*+\}}|(?<![\\A-Za-z])and(?![A-Za-z]))[ \t]*+"
)
_TRIG = re.compile(r"\\(?:sin|cos|tan|cot|sec|csc)(?![A-Za-z])")
_DEGREES = re.compile(
    r"(?<![\d.])(\d++(?:\.\d++)?)\s*+\^\s*+(?:\{\s*+\\circ\s*+\}|\\circ(?![A-Za-z]))"
)
# `\gamma-1` would be the gamma function of -1 (zoo): a lone \gamma is a symbol
_GAMMA = re.compile(r"\\gamma(?![A-Za-z])(?!\s*+(?:\(|\\left))")
# `5i`: math-verify reads its symbols as complex only where an `i` stands alone
_DIGIT_I = re.compile(r"(?<=\d)i(?![A-Za-z])")
_EULER = re.compile(rf"{TEXT}\s*+\{{\s*+e\s*+\}}")
# `1 000`, `1\,000`, `1~000`: digit groups of three after a space-like separator
_SPACE_GROUP = re.compile(r"(?<![\d.,])(\d{1,3})((?:(?: |\\[,; ]|~|\u2009|\u202f)\d{3}(?!\d))++)")
_MIXED = re.compile(r"(?<![\d.}^_])(\d{1,9})[ \t]++(\d{1,9})[ \t]*+/[ \t]*+(\d{1,9})(?![\d.])")
# `, \quad \text{for } \omega^2 \neq 4`: a condition after the answer
_CONDITION = re.compile(rf"{TEXT}\s*+\{{\s*+(?:for|if|when|where|provided|unless)\b")
_SEPARATORS = (",", " ", "~", "\\quad", "\\qquad", "\\,", "\\;", "\\:", "\\ ")
_SPACING = re.compile(SPACING)
# A period ending the text is punctuation (`4.`); an ellipsis (`1, 2, \ldots` or `...`) is not
_FINAL_PERIOD = re.compile(r"(?<!\.)\.\s*+$")


def shared_spelling(text: str) -> str:
    """Spelling fixes applied identically to golds and answers (docs/verifier.md's table)."""
    if "\\!" in text:
        text = _DIGIT_GROUP.sub(",", text)
        text = text.replace("\\!", "")
    if "/" in text:
        text = _FLOAT_DIV.sub(lambda m: m.group(1), text)
    if "np." in text:
        text = _NUMPY.sub(lambda m: "\\pi" if m.group(1) == "pi" else "\\" + m.group(1), text)
    if "_" in text:
        # callbacks, not `\\1` templates: cheaper per match on hostile inputs
        text = _E_SUBSCRIPT.sub(lambda m: "\\mathcal{" + m.group(1) + "}", text)
        text = _SUB_TEXT.sub(lambda m: "_{" + m.group(1) + "}", text)
        text = _SUB_COMMAND.sub(lambda m: "_{" + (m.group(1) or m.group(2)) + "}", text)
    if "'" in text:
        text = _PRIME.sub(lambda m: m.group(1) + "_{" + "prime" * len(m.group(2)) + "}", text)
    if "\\" in text:
        text = _APPROX.sub("", text)
        text = text.replace("\\degree", "^{\\circ}")
        if "circ" in text and _TRIG.search(text):
            text = _DEGREES.sub(lambda m: f"\\frac{{{m.group(1)}\\pi}}{{180}}", text)
    if "and" in text:
        text = _AND.sub(", ", text)
    if "e" in text and "\\" in text:
        text = _EULER.sub("e", text)
    if "\\" in text and "{" in text:
        text = _drop_condition(text)
    if any(sep in text for sep in (" ", "\\", "~", "\u2009", "\u202f")):
        text = _SPACE_GROUP.sub(lambda m: m.group(1) + re.sub(r"\D", "", m.group(2)), text)
    if "\\" in text or "~" in text:  # after digit groups (`10\,000`): any other is a space
        text = _SPACING.sub(" ", text)
    if text.endswith((".", ". ")):
        text = _FINAL_PERIOD.sub("", text)
    if "/" in text:
        text = _MIXED.sub(_mixed, text)
    if "\\gamma" in text:
        text = _GAMMA.sub(lambda _: "{\\gamma}", text)
    if "i" not in text:
        return text
    return _DIGIT_I.sub(" i", text)


def e_notation(text: str) -> str:
    """`2.45e-6` -> `2.45 \\times 10^{-6}` (both sides; answers only when the gold has no e)."""
    return _E_NOTATION.sub(
        lambda m: f"{m.group(1).rstrip('.')} \\times 10^{{{int(m.group(2))}}}", text
    )


def _mixed(match: re.Match[str]) -> str:
    """`1 1/2` -> `\\frac{3}{2}` (a proper fraction after a whole number); else unchanged."""
    whole, num, den = (int(group) for group in match.groups())
    if not 0 < num < den:
        return match.group(0)
    return f"\\frac{{{whole * den + num}}}{{{den}}}"


def _drop_condition(text: str) -> str:
    """The answer without a trailing `\\text{for ...}` condition set off by a comma or a
    `\\quad` (not a `cases` branch's `x & \\text{if } x > 0`), and the separators before it."""
    match = _CONDITION.search(text)
    if match is None or "\\begin" in text:
        return text
    end, moved, set_off = match.start(), True, False
    while moved:  # an index walk, not repeated slicing: linear on a long run of separators
        moved = False
        for sep in _SEPARATORS:
            if end >= len(sep) and text.startswith(sep, end - len(sep)):
                end, moved, set_off = end - len(sep), True, set_off or sep != " "
    return text[:end] if set_off and text[:end].strip() else text


def _boxed(text: str) -> str:
    """The contents of the text's `\\boxed{}`s joined by commas (a box left open: the rest of
    the text), each value once (a solution boxing its answer again is one answer); the text
    itself when it has none."""
    found: list[str] = []
    at = text.find("\\boxed{")
    while at >= 0:
        depth, start = 0, at + len("\\boxed")
        for end in range(start, len(text)):
            depth += (text[end] == "{") - (text[end] == "}")
            if depth == 0:
                break
        box = text[start + 1 : end + (depth != 0)]
        if not any(_same_value(box, kept) for kept in found):
            found.append(box)
        at = text.find("\\boxed{", end)
    return ", ".join(found) or text


def _same_value(box: str, kept: str) -> bool:
    """Whether two boxes of a gold hold one value: the same text, typesetting aside, or the
    same integer zero-padded (`004` and `4`)."""
    if same_text(box, kept):
        return True
    digits = box.strip(), kept.strip()
    return all(d.isdigit() for d in digits) and len({d.lstrip("0") for d in digits}) == 1


def normalize_gold(gold: str) -> str | None:
    """The gold as the LaTeX math span handed to math_verify.parse; None when empty."""
    text = _boxed(gold).strip()
    if not text:
        return None
    if text.endswith("$."):
        text = text[:-2].rstrip()
    text = PROSE.sub("", text)
    text = DOLLAR.sub(" ", text)
    text = e_notation(text)
    text = shared_spelling(text)
    text = strip_unit_words(text)
    if "matrix}" in text:
        text = _LOST_ROW.sub(r"\\\\", text)
    text = half_open(text)
    text = brace_trailing_letters(text.strip())
    return "$" + text + "$" if text else None


# math-verify's unit normalisation deletes a trailing letter run from its list (t, c, m, s,
# g, d, h, l, ab, cm, ...) after a digit, `}` or space: `\\frac{1}{m} t` -> 1/m, `2ab` -> 2,
# `6m` -> 6. Braces keep the letters: `6{m}` parses to 6*m.
TRAILING_LETTERS = re.compile(r"(?<=[\d}\s])([A-Za-z]{1,8})\s*+$")


def brace_trailing_letters(text: str, allowed: frozenset[str] | None = None) -> str:
    """`6m` -> `6{m}` (for answers: only when every letter is in `allowed`)."""
    tail_start = max(0, len(text) - 40)
    match = TRAILING_LETTERS.search(text, tail_start)
    if match is None:
        return text
    letters = match.group(1)
    if allowed is not None and not set(letters) <= allowed:
        return text
    return text[: match.start()] + "{" + letters + "}"


def strip_unit_words(text: str, letters: frozenset[str] = frozenset()) -> str:
    """`125 miles` -> `125`: unit words ending the text after a number, each a known unit, a
    word of 4+ letters or (beside such a unit) a lone letter; `6m`, `2ab` stay variables, and
    so does any word that is one of `letters` (the gold's variables)."""
    tail_start = max(0, len(text) - 200)
    match = _UNIT_WORDS.search(text, tail_start)
    if match is None:
        return text
    words = _WORD.findall(match.group(1))
    strong = [w for w in words if w in UNITS or len(w) >= 4]
    if not strong or any((len(w) in (2, 3) and w not in UNITS) or w in letters for w in words):
        return text
    return text[: match.start()].rstrip() or text


def half_open(text: str) -> str:
    """`t(0,4]` -> `t \\in (0,4]` (only for mismatched brackets: `(...]` or `[...)`)."""
    match = HALF_OPEN.match(text)
    if not match or match.group(2)[0] + match.group(2)[-1] not in ("(]", "[)"):
        return text
    return f"{match.group(1)} \\in {match.group(2)}"
