"""Numbers, and tuples, sets, intervals and matrices of them, compared by value from
math-verify's parse results (the verifier's path 5; math-verify compares at an absolute
precision): one value reader (`value_of`) and one structural comparison (`_cmp`). The work is
bounded (MAX_NODES, MAX_EXACT_BITS, MAX_ITEMS); nothing calls simplify, so constants past the
answer-size bound (`work.py`) are compared here too."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any, NamedTuple

import mpmath
import sympy
from sympy import Add, FiniteSet, Float, Interval, MatrixBase, Mul, Pow, Rational, Tuple

from llmeval.verify.lists import perfect_matching

REL_TOL = 1e-6  # where an integer or a decimal took part: it may be a rounding
CLOSED_TOL = 1e-40  # closed forms otherwise: equal values, not approximations (355/113 is no pi)
DIGITS = 50  # evalf's significant digits; values are compared with 10 more
MAX_NODES = 2000  # larger expression trees are no numbers here
MAX_EXACT_BITS = 20_000  # larger exact values (10^{10^9}, 3000!) are evaluated approximately
MAX_ITEMS = 64  # larger tuples, sets and matrices: math-verify decides
_PERCENT = sympy.UnevaluatedExpr(Rational(1, 100))  # latex2sympy reads `x\%` as x*_PERCENT
_POINTS = ((0.6180339887, 0.1732050807), (1.4142135623, 0.2718281828))
_INFINITIES = (sympy.oo, -sympy.oo)


class _Undecided(Exception):
    """Not a pair this module decides."""


class Value(NamedTuple):
    """A number: `exact` (re, im) when known, `approx` (an mpc); `decimal`: a decimal took part."""

    exact: tuple[Fraction, Fraction] | None
    decimal: bool
    approx: Any

    @property
    def positional(self) -> bool:
        """Written in digits (an integer or a decimal): what a rounding looks like."""
        exact = self.exact
        return self.decimal or (exact is not None and exact[1] == 0 and exact[0].denominator == 1)

    def hundredth(self) -> Value:
        exact = None if self.exact is None else (self.exact[0] / 100, self.exact[1] / 100)
        return Value(exact, self.decimal, self.approx / 100)


def _decimal(leaf: Float) -> Fraction:
    """A Float leaf as the decimal literal it came from (its own digits: `0.1` is 1/10)."""
    try:
        return Fraction(Decimal(str(leaf)))
    except (InvalidOperation, ValueError, OverflowError) as exc:
        raise _Undecided from exc


def _bits(expr: Any) -> int:
    """A bound on the bits of the values met computing `expr` exactly; raises _Undecided
    unless it is built of numbers, `i`, sums, products, powers and factorials."""
    if isinstance(expr, Float):
        expr = Rational(_decimal(expr))
    if isinstance(expr, Rational):
        return max(int(expr.p).bit_length(), int(expr.q).bit_length(), 1)
    if expr is sympy.I:
        return 1
    if isinstance(expr, Add):  # a sum's size is its largest term's (fractions aside)
        return max(_bits(arg) for arg in expr.args) + len(expr.args).bit_length()
    if isinstance(expr, (Mul, sympy.UnevaluatedExpr)):
        return sum(_bits(arg) for arg in expr.args)
    if isinstance(expr, Pow):
        exponent, imag = _exact(expr.args[1])
        if imag != 0 or exponent.denominator > 64:
            raise _Undecided
        return _bits(expr.args[0]) * max(abs(exponent.numerator), 1)
    if isinstance(expr, sympy.factorial) and expr.args[0].is_Integer:
        return int(expr.args[0]) * max(int(expr.args[0]).bit_length(), 1)
    raise _Undecided


def _exact(expr: Any) -> tuple[Fraction, Fraction]:
    """The exact value of `expr`, decimals read as their digits; raises _Undecided."""
    if _bits(expr) > MAX_EXACT_BITS:
        raise _Undecided
    value = expr.xreplace({f: Rational(_decimal(f)) for f in expr.atoms(Float)}).doit()
    real, imag = value.as_real_imag() if value.has(sympy.I) else (value, sympy.S.Zero)
    if not (isinstance(real, Rational) and isinstance(imag, Rational)):
        raise _Undecided
    return Fraction(int(real.p), int(real.q)), Fraction(int(imag.p), int(imag.q))


def value_of(expr: Any) -> Value:
    """The value of a number: exact when it can be, else approximate (in the caller's mpmath
    context of DIGITS + 10); raises _Undecided or what evalf raises."""
    try:
        exact = _exact(expr)
        approx = mpmath.mpc(*(mpmath.mpf(q.numerator) / q.denominator for q in exact))
    except _Undecided:
        re, im = expr.evalf(DIGITS, strict=True, maxn=4 * DIGITS).as_real_imag()
        if not all(getattr(part, "is_Number", False) and part.is_finite for part in (re, im)):
            raise
        exact, approx = None, mpmath.mpc(mpmath.mpf(str(re)), mpmath.mpf(str(im)))
    return Value(exact, bool(expr.atoms(Float)), approx)


def _endless(value: Value) -> bool:
    """Whether no decimal writes this exact value (a prime but 2 and 5 divides a denominator)."""
    return any(pow(10, q.denominator.bit_length(), q.denominator) for q in value.exact or ())


def _equal(gold: Value, answer: Value) -> bool:
    """Exactly when both are exact, unless a decimal meets a value no decimal writes; else at
    REL_TOL where an integer or a decimal took part, at CLOSED_TOL (DIGITS digits) if not."""
    both_exact = gold.exact is not None and answer.exact is not None
    approximated = (answer.decimal and _endless(gold)) or (gold.decimal and _endless(answer))
    if both_exact and gold.exact != answer.exact and not approximated:
        return False
    a, b = gold.approx, answer.approx
    tolerance = REL_TOL if gold.positional or answer.positional else CLOSED_TOL
    return bool(abs(a - b) <= mpmath.mpf(tolerance) * max(abs(a), abs(b)))


def _percent(expr: Any) -> tuple[Any, bool]:
    """(x, True) for a percent `x\\%`, else (expr, False)."""
    if isinstance(expr, Mul) and len(expr.args) == 2 and expr.args[1] == _PERCENT:
        return expr.args[0], True
    return expr, False


def _readings(gold: Any, answer: Any) -> list[tuple[Value, Value]]:
    """The value pairs a percent allows: against a gold `x%`, y = x or y = x/100; an answer
    `y%` against x, y/100 = x or, if |x| >= 1, y = x (`0.2\\%` is not 0.2: off by 100x)."""
    (gold, gold_percent), (answer, answer_percent) = _percent(gold), _percent(answer)
    gold_value, answer_value = value_of(gold), value_of(answer)
    if gold_percent and not answer_percent:
        return [(gold_value, answer_value), (gold_value.hundredth(), answer_value)]
    if answer_percent and not gold_percent:
        restated = [(gold_value, answer_value)] if abs(gold_value.approx) >= 1 else []
        return [(gold_value, answer_value.hundredth()), *restated]
    return [(gold_value, answer_value)]


def _small(expr: Any) -> bool:
    return all(count <= MAX_NODES for count, _ in enumerate(sympy.preorder_traversal(expr), 1))


def _scalar(expr: Any) -> bool:
    """Whether `expr` is one number (infinity included), small enough to read."""
    if not isinstance(expr, sympy.Expr) or isinstance(expr, MatrixBase):
        return False
    try:
        return expr in _INFINITIES or (
            not expr.free_symbols and _small(expr) and bool(expr.is_number)
        )
    except Exception:
        return False


def _numeric(item: Any) -> bool:
    """Whether `item` is a number, or a tuple, set or interval of numbers."""
    if isinstance(item, Interval):
        return _numeric(item.start) and _numeric(item.end)
    if isinstance(item, (Tuple, FiniteSet)):
        return all(_numeric(part) for part in item.args)
    return _scalar(item)


def _assignment(expr: Any) -> bool:
    """`x = 5`, `f(x) = 5`: a name given a value."""
    named = isinstance(expr, sympy.Eq) and isinstance(expr.lhs, (sympy.Symbol, sympy.Function))
    return named and not isinstance(expr.rhs, sympy.Rel)


def _ends(expr: Any, other: Any) -> Any:
    """An interval as the pair of its ends, against an interval (of the same openness) or, when
    open, against a tuple (math-verify matches those); else `expr`."""
    if not isinstance(expr, Interval):
        return expr
    pair = isinstance(other, Interval) or (isinstance(other, Tuple) and expr.is_open)
    return Tuple(expr.start, expr.end) if pair else expr


def _cmp(gold: Any, answer: Any) -> bool:
    """True/False for numbers and structures of numbers; raises _Undecided otherwise."""
    if _assignment(gold) and not isinstance(answer, sympy.Rel):
        return _cmp(gold.rhs, answer)
    if _assignment(answer) and not isinstance(gold, sympy.Rel):
        return _cmp(gold, answer.rhs)
    if isinstance(gold, MatrixBase) or isinstance(answer, MatrixBase):
        both = isinstance(gold, MatrixBase) and isinstance(answer, MatrixBase)
        if not both or gold.shape != answer.shape or len(gold) > MAX_ITEMS:
            raise _Undecided  # math-verify decides odd shapes (vectors against rows)
        gold, answer = Tuple(*gold), Tuple(*answer)
    intervals = isinstance(gold, Interval) and isinstance(answer, Interval)
    if intervals and (gold.left_open, gold.right_open) != (answer.left_open, answer.right_open):
        return False
    gold, answer = _ends(gold, answer), _ends(answer, gold)
    if isinstance(gold, (Tuple, FiniteSet)) or isinstance(answer, (Tuple, FiniteSet)):
        return _collections(gold, answer)
    if not (_scalar(gold) and _scalar(answer)):
        raise _Undecided  # relations, other sets, expressions of variables
    if gold in _INFINITIES or answer in _INFINITIES:
        return bool(gold == answer)
    return any(_equal(g, a) for g, a in _readings(gold, answer))


def _collections(gold: Any, answer: Any) -> bool:
    """Tuples in order, sets (a number is a set of one) by a matching; an answer of another
    size is wrong; a tuple against a set or a number: math-verify decides."""
    golds = list(gold.args) if isinstance(gold, (Tuple, FiniteSet)) else [gold]
    answers = list(answer.args) if isinstance(answer, (Tuple, FiniteSet)) else [answer]
    if max(len(golds), len(answers)) > MAX_ITEMS:
        raise _Undecided
    if len(golds) != len(answers):
        if not all(_numeric(item) for item in golds + answers):
            raise _Undecided
        return False
    if isinstance(gold, Tuple) and isinstance(answer, Tuple):
        return all(_cmp(g, a) for g, a in zip(golds, answers, strict=True))
    if isinstance(gold, Tuple) or isinstance(answer, Tuple):
        raise _Undecided
    ok = [[_cmp(g, a) for a in answers] for g in golds]
    return perfect_matching(len(golds), lambda i, j: ok[i][j])


def first_expr(parsed: list[Any]) -> Any:
    """The first sympy object of a math-verify parse result (strings are its fallbacks)."""
    return next((item for item in parsed if isinstance(item, (sympy.Basic, MatrixBase))), None)


def compare(gold_parsed: list[Any], answer_parsed: list[Any]) -> bool | None:
    """True/False when gold and answer (math-verify parse results) are both numeric, else
    None. Never raises. Never equal: a division by zero, an expression of variables that takes
    two values against a number (`p - q` against 7)."""
    gold, answer = first_expr(gold_parsed), first_expr(answer_parsed)
    if _divides_by_zero(gold) or _divides_by_zero(answer):
        return False
    if gold is None or answer is None:
        return None
    try:
        if _varies_against(gold, answer) or _varies_against(answer, gold):
            return False
        with mpmath.workdps(DIGITS + 10):
            return _cmp(gold, answer)
    except Exception:  # _Undecided, RecursionError, anything sympy raises: math-verify decides
        return None


def _divides_by_zero(expr: Any) -> bool:
    """Whether an expression is or holds a division by zero (zoo, nan, an unevaluated 1/0)."""
    if expr is None:
        return False
    try:
        if expr.has(sympy.zoo, sympy.nan):
            return True
        return any(p.base == 0 and p.exp.is_negative for p in expr.atoms(Pow))
    except Exception:
        return False


def _varies_against(expr: Any, number: Any) -> bool:
    """Whether `expr` has variables and takes clearly different values at two _POINTS (one
    value per variable, in name order; positive: roots and logarithms stay real) while `number`
    is a number: then they are never equal."""
    if not (
        isinstance(expr, sympy.Expr) and expr.free_symbols and _scalar(number) and _small(expr)
    ):
        return False
    symbols = sorted(expr.free_symbols, key=lambda s: s.name)
    values = []
    for base, step in _POINTS:
        subs = {s: sympy.Float(base + i * step, DIGITS) for i, s in enumerate(symbols)}
        value = expr.evalf(DIGITS, subs=subs)
        if not (value.is_number and value.is_extended_real and value.is_finite):
            return False
        values.append(mpmath.mpf(str(value)))
    with mpmath.workdps(DIGITS):
        scale = max(abs(values[0]), abs(values[1]), mpmath.mpf(1))
        return bool(abs(values[0] - values[1]) > mpmath.mpf("1e-3") * scale)


def real_value(expr: Any) -> Any:
    """The value of a finite real number (a percent read as x/100), as an mpf (DIGITS + 10
    digits); None for anything else. What the lenient policy approximates."""
    try:
        if not _scalar(expr) or expr in _INFINITIES:
            return None
        inner, percent = _percent(expr)
        with mpmath.workdps(DIGITS + 10):
            value = value_of(inner).hundredth() if percent else value_of(inner)
    except Exception:
        return None
    approx = value.approx
    return approx.real if approx.imag == 0 and mpmath.isfinite(approx.real) else None
