"""Numeric answers matched against numeric golds (`numbers.py` gives the values): scalars by
exact or relative equality, percent readings, tuples, sets, intervals and matrices element by
element; and the lenient policy's decimal approximations. `compare` is the entry point."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import mpmath
import sympy
from sympy import Basic, Interval, Mul, Tuple
from sympy.core.relational import Relational
from sympy.matrices import MatrixBase
from sympy.sets.sets import FiniteSet as SympyFiniteSet

from llmeval.verify.lists import perfect_matching
from llmeval.verify.numbers import (
    _PCT,
    EVALF_DIGITS,
    MAX_NODES,
    MAX_SET,
    STRICT_REL_TOL,
    Num,
    _Undecided,
    value_of,
)

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
        return bool(abs(a - b) <= mpmath.mpf(rel_tol) * max(abs(a), abs(b)))


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
    return _rel_close(gold.mp(), answer.mp(), rel_tol)  # zero equals only zero


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
    return expr is sympy.oo or expr is -sympy.oo


def _small(expr: Any) -> bool:
    for count, _ in enumerate(sympy.preorder_traversal(expr), start=1):
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


def _match_sets(gold: list[Any], answer: list[Any], rel_tol: float) -> bool:
    """A perfect matching between equal-sized collections (any pair undecided: undecided)."""
    ok = [[_cmp(g, a, rel_tol) for a in answer] for g in gold]
    return perfect_matching(len(gold), lambda i, j: ok[i][j])


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
        return all(_cmp(g, a, rel_tol) for g, a in zip(gold, answer, strict=False))
    if isinstance(gold, Interval) and isinstance(answer, Interval):
        if gold.left_open != answer.left_open or gold.right_open != answer.right_open:
            return False
        return _cmp(gold.start, answer.start, rel_tol) and _cmp(gold.end, answer.end, rel_tol)
    # an open interval (a, b) and the pair (a, b): math-verify lets them match
    if isinstance(gold, Interval) and isinstance(answer, Tuple) and gold.is_open:
        gold = Tuple(gold.start, gold.end)
    elif isinstance(answer, Interval) and isinstance(gold, Tuple) and answer.is_open:
        answer = Tuple(answer.start, answer.end)
    g_coll = isinstance(gold, (Tuple, SympyFiniteSet))
    a_coll = isinstance(answer, (Tuple, SympyFiniteSet))
    if g_coll or a_coll:
        g_items = list(gold.args) if g_coll else [gold]
        a_items = list(answer.args) if a_coll else [answer]
        if len(g_items) > MAX_SET or len(a_items) > MAX_SET:
            raise _Undecided
        if len(g_items) != len(a_items):  # a complete answer has the gold's size
            _require_numeric(g_items + a_items)
            return False
        if isinstance(gold, Tuple) and isinstance(answer, Tuple):
            return all(_cmp(g, a, rel_tol) for g, a in zip(g_items, a_items, strict=True))
        if isinstance(gold, Tuple) or isinstance(answer, Tuple):
            raise _Undecided  # a tuple against a set or a scalar: math-verify decides
        return _match_sets(g_items, a_items, rel_tol)
    if isinstance(gold, (sympy.Set, Interval)) or isinstance(answer, (sympy.Set, Interval)):
        raise _Undecided
    if _numeric_scalar(gold) and _numeric_scalar(answer):
        return scalar_equal(gold, answer, rel_tol)
    raise _Undecided


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
    if _divides_by_zero(gold) or _divides_by_zero(answer):
        return False  # `12:00` and `1:00` are both 12/0 and 1/0: never equal
    if gold is None or answer is None:
        return None
    try:
        if _varies_against_number(gold, answer) or _varies_against_number(answer, gold):
            return False
        return bool(_cmp(gold, answer, rel_tol))
    except Exception:  # _Undecided, RecursionError, anything sympy raises: math-verify decides
        return None


def _divides_by_zero(expr: Any) -> bool:
    """Whether an expression is or holds a division by zero (zoo, nan, an unevaluated 1/0)."""
    if expr is None:
        return False
    try:
        if expr.has(sympy.zoo, sympy.nan):
            return True
        return any(p.base == 0 and p.exp.is_negative for p in expr.atoms(sympy.Pow))
    except Exception:
        return False


# Two points where a non-constant side must take clearly different values (positive, so roots
# and logarithms stay real); one value per free symbol, in name order.
_POINTS = ((0.6180339887, 0.1732050807), (1.4142135623, 0.2718281828))


def _varies_against_number(expr: Any, number: Any) -> bool:
    """`expr` has free symbols and takes clearly different values at two points, and `number`
    is a numeric scalar: `expr` is not a constant, so it never equals `number` (`p - q`
    against 7), decided without math-verify's `simplify`."""
    if not isinstance(expr, sympy.Expr) or not expr.free_symbols or not _numeric_scalar(number):
        return False
    if not _small(expr):
        return False
    symbols = sorted(expr.free_symbols, key=lambda s: s.name)
    values = []
    for base, step in _POINTS:
        subs = {s: sympy.Float(base + i * step, EVALF_DIGITS) for i, s in enumerate(symbols)}
        value = expr.evalf(EVALF_DIGITS, subs=subs)
        if not (value.is_number and value.is_extended_real and value.is_finite):
            return False
        values.append(mpmath.mpf(str(value)))
    with mpmath.workdps(EVALF_DIGITS):
        scale = max(abs(values[0]), abs(values[1]), mpmath.mpf(1))
        return bool(abs(values[0] - values[1]) > mpmath.mpf("1e-3") * scale)


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
