"""The lenient policy's decimal approximations: a plain decimal answer that approximates a
numeric gold (within a relative 1e-4, or the gold rounded to the answer's decimals)."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

import mpmath

from llmeval.verify.matching import numeric_value

LENIENT_REL_TOL = 1e-4
MIN_SIGNIFICANT = 3  # `0.9` is not an approximation of 10/11 worth accepting; `0.909` is
_DECIMAL_TEXT = re.compile(r"^\s*+(-?)(\d*+)\.(\d++)\s*+$")


def _gold_mpf(gold_value: Any) -> Any:
    """An mpf (40 digits) for a sympy numeric expression, Fraction, int, float or Decimal."""
    with mpmath.workdps(40):
        if isinstance(gold_value, (int, Fraction)):
            value = Fraction(gold_value)
            return mpmath.mpf(value.numerator) / value.denominator
        if isinstance(gold_value, (float, Decimal)):
            return mpmath.mpf(str(gold_value))
        num = numeric_value(gold_value)
        if num is None:
            return None
        value = num.mp()
        if value.imag != 0:
            return None
        return value.real


def _is_integer(gold_value: Any) -> bool:
    if isinstance(gold_value, int):
        return True
    if isinstance(gold_value, Fraction):
        return gold_value.denominator == 1
    if getattr(gold_value, "is_Integer", False):
        return True
    try:
        num = numeric_value(gold_value)
    except Exception:
        return False
    return bool(
        num and num.exact is not None and num.exact[1] == 0 and num.exact[0].denominator == 1
    )


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
    try:
        if _is_integer(gold_value):
            return False
        gold = _gold_mpf(gold_value)
    except Exception:
        return False
    if gold is None or not mpmath.isfinite(gold):
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
    return any(
        gold_dec.quantize(quantum, rounding=mode) == answer
        for mode in (ROUND_HALF_UP, ROUND_HALF_EVEN)
    )
