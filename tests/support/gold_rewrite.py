"""A standard rewriting of a gold answer that a correct grader must accept (true equivalents
only), for the data-driven test over every file in `data/`."""

from __future__ import annotations

import re

_E_NOTATION = re.compile(r"(?<![\w.\\])(\d+\.\d*|\.\d+|\d+)[eE]([+-]?\d{1,4})(?![\w.^{])")
_INT_FRAC = re.compile(r"(?<![\w.}^_])(-?)(\d+)\s*/\s*(\d+)(?![\w.{(^])")
_SHORT_FRAC = re.compile(r"\\frac\s*(\d)\s*(\d)")
_SHORT_FRAC2 = re.compile(r"\\frac\s*\{([^{}]*)\}\s*(\d)(?!\d)")
_FLOAT_DIV = re.compile(r"(?<![\w.])(\d+)\.\s*/\s*(\d+)")


def _despace(text: str) -> str:
    """Remove spaces that separate nothing: keep one only between two letters (`a b`, `\\pi k`)."""
    out = []
    for i, ch in enumerate(text):
        if ch == " ":
            prev = out[-1] if out else ""
            nxt = text[i + 1] if i + 1 < len(text) else ""
            keep = (prev.isalpha() and nxt.isalpha()) or prev == "\\"
            if keep and (not out or out[-1] != " "):
                out.append(" ")
            continue
        out.append(ch)
    return "".join(out)


def rewrite(gold: str) -> str:
    """A standard rewriting of a gold that a correct grader must accept: `\\dfrac`->`\\frac`,
    `\\left(`/`\\right)` dropped, spacing removed, `$,$`->`, `, e-notation -> `\\times 10^{k}`,
    `\\$` and `\\!` dropped, integer a/b -> `\\frac{a}{b}`, `\\frac43` -> `\\frac{4}{3}`,
    `a./b` -> `\\frac{a}{b}`, `%` -> `\\%`."""
    text = gold.replace("\n", " ").strip()
    if text.endswith("$."):
        text = text[:-2]
    text = re.sub(r"(?<!\\)\$\s*,\s*(?<!\\)\$", ", ", text)
    text = re.sub(r"(?<!\\)\$\s+(?<!\\)\$", " ", text)
    text = re.sub(r"(?<!\\)\$\s*,?\s*(?:where|for|with)\b.*$", "", text)
    text = text.replace("\\$", "").replace("\\!", "")
    text = re.sub(r"(?<!\\)\$", " ", text)
    text = text.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    text = re.sub(r"\\left\s*([(\[|.])", r"\1", text)
    text = re.sub(r"\\right\s*([)\]|.])", r"\1", text)
    text = re.sub(r"\\left\\\{", r"\\{", text)
    text = re.sub(r"\\right\\\}", r"\\}", text)
    text = _E_NOTATION.sub(
        lambda m: f"{m.group(1).rstrip('.')}\\times10^{{{int(m.group(2))}}}", text
    )
    text = _FLOAT_DIV.sub(r"\\frac{\1}{\2}", text)
    text = _SHORT_FRAC.sub(r"\\frac{\1}{\2}", text)
    text = _SHORT_FRAC2.sub(r"\\frac{\1}{\2}", text)
    text = _INT_FRAC.sub(r"\1\\frac{\2}{\3}", text)
    text = re.sub(r"(?<!\\)%", r"\\%", text)
    return _despace(text).strip()


# (gold, other problem's gold) pairs of different problems with the same value
SAME_VALUE: set[tuple[str, str]] = {
    ("5", "x=5"),  # math500: the next problem's gold is the assignment x=5
}
