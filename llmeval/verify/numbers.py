"""The values of numbers parsed by math-verify, for comparing them by relative tolerance
(`matching.py` compares; this module reads values).

math-verify compares numbers at an ABSOLUTE precision (6 decimals; `evalf(chop=True)` at 15
digits), so any two values below ~1e-16 are "equal" and 0.0000123 = 0.0000119. This module
decides numeric pairs itself, from math-verify's parse results (sympy objects; never strings):

- Exact values first. Integers, fractions, terminating decimals (a `Float` leaf is a decimal
  literal of the text: its own digits are read back exactly, `0.1` -> 1/10), sums, products,
  integer powers, exact roots (`\\sqrt{4}`), factorials of small integers and `i` give an
  exact complex rational. Two exact values are equal only when identical...
- ...except a decimal literal against a NON-terminating rational (`0.3333333` vs 1/3,
  `4.6667` vs 14/3): no decimal can equal such a value, so a decimal there is read as an
  approximation and compared at the relative tolerance. A decimal against a terminating
  value (`0.5` vs 1/2, `0.33` vs 33/100, `3.8e35` vs 3.83e35) is compared exactly: the
  decimal could have been exact, so a different one is a different answer.
- Everything else numeric (`\\sqrt{2}`, `\\pi`, logs, big powers) is evaluated with
  `evalf(30, strict=True)` and compared at a RELATIVE tolerance: |a-b| <= rel_tol*max(|a|,|b|).
  Zero equals only zero. Magnitude never matters (1e-30 and 1e35 behave like 1).
- Percent (`x\\%` parses to x*UnevaluatedExpr(1/100)): see `_percent_candidates`.

`matching.compare` returns True/False when both sides are numeric (a number; a tuple, set, interval
or matrix of numbers), None otherwise (the caller then asks `math_verify.verify`). The work
is bounded: expression trees over `MAX_NODES` nodes, big exponents, evalf precision loss and
any exception give None; nothing calls simplify.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

import mpmath
import sympy
from sympy import Add, Float, Integer, Mul, Pow, Rational, UnevaluatedExpr

STRICT_REL_TOL = 1e-6
EVALF_DIGITS = 30
EVALF_MAXN = 120  # evalf's working-precision cap (digits)
MAX_NODES = 2000  # larger expression trees are not judged here
MAX_EXACT_BITS = 20_000  # exact integers/powers beyond this fall back to evalf
MAX_FACTORIAL = 2000
MAX_SET = 64  # sets/tuples larger than this: not judged here

_PCT = UnevaluatedExpr(Rational(1, 100))


class _Undecided(Exception):
    """This pair is not one this module decides."""


# ---------------------------------------------------------------------------------------
# values

CQ = tuple[Fraction, Fraction]  # an exact complex rational (re, im)


class Num:
    """A numeric value: exact (complex rational) when known, with a flag telling whether a
    decimal literal took part, and an mpmath approximation (mpc) otherwise."""

    __slots__ = ("approx", "decimal", "exact")

    def __init__(self, exact: CQ | None, decimal: bool, approx: Any = None):
        self.exact = exact
        self.decimal = decimal
        self.approx = approx

    def scaled(self, factor: Fraction) -> Num:
        if self.exact is not None:
            re, im = self.exact
            return Num((re * factor, im * factor), self.decimal)
        return Num(None, self.decimal, self.approx * _mp(factor))

    def mp(self) -> Any:
        if self.approx is not None:
            return self.approx
        re, im = self.exact  # type: ignore[misc]
        return mpmath.mpc(_mp(re), _mp(im))


def _mp(q: Fraction) -> Any:
    with mpmath.workdps(EVALF_DIGITS + 10):
        return mpmath.mpf(q.numerator) / q.denominator


def _decimal_fraction(value: Float) -> Fraction:
    """A Float leaf read back as the decimal literal it came from (its own digits)."""
    try:
        return Fraction(Decimal(str(value)))
    except (InvalidOperation, ValueError, OverflowError) as exc:
        raise _Undecided from exc


def _bits(expr: Any) -> int:
    """A bound on the bits of the exact value of `expr` when it is built only of numbers, `i`,
    sums, products, powers and factorials; raises _Undecided for anything else."""
    if isinstance(expr, Rational):
        return max(int(expr.p).bit_length(), int(expr.q).bit_length(), 1)
    if isinstance(expr, Float):
        return _bits(Rational(_decimal_fraction(expr)))
    if expr is sympy.I:
        return 1
    if isinstance(expr, UnevaluatedExpr):
        return _bits(expr.args[0])
    if isinstance(expr, Add):  # a sum's size is its largest term's (fractions aside)
        return max(_bits(arg) for arg in expr.args) + len(expr.args).bit_length()
    if isinstance(expr, Mul):
        return sum(_bits(arg) for arg in expr.args)
    if isinstance(expr, Pow):
        (exponent, imag), _ = _exact(expr.args[1])
        if imag != 0 or exponent.denominator > 64:
            raise _Undecided
        return _bits(expr.args[0]) * max(abs(exponent.numerator), 1)
    if isinstance(expr, sympy.factorial) and isinstance(expr.args[0], Integer):
        if not 0 <= expr.args[0] <= MAX_FACTORIAL:
            raise _Undecided
        return int(expr.args[0]) * max(int(expr.args[0]).bit_length(), 1)
    raise _Undecided


def _exact(expr: Any) -> tuple[CQ, bool]:
    """(exact complex rational, whether a decimal literal took part); raises _Undecided.

    Decimal literals count as the exact values of their digits; sympy's exact arithmetic does
    the rest, once `_bits` has bounded the size of every intermediate value."""
    if _bits(expr) > MAX_EXACT_BITS:
        raise _Undecided
    floats = expr.atoms(Float)
    if floats:
        expr = expr.xreplace({f: Rational(_decimal_fraction(f)) for f in floats})
    value = expr.doit()
    real, imag = value.as_real_imag() if value.has(sympy.I) else (value, sympy.S.Zero)
    if not (isinstance(real, Rational) and isinstance(imag, Rational)):
        raise _Undecided
    return (Fraction(int(real.p), int(real.q)), Fraction(int(imag.p), int(imag.q))), bool(floats)


def _approx(expr: Any) -> Any:
    """An mpc approximation at EVALF_DIGITS significant digits; raises _Undecided (or what
    evalf raises: PrecisionExhausted, ...)."""
    if not expr.is_number:
        raise _Undecided
    re, im = expr.evalf(EVALF_DIGITS, strict=True, maxn=EVALF_MAXN).as_real_imag()
    if not (getattr(re, "is_Number", False) and getattr(im, "is_Number", False)):
        raise _Undecided
    if not (re.is_finite and im.is_finite):
        raise _Undecided
    with mpmath.workdps(EVALF_DIGITS + 10):
        return mpmath.mpc(mpmath.mpf(str(re)), mpmath.mpf(str(im)))


def value_of(expr: Any) -> Num:
    """The value of a numeric scalar expression; raises _Undecided (or what sympy raises:
    every caller leaves such a pair undecided)."""
    try:
        return Num(*_exact(expr))
    except _Undecided:
        return Num(None, bool(expr.atoms(Float)), _approx(expr))
