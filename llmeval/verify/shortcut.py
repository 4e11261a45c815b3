"""Exact speed-ups of verification: pairs math-verify cannot call equal decided `incorrect`
without its costly `simplify`, gold profiles for the parent, memoized number parsing.

Works on math-verify's own parse results (never on strings); part of verify.py's home for
sympy. `clearly_unequal` says why each rule matches math-verify 0.9.0's `verify`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sympy import Expr, Float, Symbol, UnevaluatedExpr
from sympy.matrices import MatrixBase
from sympy.matrices.expressions import MatrixExpr

_DIGITS = 30
# Values count as different only when they differ in the 4th significant digit (and by more
# than 1e-4 near zero): far beyond math-verify's 6-decimal rounding and chop tolerances.
_SEPARATION = 1e-4
# Two points at which a non-constant side must take clearly different values (positive, so
# roots and logarithms stay real); one value per free symbol, in name order.
_POINTS = ((0.6180339887, 0.1732050807), (1.4142135623, 0.2718281828))


def _plain(expr: Any) -> bool:
    """A scalar expression with no percent, matrix or lone symbol (math-verify treats those
    specially: `9\\%` equals 9, a symbol named e equals E, symbols compare by name)."""
    return (
        isinstance(expr, Expr)
        and not isinstance(expr, (MatrixExpr, Symbol))
        and not isinstance(expr, MatrixBase)
        and not expr.has(UnevaluatedExpr)
    )


def _real(value: Any) -> Float | None:
    """`value` as a Float if it is a finite real number (evalf gives Zero for 0), else None."""
    if getattr(value, "is_Number", False) and value.is_finite and value.is_extended_real:
        return Float(value, _DIGITS)
    return None


def _constant(expr: Expr) -> Float | None:
    """The value of a constant expression to 30 digits, or None (symbols, complex, unsure)."""
    if expr.free_symbols:
        return None
    try:
        return _real(expr.evalf(_DIGITS, strict=True))
    except Exception:  # precision exhausted, unevaluable: no shortcut
        return None


def _apart(a: Float, b: Float) -> bool:
    scale = max(Float(1), abs(a), abs(b))
    return bool(abs(a - b) > _SEPARATION * scale)


def _varies(expr: Expr) -> bool:
    """Whether `expr` has free symbols and clearly different values at two points: then it
    is not a constant, so no correct simplification of (it - constant) is zero."""
    symbols = sorted(expr.free_symbols, key=lambda s: s.name)
    if not symbols:
        return False
    values = []
    for base, step in _POINTS:
        subs = {s: Float(base + i * step, _DIGITS) for i, s in enumerate(symbols)}
        try:
            value = _real(expr.evalf(_DIGITS, subs=subs, strict=True))
        except Exception:
            return False
        if value is None:
            return False
        values.append(value)
    return _apart(values[0], values[1])


def _pair_unequal(gold: Expr, pred: Expr) -> bool:
    """One side a finite real constant; the other a clearly different constant, or clearly
    not constant."""
    gold_value, pred_value = _constant(gold), _constant(pred)
    if gold_value is not None and pred_value is not None:
        return _apart(gold_value, pred_value)
    if gold_value is not None:
        return _varies(pred)
    if pred_value is not None:
        return _varies(gold)
    return False


def clearly_unequal(gold: list[Any], pred: list[Any]) -> bool:
    """True only when `math_verify.verify(gold, pred)` (strict, float_rounding 6) is False.

    math-verify is True if any (gold item, pred item) pair matches: two strings match when
    equal after strip; a string never matches an expression; two expressions match by
    structure, by value (rounded to 6 decimals, or `evalf(chop=True)` of the difference
    is 0), or when `simplify(gold - pred)` is zero. For plain scalars (no relation, set,
    tuple, matrix, lone symbol or percent) whose values are far apart, or a constant against
    an expression that takes clearly different values at two points, none of these can hold.
    """
    if not gold or not pred:
        return False
    gold_exprs, pred_exprs = [], []
    for items, exprs in ((gold, gold_exprs), (pred, pred_exprs)):
        for item in items:
            if isinstance(item, str):
                continue
            if not _plain(item):
                return False
            exprs.append(item)
    gold_strs = {g.strip() for g in gold if isinstance(g, str)}
    if any(isinstance(p, str) and p.strip() in gold_strs for p in pred):
        return False
    return all(_pair_unequal(g, p) for g in gold_exprs for p in pred_exprs)


def profile(gold: list[Any], looks_rational: Callable[[str], bool]) -> str | None:
    """What lets the parent judge a plain rational answer against this gold without sympy:
    per expression item its value to 30 digits, `varies`, or `never`, comma-separated. None
    when an item is undecidable, when a string item reads as a rational (it might equal the
    answer's string), or when there is no expression item."""
    tokens = []
    for item in gold:
        if isinstance(item, str):
            if looks_rational(item.strip()):
                return None
            continue
        token = _token(item, looks_rational)
        if token is None:
            return None
        tokens.append(token)
    return ",".join(tokens) or None


def _token(item: Any, looks_rational: Callable[[str], bool]) -> str | None:
    """How a gold item compares with any plain rational answer q, following math-verify
    0.9.0's `sympy_expr_eq(gold, q)` (tested against it):
    - an assignment `x = ... = rhs` is compared by its last right side;
    - any other relation: `doit(gold) == q` and `simplify(gold - q)` (an error) are False;
    - a finite set or tuple of 2+ elements, or a proper interval: compared as sets with {q},
      sizes or members differ;
    - a lone symbol: `str(gold) == str(q)`, never unless its name reads as a rational;
    - a plain scalar: its value, or `varies` (see `clearly_unequal`)."""
    from math_verify.grader import is_assignment_relation, is_relation, take_last_relation
    from sympy import FiniteSet, Interval, Tuple

    if is_relation(item):
        if is_assignment_relation(item):
            return _token(take_last_relation(item).rhs, looks_rational)
        return NEVER
    if isinstance(item, (FiniteSet, Tuple)):
        return NEVER if len(item.args) >= 2 else None
    if isinstance(item, Interval):
        try:
            return NEVER if bool(item.start < item.end) else None
        except TypeError:
            return None
    if isinstance(item, Symbol):
        return None if looks_rational(str(item)) else NEVER
    if not _plain(item):
        return None
    value = _constant(item)
    if value is not None:
        return str(value)
    return VARIES if _varies(item) else None


NEVER = "never"
VARIES = "varies"


def memoize_number_parsing() -> None:
    """latex2sympy2_extended turns every number token into `sympy.Number(text)`, which runs
    sympy's expression parser (about 3 ms, most of a short answer's parse). Give plain digit
    strings `Integer` directly (what that parser returns for them) and remember the rest.
    Results are identical (tested on latex2sympy2_extended 1.11.0)."""
    from latex2sympy2_extended import latex2sympy2
    from sympy import Integer

    cls = latex2sympy2._Latex2Sympy
    original = getattr(cls.parse_number, "original", cls.parse_number)
    memo: dict[str, Any] = {}

    def parse_number(self: Any, text: str) -> Any:
        value = memo.get(text)
        if value is None:
            plain = text.replace(",", "")
            if plain.isascii() and plain.isdigit() and len(plain) <= 50:
                value = Integer(int(plain))
            else:
                value = original(self, text)
            if len(memo) < 4096:
                memo[text] = value
        return value

    parse_number.original = original  # type: ignore[attr-defined]
    cls.parse_number = parse_number
