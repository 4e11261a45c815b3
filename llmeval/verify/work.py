"""The work one answer may cause: its size and structure (characters, operators, fractions,
nesting) against its gold's. Within the bound an answer is compared in full; past it only as a
constant by value (`numbers.py`: bounded, no simplify), else not at all.

sympy's `simplify` (math-verify's last resort) grows with the structure, not the length: a sum
of 30 fractions over quadratics took 11 s against a 4-fraction gold, 60 of them the whole
`--timeout`; a 1,000-character sum of numbers takes milliseconds. Text only, linear time.
"""

from __future__ import annotations

import re
from typing import NamedTuple

# (floor, per gold): an answer may have max(floor, per gold x the gold's) of each measure
CHARS, OPERATORS, FRACTIONS = (200, 10), (40, 4), (6, 2)
NESTING = (8, 4)  # max(floor, the gold's + this)
# Past the bound, a constant is still read up to this size (its parse takes about 1 s).
CONSTANT_CHARS = 4000
TOO_LONG = "answer too long to compare"

_OPERATOR = re.compile(r"[-+*/^=<>!]|\\(?!left(?![A-Za-z])|right(?![A-Za-z]))[A-Za-z]++")
_FRACTION = re.compile(r"/|\\[dtc]?frac(?![A-Za-z])|\\binom(?![A-Za-z])")
_VARIABLE = re.compile(r"\\[A-Za-z]++|[A-Za-z]")  # a command, or a letter outside one
_CONSTANT_LETTERS = frozenset("ei")  # Euler's number and the imaginary unit
_DEPTH = str.maketrans({"{": "(", "[": "(", "}": ")", "]": ")"})


class Structure(NamedTuple):
    """What an answer's comparison costs grows with."""

    chars: int
    operators: int  # + - * / ^ = < > ! and commands (\frac, \sqrt, \cos, \cdot, \pi, ...)
    fractions: int  # \frac, \dfrac, \tfrac, \cfrac, \binom and /
    nesting: int  # the deepest nesting of (), [] and {}


def structure(text: str) -> Structure:
    """The size and structure of a LaTeX text."""
    depth = deepest = 0
    for char in text.translate(_DEPTH):
        if char == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif char == ")":
            depth = max(0, depth - 1)
    operators = sum(1 for _ in _OPERATOR.finditer(text))
    return Structure(len(text), operators, sum(1 for _ in _FRACTION.finditer(text)), deepest)


def within(answer: str, gold: str) -> bool:
    """Whether an answer is within its gold's bound on every measure (docs/verifier.md)."""
    mine, its = structure(answer), structure(gold)
    return (
        mine.chars <= max(CHARS[0], CHARS[1] * its.chars)
        and mine.operators <= max(OPERATORS[0], OPERATORS[1] * its.operators)
        and mine.fractions <= max(FRACTIONS[0], FRACTIONS[1] * its.fractions)
        and mine.nesting <= max(NESTING[0], its.nesting + NESTING[1])
    )


def constant(text: str) -> bool:
    """Whether a text may be a constant read past the bound: at most CONSTANT_CHARS, and no
    letter outside a command but `e` and `i` (whether it has no variable at all is the
    parse's to say: `\\alpha` passes here)."""
    if len(text) > CONSTANT_CHARS:
        return False
    return all(
        len(found) > 1 or found in _CONSTANT_LETTERS
        for found in (m.group() for m in _VARIABLE.finditer(text))
    )
