"""The verification policies over math-verify; the verifier id (versions + policy) keys the cache.

The only home of math-verify, latex2sympy2_extended and sympy. They are imported lazily, as
are the rules of `gold.py` and `answer.py`, so a fully cached eval never pays for them. Model
text reaches nothing but `math_verify.parse`.

- strict: the final boxed answer, normalised (`answer.py`), against the normalised gold
  (`gold.py`): shaped golds (times, letters, words, sets, orderings) by `shapes.py`, lists
  part by part (`lists.py`), numbers exactly, at 50 digits, or within a relative 1e-6 where an
  integer or a decimal took part (`numbers.py`), anything else by `math_verify.verify`
  (equations made comparable by `equations.py`); an answer past its gold's size bound only as
  a constant (`work.py`).
- lenient: the same, and a plain decimal approximating a numeric gold passes (`lenient.py`);
  a finished unboxed output is read after a final-answer anchor, else by its last number
  (`evaluate.policy_answers.read_answers`).
"""

from __future__ import annotations

import logging
import re
from fractions import Fraction
from functools import lru_cache
from importlib import metadata
from typing import Any, Literal

from llmeval.records import Verdict, VerdictStatus, cache_key
from llmeval.tasks import AnswerKind
from llmeval.verify.work import TOO_LONG, constant, within

Policy = Literal["strict", "lenient"]
POLICIES: tuple[Policy, ...] = ("strict", "lenient")
# Bump when anything below changes a verdict: every cached verdict of that policy then misses.
POLICY_IDS = {"strict": "strict-last-box-v8", "lenient": "lenient-anchor-approx-v7"}
GOLD_UNPARSED = "gold unparsed"
# math-verify's comparison options, fixed (its defaults, written out so they cannot drift).
FLOAT_ROUNDING = 6
NUMERIC_PRECISION = 15
_VERSIONED = ("math-verify", "latex2sympy2_extended", "sympy", "antlr4-python3-runtime")
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


@lru_cache(maxsize=4)
def verifier_id(kind: AnswerKind = "math", policy: Policy = "strict") -> str:
    """What decides a verdict: library versions and policy (choice letters need no library)."""
    if kind == "choice":
        return f"choice-letter-v1 policy={POLICY_IDS[policy]}"
    versions = " ".join(f"{dist}=={_version(dist)}" for dist in _VERSIONED)
    return f"{versions} policy={POLICY_IDS[policy]}"


@lru_cache(maxsize=1)
def _known_ids() -> tuple[frozenset[str], dict[str, str]]:
    """The verifier ids of this version, and {id: policy id} of each policy's earlier versions
    under these libraries (what an older llmeval wrote without recording its id)."""
    current = frozenset(verifier_id(k, p) for k in ("math", "choice") for p in POLICIES)
    older = {}
    for policy, name in POLICY_IDS.items():
        family, _, version = name.rpartition("-v")
        for k in range(1, int(version)):
            older[verifier_id("math", policy).replace(name, f"{family}-v{k}")] = f"{family}-v{k}"
    return current, older


def stale_verifier(verdict: Verdict) -> str | None:
    """What made a cached verdict when that is provably not this verifier: a policy id
    (`strict-last-box-v4`), or the libraries where only they differ; None for this verifier's
    verdicts, the judge's, and those whose maker cannot be told (kept)."""
    current, older = _known_ids()
    made_by = verdict.verifier
    if made_by is not None:
        if made_by in current or made_by.startswith("judge"):
            return None
        versions, _, policy = made_by.partition(" policy=")
        return policy if policy and policy not in POLICY_IDS.values() else versions
    if verdict.pred is None or verdict.gold is None:
        return None
    for made in (*(verifier_id("math", p) for p in POLICIES), *older):
        if cache_key(made, "math", verdict.gold, verdict.pred) == verdict.key:
            return older.get(made)
    return None


def verdict_key(kind: str, gold: str, answer: str, policy: Policy = "strict") -> str:
    """The cache key of one (gold, extracted answer) pair under the current verifier."""
    return cache_key(verifier_id(kind, policy), kind, gold, answer)


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


