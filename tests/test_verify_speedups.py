"""Speed-ups of verification against math-verify itself: wherever the `clearly_unequal`
shortcut decides `incorrect`, math-verify's full `verify` (with its simplify) says not equal
too; memoized number parsing returns what latex2sympy2_extended's own does."""

from __future__ import annotations

import json
import random

import pytest

from llmeval.tasks import DATA_DIR
from llmeval.verify.policy import (
    FLOAT_ROUNDING,
    NUMERIC_PRECISION,
    exact_status,
    parse_answer,
    parse_gold,
    verify,
)
from llmeval.verify.shortcut import _plain, clearly_unequal


def _math_verify(gold: str, answer: str) -> bool:
    import math_verify

    return math_verify.verify(
        parse_gold(gold),
        parse_answer(answer),
        float_rounding=FLOAT_ROUNDING,
        numeric_precision=NUMERIC_PRECISION,
        strict=True,
        allow_set_relation_comp=False,
        timeout_seconds=10,
    )


def _fires(gold: str, answer: str) -> bool:
    return clearly_unequal(parse_gold(gold), parse_answer(answer))


# (gold, answer): pairs the shortcut decides (math-verify must say not equal)
DECIDED = [
    ("3\\sqrt{13}", "11"),
    ("3\\sqrt{13}", "\\frac{7}{2}"),
    ("-\\frac{\\pi}{6}", "-1"),
    ("\\pi", "3.14"),  # 3.14 vs 3.14159...: apart in the 4th digit
    ("\\sqrt{51}", "\\sqrt{50}"),
    ("70 \\sqrt{2}", "98"),
    ("0.15", "0.25"),
    ("1.25", "\\frac{4}{3}"),
    ("p - q", "7"),
    ("x^5 - x^4 + x^3 - x^2 + x - 1", "0"),
    ("-2 + 7i", "5"),  # math-verify reads i as a symbol here
    ("4x+5", "4"),
    ("\\frac{\\sqrt{3}}{2}", "\\frac{1}{2}"),
    ("2^{10}", "1000"),
    ("\\log 2", "1"),
    ("5", "x+1"),
]

# pairs it must leave to math-verify (equal values, percent, symbols, sets, relations, ...)
LEFT = [
    ("3\\sqrt{13}", "\\sqrt{117}"),  # equal values
    ("\\frac{1}{3}", "0.333333"),  # equal after math-verify's rounding
    ("\\pi", "3.14159"),  # too close to call
    ("70 \\sqrt{2}", "99"),  # 98.995: within 1e-4 relative
    ("10", "10\\%"),  # percent: 10% equals 10 to math-verify
    ("0.1", "10\\%"),
    ("e", "e"),  # a symbol named e
    ("\\text{e}", "2.718281828"),
    ("1,-2", "1"),  # a set
    ("\\left( 3, \\frac{\\pi}{2} \\right)", "3"),  # a tuple
    ("x=5", "5"),  # an equation
    ("5", "x=4"),
    ("\\infty", "1000"),
    ("10^{-9}", "0"),  # apart by less than 1e-4
    ("2i+1", "1+2i"),  # both non-constant
    ("\\sin^2 x + \\cos^2 x", "1"),  # constant in disguise: evaluates equal
    ("x - x + 1", "1"),
]


@pytest.mark.parametrize(("gold", "answer"), DECIDED)
def test_decided_pairs_are_unequal_to_math_verify(gold: str, answer: str) -> None:
    assert _fires(gold, answer)
    assert not _math_verify(gold, answer)
    assert verify(gold=gold, answer=answer) == "incorrect"


@pytest.mark.parametrize(("gold", "answer"), LEFT)
def test_doubtful_pairs_are_left_to_math_verify(gold: str, answer: str) -> None:
    assert not _fires(gold, answer)
    expected = "correct" if _math_verify(gold, answer) else "incorrect"
    assert verify(gold=gold, answer=answer) == expected


_ANSWERS = [
    "x", "x+1", "2x", "e", "\\pi", "\\sqrt{2}", "i", "2i+1", "\\infty", "0", "0.0000001",
    "50\\%", "\\frac{\\sqrt{3}}{2}", "-\\frac{\\pi}{6}", "p-q", "x^2", "1.5", "(1,2)", "x=3",
    "\\sin x", "\\log 2", "0.333333", "10^{-9}", "-0", "e^{i\\pi}", "\\sqrt{-1}",
]  # fmt: skip


def _near(gold: list[object]) -> list[str]:
    """Decimals close to the gold's value (rounded to 2-12 places, off by 2e-4, as a percent)."""
    from llmeval.verify.shortcut import _constant

    out = []
    for item in gold:
        value = None if isinstance(item, str) else _constant(item)  # type: ignore[arg-type]
        if value is not None:
            out += [f"{float(value):.{d}f}" for d in (2, 4, 6, 8, 12)]
            out += [repr(float(value) * (1 + 2e-4)), f"{float(value) * 100:.6f}\\%"]
    return out


