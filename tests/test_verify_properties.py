"""Properties of the verifier on public material (issue 29.2).

- Every gold string of other graders' test suites (`tests/data/public_golds.json`: Math-Verify,
  lighteval, MARIO_EVAL, NeMo-Skills, SkyThought; repository, path and commit of each), boxed
  verbatim at the end of an output, is correct under both policies.
- LaTeX built by hypothesis from numbers, fractions, roots, `\\pm`, powers, lists, intervals,
  tuples and assignments is correct against itself (reflexive); against another spelling of
  its value the verdict is correct and the same whichever side is the gold (symmetric); with
  one of its numbers changed it is refused, under both policies, either side the gold.

Hypothesis runs derandomized (the same examples on every run) with no deadline and a modest
number of examples, so the fast suite stays fast and CI deterministic.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llmeval.verify.verifier import verify
from tests.test_verify_table import judge

SOURCES = json.loads((Path(__file__).parent / "data" / "public_golds.json").read_text())["sources"]
PROPERTY = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: f"{s['repo']}:{s['path']}")
def test_public_golds_boxed_verbatim_are_correct(source: dict) -> None:
    wrong = []
    for gold in source["golds"]:
        gen = "<think>\nworking\n</think>\n\nSo the final answer is $\\boxed{" + gold + "}$."
        got = judge(gold, gen), judge(gold, gen, policy="lenient")
        if got != ("correct", "correct"):
            wrong.append((gold, got))
    assert wrong == [], f"{source['repo']} {source['path']}@{source['commit'][:10]}"


# ---------------------------------------------------------------------------------------
# LaTeX from numbers: each strategy gives (text, another spelling of its value, value)

Value = tuple[str, str, Fraction | float]


@st.composite
def atoms(draw: st.DrawFn) -> Value:
    """An integer, a fraction, a decimal, a root or a power, possibly negative."""
    kind = draw(st.sampled_from(("int", "frac", "decimal", "root", "power", "root/q")))
    if kind == "int":
        n = draw(st.integers(1, 999))
        text, other, value = str(n), draw(st.sampled_from((f"{n}.0", f"\\frac{{{2 * n}}}{{2}}"))), n
    elif kind == "frac":
        q = draw(st.integers(2, 12))
        p = draw(st.integers(1, 60).filter(lambda p: p % q))
        other = draw(st.sampled_from((f"{p}/{q}", f"\\dfrac{{{2 * p}}}{{{2 * q}}}")))
        text, value = f"\\frac{{{p}}}{{{q}}}", Fraction(p, q)
    elif kind == "decimal":  # at most 50.00: a changed hundredth is 2e-4 away, beyond lenient's
        n = draw(st.integers(1, 5000).filter(lambda n: n % 10))
        text, other, value = f"{n / 100:.2f}", f"\\frac{{{n}}}{{100}}", Fraction(n, 100)
    elif kind == "root":
        k, n = draw(st.integers(1, 9)), draw(st.sampled_from((2, 3, 5, 6, 7, 10)))
        text, other, value = f"{k}\\sqrt{{{n}}}", f"\\sqrt{{{k * k * n}}}", k * n**0.5
    elif kind == "root/q":
        n, q = draw(st.sampled_from((2, 3, 5, 6, 7, 10))), draw(st.integers(2, 9))
        text, other, value = f"\\frac{{\\sqrt{{{n}}}}}{{{q}}}", f"\\sqrt{{{n}}}/{q}", n**0.5 / q
    else:
        a, b = draw(st.integers(2, 9)), draw(st.integers(2, 4))
        text, other, value = f"{a}^{{{b}}}", str(a**b), a**b
    if draw(st.booleans()):
        return f"-{text}", f"-{other}", -value
    return text, other, value


@st.composite
def expressions(draw: st.DrawFn) -> tuple[str, str]:
    """(gold text, another spelling of the same value) of one shape."""
    shapes = ("atom", "pm", "list", "set", "interval", "tuple", "matrix", "assignment")
    shape = draw(st.sampled_from(shapes))
    a, b = draw(atoms()), draw(atoms())
    if shape == "atom":
        return a[0], a[1]
    if shape == "pm":
        b = (b[0].lstrip("-"), b[1].lstrip("-"), b[2])
        return f"{a[0]} \\pm {b[0]}", f"{a[1]} \\pm {b[1]}"
    if shape == "list":
        return f"{a[0]}, {b[0]}", f"{b[1]}, {a[1]}"
    if shape == "set":
        return f"\\{{{a[0]}, {b[0]}\\}}", f"\\{{{b[1]}, {a[1]}\\}}"
    if shape == "matrix":
        return (
            f"\\begin{{pmatrix}} {a[0]} \\\\ {b[0]} \\end{{pmatrix}}",
            f"\\begin{{bmatrix}} {a[1]} \\\\ {b[1]} \\end{{bmatrix}}",
        )
    if shape == "tuple":
        return f"({a[0]}, {b[0]})", f"\\left({a[1]}, {b[1]}\\right)"
    if shape == "assignment":
        return f"x = {a[0]}", draw(st.sampled_from((f"x={a[1]}", a[1])))
    low, high = sorted((a, b), key=lambda v: v[2])
    if low[2] == high[2]:
        return low[0], low[1]
    left, right = draw(st.sampled_from("[(")), draw(st.sampled_from("])"))
    return f"{left}{low[0]}, {high[0]}{right}", f"\\left{left}{low[1]}, {high[1]}\\right{right}"


@st.composite
def unparsed(draw: st.DrawFn) -> tuple[str, str]:
    """A `\\pm` inside a fraction (no parser reads it), as a `$`-delimited gold and as boxed."""
    a, n, q = (
        draw(st.integers(-9, 9)),
        draw(st.sampled_from((2, 3, 5, 13))),
        draw(st.integers(2, 9)),
    )
    text = f"x = \\frac{{{a} \\pm \\sqrt{{{n}}}}}{{{q}}}"
    return f"${text}$", text


def perturbed(text: str, data: st.DataObject) -> str:
    """`text` with one of its numbers replaced by a larger one."""
    runs = list(re.finditer(r"\d+", text))
    run = data.draw(st.sampled_from(runs))
    bigger = int(run.group()) + data.draw(st.integers(1, 9))
    return text[: run.start()] + str(bigger) + text[run.end() :]


def both(gold: str, answer: str) -> tuple[str, str]:
    """(strict, lenient) verdicts of an extracted answer."""
    strict, lenient, _ = verify(gold=gold, answer=answer)
    return strict, lenient or strict


@PROPERTY
@given(st.one_of(expressions(), unparsed()))
def test_an_answer_that_is_its_gold_is_correct(pair: tuple[str, str]) -> None:
    gold = pair[0]
    gen = "<think>\nworking\n</think>\n\nThe answer is $\\boxed{" + gold.strip("$") + "}$."
    assert (judge(gold, gen), judge(gold, gen, policy="lenient")) == ("correct", "correct")
    assert both(gold, gold) == ("correct", "correct")


@PROPERTY
@given(expressions())
def test_another_spelling_is_correct_whichever_side_is_the_gold(pair: tuple[str, str]) -> None:
    gold, other = pair
    assert both(gold, other) == both(other, gold) == ("correct", "correct")


@PROPERTY
@given(st.one_of(expressions(), unparsed()), st.data())
def test_another_number_is_refused_whichever_side_is_the_gold(
    pair: tuple[str, str], data: st.DataObject
) -> None:
    gold = pair[0]
    wrong = perturbed(gold, data)
    assert both(gold, wrong) == ("incorrect", "incorrect")
    if not gold.startswith("$"):  # a value: the same verdict with the sides swapped
        assert both(wrong, gold) == ("incorrect", "incorrect")
