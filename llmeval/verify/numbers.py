"""Relative-tolerance comparison of numbers parsed by math-verify.

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

`compare` returns True/False when both sides are numeric (a number; a tuple, set, interval
or matrix of numbers), None otherwise (the caller then asks `math_verify.verify`). The work
is bounded: expression trees over `MAX_NODES` nodes, big exponents, evalf precision loss and
any exception give None; nothing calls simplify.
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

import mpmath
import sympy
from sympy import (
    Add,
    Basic,
    Float,
    Integer,
    Interval,
    Mul,
    Pow,
    Rational,
    Tuple,
    UnevaluatedExpr,
)
from sympy.core.relational import Relational
from sympy.matrices import MatrixBase
from sympy.sets.sets import FiniteSet as SympyFiniteSet

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


# ---------------------------------------------------------------------------------------
# comparing values


def _terminating(q: Fraction) -> bool:
    den = q.denominator
    for p in (2, 5):
        while den % p == 0:
            den //= p
    return den == 1


def _rel_close(a: Any, b: Any, rel_tol: float) -> bool:
    with mpmath.workdps(EVALF_DIGITS + 10):
        scale = max(abs(a), abs(b))
        if scale == 0:
            return True
        return bool(abs(a - b) <= mpmath.mpf(rel_tol) * scale)


def num_equal(gold: Num, answer: Num, rel_tol: float) -> bool:
    """See the module docstring: exact when both are exact (a decimal against a
    non-terminating rational is an approximation), else relative."""
    if gold.exact is not None and answer.exact is not None:
        if gold.exact == answer.exact:
            return True
        g_term = all(_terminating(part) for part in gold.exact)
        a_term = all(_terminating(part) for part in answer.exact)
        if (answer.decimal and not g_term) or (gold.decimal and not a_term):
            return _rel_close(gold.mp(), answer.mp(), rel_tol)
        return False
    if gold.is_zero() or answer.is_zero():
        return gold.is_zero() and answer.is_zero()
    return _rel_close(gold.mp(), answer.mp(), rel_tol)


def _split_percent(expr: Any) -> tuple[Any, bool]:
    """(x, True) for a percentage x% (latex2sympy: x*UnevaluatedExpr(1/100)), else (expr, False)."""
    if isinstance(expr, Mul) and len(expr.args) == 2 and expr.args[1] == _PCT:
        return expr.args[0], True
    return expr, False


def _percent_candidates(gold: Any, answer: Any) -> list[tuple[Num, Num]]:
    """Value pairs to try. Percent policy:
    - both or neither percent: the values (20\\% vs 20\\% or 0.2\\%... by value);
    - gold `x%`, answer plain y: y = x (the number restated without its sign) or y = x/100;
    - answer `y%`, gold plain x: y/100 = x (the value: `20\\%` for 0.2), or y = x when
      |x| >= 1 (a percentage written without its sign: gold 20). A gold below 1 in magnitude
      is a fraction, so `0.2\\%` against a gold of 0.2 is wrong (off by 100x)."""
    g_inner, g_pct = _split_percent(gold)
    a_inner, a_pct = _split_percent(answer)
    g_val, a_val = value_of(g_inner), value_of(a_inner)
    hundredth = Fraction(1, 100)
    if g_pct == a_pct:
        return [(g_val, a_val)]
    if g_pct:
        return [(g_val, a_val), (g_val.scaled(hundredth), a_val)]
    pairs = [(g_val, a_val.scaled(hundredth))]
    with mpmath.workdps(EVALF_DIGITS + 10):
        if abs(g_val.mp()) >= 1:
            pairs.append((g_val, a_val))
    return pairs


def _is_infinity(expr: Any) -> bool:
    return any(expr is inf for inf in _INFINITIES)


def _small(expr: Any) -> bool:
    count = 0
    for _ in sympy.preorder_traversal(expr):
        count += 1
        if count > MAX_NODES:
            return False
    return True


def _numeric_scalar(expr: Any) -> bool:
    if not isinstance(expr, sympy.Expr) or isinstance(expr, (Tuple, MatrixBase)):
        return False
    if _is_infinity(expr):
        return True
    try:
        return not expr.free_symbols and _small(expr) and bool(expr.is_number)
    except Exception:
        return False


def scalar_equal(gold: Any, answer: Any, rel_tol: float) -> bool:
    """Both numeric scalars; raises _Undecided."""
    if _is_infinity(gold) or _is_infinity(answer):
        return gold == answer
    return any(num_equal(g, a, rel_tol) for g, a in _percent_candidates(gold, answer))


def _is_assignment(expr: Any) -> bool:
    return (
        isinstance(expr, sympy.Eq)
        and isinstance(expr.lhs, (sympy.Symbol, sympy.Function))
        and not isinstance(expr.rhs, Relational)
    )


def _all_of(results: list[bool]) -> bool:
    return all(results)


def _match_sets(gold: list[Any], answer: list[Any], rel_tol: float) -> bool:
    """A perfect matching between equal-sized collections (any pair undecided: undecided)."""
    n = len(gold)
    ok = [[_cmp(g, a, rel_tol) for a in answer] for g in gold]
    match_of: list[int | None] = [None] * n  # answer index -> gold index

    def augment(gi: int, seen: list[bool]) -> bool:
        for ai in range(n):
            if ok[gi][ai] and not seen[ai]:
                seen[ai] = True
                if match_of[ai] is None or augment(match_of[ai], seen):  # type: ignore[arg-type]
                    match_of[ai] = gi
                    return True
        return False

    return all(augment(gi, [False] * n) for gi in range(n))


def _cmp(gold: Any, answer: Any, rel_tol: float) -> bool:
    """True/False for numeric structures; raises _Undecided otherwise."""
    if isinstance(gold, Relational) or isinstance(answer, Relational):
        if _is_assignment(gold) and not isinstance(answer, Relational):
            return _cmp(gold.rhs, answer, rel_tol)
        if _is_assignment(answer) and not isinstance(gold, Relational):
            return _cmp(gold, answer.rhs, rel_tol)
        raise _Undecided
    if isinstance(gold, MatrixBase) or isinstance(answer, MatrixBase):
        if not (isinstance(gold, MatrixBase) and isinstance(answer, MatrixBase)):
            raise _Undecided
        if gold.shape != answer.shape or len(gold) > MAX_SET:
            raise _Undecided  # math-verify decides odd shapes (vectors vs rows)
        return all(_cmp(g, a, rel_tol) for g, a in zip(gold, answer))
    if isinstance(gold, Interval) and isinstance(answer, Interval):
        if gold.left_open != answer.left_open or gold.right_open != answer.right_open:
            return False
        return _cmp(gold.start, answer.start, rel_tol) and _cmp(gold.end, answer.end, rel_tol)
    # an open interval (a, b) and the pair (a, b): math-verify lets them match
    if isinstance(gold, Interval) and isinstance(answer, Tuple) and gold.is_open:
        if len(answer) != 2:
            return _numeric_collection(answer) and False
        return _cmp(gold.start, answer[0], rel_tol) and _cmp(gold.end, answer[1], rel_tol)
    if isinstance(answer, Interval) and isinstance(gold, Tuple) and answer.is_open:
        if len(gold) != 2:
            return _numeric_collection(gold) and False
        return _cmp(gold[0], answer.start, rel_tol) and _cmp(gold[1], answer.end, rel_tol)
    g_coll = isinstance(gold, (Tuple, SympyFiniteSet))
    a_coll = isinstance(answer, (Tuple, SympyFiniteSet))
    if g_coll or a_coll:
        g_items = list(gold.args) if g_coll else [gold]
        a_items = list(answer.args) if a_coll else [answer]
        if len(g_items) > MAX_SET or len(a_items) > MAX_SET:
            raise _Undecided
        if isinstance(gold, Tuple) and isinstance(answer, Tuple):
            if len(g_items) != len(a_items):
                _require_numeric(g_items + a_items)
                return False
            return all(_cmp(g, a, rel_tol) for g, a in zip(g_items, a_items))
        if isinstance(gold, Tuple) or isinstance(answer, Tuple):
            # a tuple against a set or a scalar: only a size mismatch is decided here
            # (a complete answer has the gold's size; a partial one is wrong)
            if len(g_items) != len(a_items):
                _require_numeric(g_items + a_items)
                return False
            raise _Undecided
        if len(g_items) != len(a_items):
            _require_numeric(g_items + a_items)
            return False
        return _match_sets(g_items, a_items, rel_tol)
    if isinstance(gold, (sympy.Set, Interval)) or isinstance(answer, (sympy.Set, Interval)):
        raise _Undecided
    if _numeric_scalar(gold) and _numeric_scalar(answer):
        return scalar_equal(gold, answer, rel_tol)
    raise _Undecided


def _numeric_collection(items: Any) -> bool:
    _require_numeric(list(items.args))
    return True


def _require_numeric(items: list[Any]) -> None:
    """Raise _Undecided unless every item is a numeric scalar or a collection of them."""
    for item in items:
        if isinstance(item, (Tuple, SympyFiniteSet)):
            _require_numeric(list(item.args))
        elif isinstance(item, Interval):
            _require_numeric([item.start, item.end])
        elif not _numeric_scalar(item):
            raise _Undecided


def first_expr(parsed: list[Any]) -> Any:
    """The first sympy object of a math-verify parse result (strings are its fallbacks)."""
    for item in parsed:
        if isinstance(item, (Basic, MatrixBase)):
            return item
    return None


def compare(
    gold_parsed: list[Any], answer_parsed: list[Any], rel_tol: float = STRICT_REL_TOL
) -> bool | None:
    """True/False when gold and answer (math-verify parse results) are both numeric, else
    None. Never raises."""
    gold, answer = first_expr(gold_parsed), first_expr(answer_parsed)
    if gold is None or answer is None:
        return None
    try:
        return bool(_cmp(gold, answer, rel_tol))
    except _Undecided:
        return None
    except RecursionError:
        return None
    except Exception:
        return None


def numeric_value(expr: Any) -> Num | None:
    """The value of a numeric scalar (percent read as x/100), or None."""
    try:
        if not _numeric_scalar(expr) or _is_infinity(expr):
            return None
        inner, pct = _split_percent(expr)
        value = value_of(inner)
        return value.scaled(Fraction(1, 100)) if pct else value
    except Exception:
        return None


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