def quick_status(kind: str, gold: str, answer: str) -> VerdictStatus | None:
    """A pair's status when known without the verifier (letters, exact rationals), else None."""
    return choice_status(gold, answer) if kind == "choice" else exact_status(gold, answer)


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
    """The gold answer normalised (`gold.py`) and parsed once: as LaTeX, else as a plain
    expression (whose parser is Python's `eval`: trusted text only) when that reads the whole
    gold, never a number picked out of it; [] when empty or unreadable."""
    from llmeval.verify.gold import normalize_gold

    latex = normalize_gold(gold)
    if latex is None:
        return []
    mv = _math_verify()
    parsed = mv.parse(latex, [mv.LatexExtractionConfig()], parsing_timeout=None)
    if len(parsed) > 1:  # [expression, text]; [text] alone: LaTeX it could not read
        return parsed
    plain = mv.parse(latex, [mv.ExprExtractionConfig()], parsing_timeout=None)
    whole = "".join(latex.strip("$").split())
    return plain if plain and "".join(str(plain[-1]).split()) == whole else []


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


def verify(
    *, gold: str, answer: str, kind: AnswerKind = "math"
) -> tuple[VerdictStatus, VerdictStatus | None, str | None]:
    """(strict status, lenient status where it differs, detail) of an extracted answer against
    the gold; no time limit of its own (math-verify's alarms are off): call it where the
    caller enforces a deadline."""
    quick = quick_status(kind, gold, answer)
    if quick is not None:
        return quick, None, None
    from llmeval.verify.answer import normalize_answer
    from llmeval.verify.gold import normalize_gold
    from llmeval.verify.lenient import approx_equal
    from llmeval.verify.lists import list_status
    from llmeval.verify.numbers import first_expr
    from llmeval.verify.shapes import shape_status
    from llmeval.verify.typeset import same_text

    if same_text(gold, answer):  # reflexive by construction (the parse only names the gold)
        return "correct", None, None if parse_gold(gold) else GOLD_UNPARSED
    shaped = shape_status(gold, answer, _same)  # read on the text: times, letters, words, ...
    if shaped is not None:
        return shaped, None, None
    gold_parsed = parse_gold(gold)
    if not gold_parsed:  # counted and named by eval; never silently wrong
        return "incorrect", None, GOLD_UNPARSED
    gold_latex, normalized = normalize_gold(gold) or "", normalize_answer(answer, gold)
    full = within(normalized, gold_latex)  # else only a constant, by value (`work.py`)
    if not full and not (constant(normalized) and constant(gold_latex)):
        return "incorrect", None, TOO_LONG
    listed = list_status(gold_latex, normalized, _same)
    if listed is not None:
        return listed, None, None
    matched = _equal(gold_parsed, parse_answer(normalized), full)
    if matched is None:
        return "incorrect", None, TOO_LONG
    if matched:
        return "correct", None, None
    gold_value = first_expr(gold_parsed)
    lenient = gold_value is not None and approx_equal(gold_value, gold_latex, normalized)
    return "incorrect", ("correct" if lenient else None), None


def _same(gold: str, answer: str) -> bool:
    """Whether one part of an answer equals one part of the gold (strictly)."""
    return verify(gold=gold, answer=answer)[0] == "correct"


def _equal(gold_parsed: list[Any], answer_parsed: list[Any], full: bool = True) -> bool | None:
    """Parsed gold and answer compared: numbers by `numbers.compare`, the rest (when `full`:
    the answer is within its bound) by math-verify, equations made comparable first
    (`equations.py`); None when not `full` and not numbers."""
    from llmeval.verify.equations import prepare
    from llmeval.verify.numbers import compare

    gold_parsed, answer_parsed = prepare(gold_parsed, answer_parsed)
    matched = compare(gold_parsed, answer_parsed)
    if matched is None and full:
        matched = _math_verify().verify(
            gold_parsed,
            answer_parsed,
            float_rounding=FLOAT_ROUNDING,
            numeric_precision=NUMERIC_PRECISION,
            strict=True,
            allow_set_relation_comp=False,
            timeout_seconds=None,
        )
    return None if matched is None else bool(matched)


_WARM_PAIRS = (
    ("\\frac{1}{2}", "x+1"),
    ("(1,2)", "[1,2]"),
    ("-8,1", "1,-8"),
    ("x=5", "5"),
    ("\\sqrt{2}", "1.414"),
    ("10", "10\\%"),
    ("\\text{Evelyn}", "Evelyn"),
)


@lru_cache(maxsize=1)
def warm_up() -> None:
    """Run a few verifications so sympy's lazily loaded parts are in memory (once per process);
    done in the forkserver, every worker forked from it starts warm."""
    for gold, answer in _WARM_PAIRS:
        verify(gold=gold, answer=answer)
    from llmeval.verify.answer import normalize_answer

    normalize_answer("2.45e6 \\text{ cm}", "2")
