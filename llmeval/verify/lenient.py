"""The lenient policy's one approximation rule: a plain decimal answer equals a numeric gold
when they are within a relative 1e-4, or when the more precise of the two, rounded to the
other's decimal places, gives the other, which has at least two significant digits (the
published harnesses' reading: `0.074` for 2/27, `0.429` for a gold of `0.43`, `3.999999`
for 4). An integer gold is no decimal: it is never the rounding of an answer (`12.4` is not
12)."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any, NamedTuple

import mpmath

from llmeval.verify.numbers import real_value

LENIENT_REL_TOL = 1e-4
MIN_SIGNIFICANT = 2  # `0.07` for 2/27 is one digit, no approximation worth accepting
_DECIMAL_TEXT = re.compile(r"^\s*+(-?)(\d*+)\.(\d++)\s*+$")


class _Written(NamedTuple):
    """A plain decimal as written: its value, decimal places and significant digits."""

    value: Decimal
    places: int
    significant: int


def _written(text: str) -> _Written | None:
    match = _DECIMAL_TEXT.match(text.strip("$"))
    if match is None:
        return None
    sign, whole, frac = match.groups()
    value = Decimal(f"{sign}{whole or '0'}.{frac}")
    return _Written(value, len(frac), len((whole + frac).lstrip("0")))


def approx_equal(gold_value: Any, gold_text: str, answer_text: str) -> bool:
    """Whether a plain decimal answer approximates a numeric gold (the module's rule);
    `gold_text` is the normalised gold, whose decimal places count when it is a plain
    decimal."""
    answer = _written(answer_text)
    gold = real_value(gold_value)
    if answer is None or gold is None:
        return False
    with mpmath.workdps(40):
        answer_mp = mpmath.mpf(str(answer.value))
        if gold != 0 and abs(answer_mp - gold) <= mpmath.mpf(LENIENT_REL_TOL) * abs(gold):
            return True
        try:  # the gold's value written out, to be rounded
            gold_digits = Decimal(
                mpmath.nstr(gold, 35, strip_zeros=False, min_fixed=-(10**6), max_fixed=10**6)
            )
        except (InvalidOperation, ValueError):
            return False
    written = _written(gold_text)
    if written is not None and written.places < answer.places:
        return written.significant >= MIN_SIGNIFICANT and _rounds_to(answer.value, written)
    return answer.significant >= MIN_SIGNIFICANT and _rounds_to(gold_digits, answer)


def _rounds_to(value: Decimal, target: _Written) -> bool:
    """Whether `value` rounded (half-up or half-even) to the target's places is the target."""
    quantum = Decimal(1).scaleb(-target.places)
    try:
        return any(
            value.quantize(quantum, rounding=mode) == target.value
            for mode in (ROUND_HALF_UP, ROUND_HALF_EVEN)
        )
    except InvalidOperation:  # over 28 digits: such an answer passed the relative test above
        return False
