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
_INFINITIES = (sympy.S.Infinity, sympy.S.NegativeInfinity, sympy.S.ComplexInfinity)


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

    def is_zero(self) -> bool:
        if self.exact is not None:
            return self.exact == (0, 0)
        return self.approx == 0


def _mp(q: Fraction) -> Any:
    with mpmath.workdps(EVALF_DIGITS + 10):
        return mpmath.mpf(q.numerator) / q.denominator


def _cmul(a: CQ, b: CQ) -> CQ:
    return (a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0])


def _cinv(a: CQ) -> CQ:
    norm = a[0] * a[0] + a[1] * a[1]
    if norm == 0:
        raise ZeroDivisionError
    return (a[0] / norm, -a[1] / norm)


def _bits(q: Fraction) -> int:
    return max(q.numerator.bit_length(), q.denominator.bit_length())


def _cpow(base: CQ, exp: int) -> CQ:
    size = max(_bits(base[0]), _bits(base[1]), 1)
    if abs(exp) * size > MAX_EXACT_BITS:
        raise _Undecided
    if exp < 0:
        base, exp = _cinv(base), -exp
    result: CQ = (Fraction(1), Fraction(0))
    while exp:
        if exp & 1:
            result = _cmul(result, base)
        base = _cmul(base, base)
        exp >>= 1
    return result


def _iroot(n: int, k: int) -> int | None:
    """The exact k-th root of n >= 0, or None."""
    if n < 2:
        return n
    root = round(n ** (1.0 / k)) if n.bit_length() < 1000 else int(mpmath.root(n, k))
    for cand in (root - 1, root, root + 1):
        if cand >= 0 and cand**k == n:
            return cand
    # Newton for large n
    x = 1 << ((n.bit_length() + k - 1) // k)
    while True:
        y = ((k - 1) * x + n // x ** (k - 1)) // k
        if y >= x:
            break
        x = y
    return x if x**k == n else None


def _decimal_fraction(value: Float) -> Fraction:
    """A Float leaf read back as the decimal literal it came from (its own digits)."""
    try:
        return Fraction(Decimal(str(value)))
    except (InvalidOperation, ValueError, OverflowError) as exc:
        raise _Undecided from exc


def _exact(expr: Any) -> tuple[CQ, bool]:
    """(exact complex rational, whether a decimal literal took part); raises _Undecided."""
    if isinstance(expr, Integer):
        return (Fraction(int(expr)), Fraction(0)), False
    if isinstance(expr, Rational):
        return (Fraction(int(expr.p), int(expr.q)), Fraction(0)), False
    if isinstance(expr, Float):
        return (_decimal_fraction(expr), Fraction(0)), True
    if expr is sympy.I:
        return (Fraction(0), Fraction(1)), False
    if isinstance(expr, UnevaluatedExpr):
        return _exact(expr.args[0])
    if isinstance(expr, Add):
        re, im, dec = Fraction(0), Fraction(0), False
        for arg in expr.args:
            (a_re, a_im), a_dec = _exact(arg)
            re, im, dec = re + a_re, im + a_im, dec or a_dec
        return (re, im), dec
    if isinstance(expr, Mul):
        acc: CQ = (Fraction(1), Fraction(0))
        dec = False
        for arg in expr.args:
            value, a_dec = _exact(arg)
            acc, dec = _cmul(acc, value), dec or a_dec
            if max(_bits(acc[0]), _bits(acc[1])) > MAX_EXACT_BITS:
                raise _Undecided
        return acc, dec
    if isinstance(expr, Pow):
        base, b_dec = _exact(expr.args[0])
        (e_re, e_im), e_dec = _exact(expr.args[1])
        if e_im != 0:
            raise _Undecided
        if e_re.denominator == 1:
            try:
                return _cpow(base, int(e_re)), b_dec or e_dec
            except ZeroDivisionError as exc:
                raise _Undecided from exc
        # a rational power of a positive rational: exact only when the root is exact
        if base[1] != 0 or base[0] <= 0 or e_re.denominator > 64:
            raise _Undecided
        k = e_re.denominator
        num, den = _iroot(base[0].numerator, k), _iroot(base[0].denominator, k)
        if num is None or den is None:
            raise _Undecided
        root = (Fraction(num, den), Fraction(0))
        try:
            return _cpow(root, e_re.numerator), b_dec or e_dec
        except ZeroDivisionError as exc:
            raise _Undecided from exc
    if isinstance(expr, sympy.factorial):
        (n_re, n_im), dec = _exact(expr.args[0])
        if n_im != 0 or n_re.denominator != 1 or not 0 <= n_re <= MAX_FACTORIAL:
            raise _Undecided
        import math

        return (Fraction(math.factorial(int(n_re))), Fraction(0)), dec
    raise _Undecided


def _has_float(expr: Any) -> bool:
    return any(isinstance(node, Float) for node in sympy.preorder_traversal(expr))


def _approx(expr: Any) -> Any:
    """An mpc approximation at EVALF_DIGITS significant digits; raises _Undecided."""
    try:
        if not expr.is_number:
            raise _Undecided
        value = expr.evalf(EVALF_DIGITS, strict=True, maxn=EVALF_MAXN)
        re, im = value.as_real_imag()
    except _Undecided:
        raise
    except Exception as exc:  # PrecisionExhausted, unevaluable, ...
        raise _Undecided from exc
    if not (getattr(re, "is_Number", False) and getattr(im, "is_Number", False)):
        raise _Undecided
    if not (re.is_finite and im.is_finite):
        raise _Undecided
    with mpmath.workdps(EVALF_DIGITS + 10):
        return mpmath.mpc(mpmath.mpf(str(re)), mpmath.mpf(str(im)))


def value_of(expr: Any) -> Num:
    """The value of a numeric scalar expression; raises _Undecided."""
    try:
        exact, dec = _exact(expr)
        return Num(exact, dec)
    except _Undecided:
        pass
    except (ZeroDivisionError, OverflowError, ValueError) as exc:
        raise _Undecided from exc
    return Num(None, _has_float(expr), _approx(expr))
