"""The lenient policy's decimal approximations: a plain decimal answer that approximates a
numeric gold (within a relative 1e-4, or the gold rounded to the answer's decimals)."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

import mpmath

from llmeval.verify.numbers import real_value

LENIENT_REL_TOL = 1e-4
MIN_SIGNIFICANT = 3  # `0.9` is not an approximation of 10/11 worth accepting; `0.909` is
_DECIMAL_TEXT = re.compile(r"^\s*+(-?)(\d*+)\.(\d++)\s*+$")


def approx_equal(gold_value: Any, answer_text: str) -> bool:
    """Whether a plain decimal answer (`0.9091`, with a decimal point and at least
    MIN_SIGNIFICANT significant digits) approximates a non-integer numeric gold: within a
    relative LENIENT_REL_TOL, or equal to the gold rounded to the answer's number of decimals
    (half-up or half-even). Integer golds are never approximated (`12.0001` is not 12)."""
    match = _DECIMAL_TEXT.match(answer_text)
    if match is None:
        return False
    sign, whole, frac = match.groups()
    digits = (whole + frac).lstrip("0")
    if len(digits) < MIN_SIGNIFICANT:
        return False
    gold = real_value(gold_value)
    if gold is None:
        return False
    answer = Decimal(f"{sign}{whole or '0'}.{frac}")
    with mpmath.workdps(40):
        answer_mp = mpmath.mpf(str(answer))
        if gold != 0 and abs(answer_mp - gold) <= mpmath.mpf(LENIENT_REL_TOL) * abs(gold):
            return True
        try:
            gold_dec = Decimal(
                mpmath.nstr(gold, 35, strip_zeros=False, min_fixed=-(10**6), max_fixed=10**6)
            )
        except (InvalidOperation, ValueError):
            return False
    quantum = Decimal(1).scaleb(-len(frac))
    try:
        return any(
            gold_dec.quantize(quantum, rounding=mode) == answer
            for mode in (ROUND_HALF_UP, ROUND_HALF_EVEN)
        )
    except InvalidOperation:  # over 28 digits: such an answer passed the relative test above
        return False