@pytest.mark.slow
def test_sweep_over_benchmark_golds() -> None:
    """Golds of the math data files against integers, fractions, other golds, near decimals
    and tricky forms: every pair the shortcut decides, math-verify also finds unequal."""
    rng = random.Random(6)
    golds = sorted({json.loads(line)["answer"] for line in (DATA_DIR / "math500.jsonl").open()})
    golds = [str(g) for g in rng.sample(golds, 40)]
    decided = 0
    for gold in golds:
        answers = {gold, str(rng.randint(-5, 100)), f"\\frac{{{rng.randint(1, 9)}}}{{7}}"}
        answers |= set(rng.sample(golds, 3)) | set(rng.sample(_ANSWERS, 5))
        answers |= set(_near(parse_gold(gold)))
        for answer in sorted(answers):
            if exact_status(gold, answer) is not None or not _fires(gold, answer):
                continue
            decided += 1
            assert not _math_verify(gold, answer), (gold, answer)
    assert decided > 100  # the shortcut is not a no-op on real golds


@pytest.mark.parametrize(
    "text",
    ["0", "7", "007", "42", "1,000", "10,000,000", "9" * 50, "9" * 51, "1.5", "0.333333",
     "3.14159265358979323846264338", "042.50", "١٢", "0,5"],
)  # fmt: skip
def test_number_parsing_is_unchanged(text: str) -> None:
    from latex2sympy2_extended import latex2sympy2

    from llmeval.verify.policy import _math_verify

    _math_verify()  # installs the memo
    parse = latex2sympy2._Latex2Sympy.parse_number
    assert hasattr(parse, "original")
    try:
        expected = parse.original(None, text)
    except Exception as exc:  # the same failure, then
        with pytest.raises(type(exc)):
            parse(None, text)
        return
    for _ in range(2):  # computed, then remembered
        got = parse(None, text)
        assert type(got) is type(expected)
        assert got == expected
        assert getattr(got, "_prec", None) == getattr(expected, "_prec", None)


RATIONAL_FORMS = [
    "7", "042", "-7", "- 7", "0", "-0", "10000", "123456789012345678901234567890",
    "\\frac{6}{8}", "\\dfrac{3}{4}", "\\tfrac{1}{2}", "-\\frac{1}{2}", "\\frac {1} {2}",
    "\\frac{0}{5}", "3/4", " 3 / 4 ", "-22/7",
]  # fmt: skip


@pytest.mark.parametrize("answer", RATIONAL_FORMS)
def test_plain_rational_answers_parse_to_their_value(answer: str) -> None:
    """What `profile_status` relies on: math-verify parses the answer to exactly its value,
    and any string it keeps reads as a rational too (so it cannot equal a gold string that
    does not)."""
    from fractions import Fraction

    from sympy import Rational

    from llmeval.verify.policy import looks_rational, rational_value

    value = rational_value(answer)
    assert value is not None
    items = parse_answer(answer)
    assert items
    for item in items:
        if isinstance(item, str):
            assert looks_rational(item.strip())
        else:
            assert isinstance(item, Rational)
            assert Fraction(int(item.p), int(item.q)) == value


@pytest.mark.slow
def test_profile_decisions_are_what_the_worker_decides() -> None:
    """Golds of the data files against plain rationals near and far from their values:
    whenever the parent decides from the profile, the shortcut fires and math-verify agrees."""
    from llmeval.verify.policy import gold_profile, profile_status

    rng = random.Random(9)
    golds = sorted({json.loads(line)["answer"] for line in (DATA_DIR / "math500.jsonl").open()})
    golds = [str(g) for g in rng.sample(golds, 60)] + ["3\\sqrt{13}", "p - q", "52_8", "0.15"]
    golds += ["1,-2", "(1,2)", "[1,2)", "x=5", "a=b=7", "\\text{Evelyn}", "y = 2x + 3"]
    golds += ["x \\le 3", "(-\\infty, 3]", "\\left( 3, \\frac{\\pi}{2} \\right)", "1 < x < 2"]
    decided = 0
    for gold in golds:
        profile = gold_profile(gold)
        if profile is None:
            continue
        answers = {str(rng.randint(-5, 60)), f"\\frac{{{rng.randint(1, 30)}}}{{7}}", "0"}
        for token in profile.split(","):
            if token not in ("varies", "never"):
                value = float(token)
                answers |= {str(round(value)), f"{round(value * 1000)}/1000", str(int(value))}
        for answer in sorted(answers):
            if exact_status(gold, answer) is not None:
                continue
            if profile_status(profile, answer) is None:
                continue
            decided += 1
            if all(isinstance(i, str) or _plain(i) for i in parse_gold(gold)):
                assert _fires(gold, answer), (gold, answer)  # plain golds: the shortcut's rules
            assert not _math_verify(gold, answer), (gold, answer)
    assert decided > 30


def test_profiles_of_typical_golds() -> None:
    from llmeval.verify.policy import gold_profile, profile_status

    assert gold_profile("p - q") == "varies"
    assert gold_profile("3\\sqrt{13}").startswith("10.81665382")
    for gold in ("\\infty", "\\{5\\}", "10\\%", "\\text{12}"):
        assert gold_profile(gold) is None, gold
    for gold in ("(1,2)", "\\text{Evelyn}", "1,-2", "x \\le 3", "(-\\infty, 3]"):
        assert gold_profile(gold) == "never", gold
    assert gold_profile("x=5") == "5." + "0" * 29  # an assignment by its right side
    assert gold_profile("y = 2x + 3") == "varies"
    assert profile_status("10.8166538263919678793576638024", "11") == "incorrect"
    assert profile_status("10.8166538263919678793576638024", "10.8166") is None  # not rational
    assert profile_status("0.149999999999999994448884876874", "3/20") is None  # equal value
    assert profile_status("varies", "7") == "incorrect"
    assert profile_status("varies", "x") is None
