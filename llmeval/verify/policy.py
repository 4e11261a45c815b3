"""math-verify behind one fixed, strict policy; the verifier id (versions + policy) keys the cache.

The only home of math-verify, latex2sympy2_extended and sympy. They are imported lazily, so
a fully cached eval never pays for them. Model text reaches nothing but `math_verify.parse`.
"""

from __future__ import annotations

import hashlib
import logging
import re
from fractions import Fraction
from functools import lru_cache
from importlib import metadata
from typing import Any, Literal

from llmeval.records import VerdictStatus

AnswerKind = Literal["math", "choice"]

# Bump when anything below changes a verdict: every cached verdict then misses.
POLICY = "strict-last-box-v1"
# math-verify's comparison options, fixed (its defaults, written out so they cannot drift).
FLOAT_ROUNDING = 6
NUMERIC_PRECISION = 15
_VERSIONED = ("math-verify", "latex2sympy2_extended", "sympy", "antlr4-python3-runtime")
_SCIENTIFIC = re.compile(r"^\s*(-?\d+(?:\.\d+)?)[eE]([+-]?\d+)\s*$")
# Integers and fractions of integers: decided exactly without math-verify (same verdicts).
_INT = r"\d{1,60}"
_RATIONAL = re.compile(
    rf"^\s*(-)?\s*(?:({_INT})|\\[dt]?frac\s*\{{\s*({_INT})\s*\}}\s*\{{\s*({_INT})\s*\}}"
    rf"|({_INT})\s*/\s*({_INT}))\s*$"
)


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "missing"


@lru_cache(maxsize=2)
def verifier_id(kind: AnswerKind = "math") -> str:
    """What decides a verdict: library versions and policy (choice letters need no library)."""
    if kind == "choice":
        return f"choice-letter-v1 policy={POLICY}"
    versions = " ".join(f"{dist}=={_version(dist)}" for dist in _VERSIONED)
    return f"{versions} policy={POLICY}"


def verdict_key(kind: AnswerKind, gold: str, answer: str) -> str:
    """The cache key of one (gold, extracted answer) pair under the current verifier."""
    parts = (verifier_id(kind), kind, gold, answer)
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:32]


def gold_latex(gold: str) -> str:
    """The gold answer put inside a math span, as `parse` needs it (bare strings mis-parse:
    `4x+5` -> 4); `4.5e33` becomes `4.5 \\times 10^{33}` (else it reads 4.5*e*33)."""
    text = gold.strip()
    sci = _SCIENTIFIC.match(text)
    if sci:
        text = f"{sci.group(1)} \\times 10^{{{sci.group(2)}}}"
    if "$" in text or "\\boxed" in text:
        return text
    return "$" + text.replace("\n", " ") + "$"


@lru_cache(maxsize=8192)
def rational_value(text: str) -> Fraction | None:
    """The value of an integer or integer fraction (`-42`, `042`, `\\frac{3}{4}`, `3/4`)."""
    match = _RATIONAL.match(text)
    if match is None:
        return None
    sign, whole, num, den, snum, sden = match.groups()
    if whole is not None:
        value = Fraction(int(whole))
    else:
        numerator, denominator = int(num or snum), int(den or sden)
        if denominator == 0:
            return None
        value = Fraction(numerator, denominator)
    return -value if sign else value


def exact_status(gold: str, answer: str) -> VerdictStatus | None:
    """The verdict of a pair of plain rationals by exact arithmetic; None for anything else.

    Agrees with math-verify on these forms (tested) at a thousandth of its cost.
    """
    gold_value = rational_value(gold)
    if gold_value is None:
        return None
    answer_value = rational_value(answer)
    if answer_value is None:
        return None
    return "correct" if gold_value == answer_value else "incorrect"


def choice_status(gold: str, letter: str) -> VerdictStatus:
    """A multiple-choice verdict: the single extracted letter equals the gold letter."""
    return "correct" if letter == gold.strip().strip("()").upper() else "incorrect"


@lru_cache(maxsize=1)
def _math_verify() -> Any:
    """Import math-verify once, with its logger silenced (it logs whole predictions)."""
    logging.getLogger("math_verify").setLevel(logging.CRITICAL + 1)
    logging.getLogger("latex2sympy2_extended").setLevel(logging.CRITICAL + 1)
    import math_verify

    return math_verify


@lru_cache(maxsize=4096)
def parse_gold(gold: str) -> list[Any]:
    """The gold answer parsed once (LaTeX, then plain expressions); trusted text only."""
    mv = _math_verify()
    configs = [mv.LatexExtractionConfig(), mv.ExprExtractionConfig()]
    return mv.parse(gold_latex(gold), configs, parsing_timeout=None)


def parse_answer(answer: str) -> list[Any]:
    """An extracted answer parsed as a boxed LaTeX expression: no anchors, no number fallback,
    never the plain-expression parser (whose `parse_expr` is Python `eval`). Short answers
    (almost all) are cached; long ones are not, so a worker's memory stays flat."""
    if len(answer) <= _CACHED_ANSWER_CHARS:
        return _parse_answer_cached(answer)
    return _parse_answer(answer)


_CACHED_ANSWER_CHARS = 200


@lru_cache(maxsize=2048)
def _parse_answer_cached(answer: str) -> list[Any]:
    return _parse_answer(answer)


def _parse_answer(answer: str) -> list[Any]:
    mv = _math_verify()
    config = mv.LatexExtractionConfig(boxed_match_priority=0, try_extract_without_anchor=False)
    return mv.parse("\\boxed{" + answer + "}", [config], parsing_timeout=None)


def verify(*, gold: str, answer: str, kind: AnswerKind = "math") -> VerdictStatus:
    """Whether the extracted `answer` matches `gold`, gold first; no time limit of its own
    (math-verify's alarms are disabled): call it where the caller enforces a deadline."""
    if kind == "choice":
        return choice_status(gold, answer)
    exact = exact_status(gold, answer)
    if exact is not None:
        return exact
    gold_parsed, answer_parsed = parse_gold(gold), parse_answer(answer)
    matched = _math_verify().verify(
        gold_parsed,
        answer_parsed,
        float_rounding=FLOAT_ROUNDING,
        numeric_precision=NUMERIC_PRECISION,
        strict=True,
        allow_set_relation_comp=False,
        timeout_seconds=None,
    )
    return "correct" if matched else "incorrect"


_WARM_PAIRS = (
    ("\\frac{1}{2}", "x+1"),
    ("(1,2)", "[1,2]"),
    ("-8,1", "1,-8"),
    ("x=5", "5"),
    ("\\sqrt{2}", "1.414"),
    ("10", "10\\%"),
    ("\\text{Evelyn}", "Evelyn"),
)
_warm = False


def warm_up() -> None:
    """Run a few verifications so sympy's lazily loaded parts are in memory (once per process);
    done in the forkserver, every worker forked from it starts warm."""
    global _warm
    if _warm:
        return
    for gold, answer in _WARM_PAIRS:
        verify(gold=gold, answer=answer)
    _warm = True
