"""Expressions made comparable before math-verify sees them: a derivative (`\\frac{dM}{dt}`) is a
name, never the derivative of a constant (0, which made `dM/dt = anything` equal); two
equations naming their function or dependent variable differently (`f(x) = 2x+3`, `y = 2x+3`)
compare by their right-hand sides; `i` is the imaginary unit; where a side holds a root or a
fractional power of symbols, the symbols are positive (physical quantities)."""

from __future__ import annotations

from typing import Any

from sympy import Derivative, Eq, Float, I, Pow, Rational, Symbol
from sympy.core.function import AppliedUndef

from llmeval.verify.numbers import first_expr


def _frozen(expr: Any) -> Any:
    """`expr` with each derivative replaced by a symbol named after it (`dm/dt`)."""
    derivatives = expr.atoms(Derivative)
    if not derivatives:
        return expr
    names = {d: Symbol(f"d{d.expr}/d{''.join(str(v) for v in d.variables)}") for d in derivatives}
    return expr.xreplace(names)


def _names_function(lhs: Any) -> bool:
    return isinstance(lhs, AppliedUndef) and all(isinstance(a, Symbol) for a in lhs.args)


def _rhs_pair(gold: Any, answer: Any) -> tuple[Any, Any]:
    """Right-hand sides of two equations whose left sides name the same variable or function,
    or name it differently where one is a function (`f(x)`, `y`); else the pair unchanged
    (`x = 1` against `y = 1` stays math-verify's: two different unknowns)."""
    if not (isinstance(gold, Eq) and isinstance(answer, Eq)):
        return gold, answer
    return (gold.rhs, answer.rhs) if _same_name(gold.lhs, answer.lhs) else (gold, answer)


def _same_name(gold: Any, answer: Any) -> bool:
    """Whether two left sides name one thing: equal, or a function (`f(x)`) and a dependent
    variable (`y`, not its argument `x`), or a function renamed with the same arguments (`g(x)`);
    a derivative (`f'(x)`, a name with a prime) is never its function."""
    sides = (gold, answer)
    if gold == answer:
        return True
    if not all(isinstance(s, Symbol) or _names_function(s) for s in sides):
        return False
    functions = [s for s in sides if _names_function(s)]
    if not functions or any("prime" in str(s.func if _names_function(s) else s) for s in sides):
        return False
    if len(functions) == 2:
        return bool(gold.args == answer.args)
    variable = answer if functions[0] is gold else gold
    return variable not in functions[0].args


def _told(expr: Any, positive: bool) -> Any:
    """`expr` with what sympy must be told: `i` is the imaginary unit (`i(2-i)` is 1+2i); with
    `positive`, every symbol is positive and a decimal exponent a fraction (`(a/b)^{0.5}` is
    `\\sqrt{a}/\\sqrt{b}`)."""
    names = {s: I if s.name == "i" else Symbol(s.name, positive=True) for s in expr.free_symbols}
    expr = expr.xreplace({s: new for s, new in names.items() if positive or new is I})
    if not positive:
        return expr
    return expr.replace(
        lambda e: isinstance(e, Pow) and isinstance(e.exp, Float),
        lambda e: Pow(e.base, Rational(str(e.exp))),
    )


def _fractional(expr: Any) -> bool:
    """Whether `expr` has a root or a fractional power of an expression of symbols."""
    return any(
        p.base.free_symbols and not p.exp.is_integer for p in expr.atoms(Pow) if p.exp.is_number
    )


def prepare(gold_parsed: list[Any], answer_parsed: list[Any]) -> tuple[list[Any], list[Any]]:
    """The parse results with their expressions made comparable (see the module docstring)."""
    gold, answer = first_expr(gold_parsed), first_expr(answer_parsed)
    if gold is None or answer is None:
        return gold_parsed, answer_parsed
    try:
        new_gold, new_answer = _rhs_pair(_frozen(gold), _frozen(answer))
        positive = _fractional(new_gold) or _fractional(new_answer)
        new_gold, new_answer = _told(new_gold, positive), _told(new_answer, positive)
    except Exception:  # anything sympy raises: compared as parsed
        return gold_parsed, answer_parsed
    return (
        [new_gold if x is gold else x for x in gold_parsed],
        [new_answer if x is answer else x for x in answer_parsed],
    )
