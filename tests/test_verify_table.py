"""The verification table, in the Math-Verify style: (gold, model output, expected status).

Every row goes through the real path: extraction, then the verifier under a policy (strict
unless the row says). Every real mis-grade found later becomes a row here; the rows of the
gold and answer forms and of the lenient policy are in test_verdict_semantics.py.
"""

from __future__ import annotations

import json
import random

import pytest

from llmeval.evaluate.policy_answers import read_answers
from llmeval.tasks import DATA_DIR
from llmeval.verify.pool import VerifyPool, VerifyResult, VerifyTask
from llmeval.verify.verifier import exact_status, parse_gold, verifier_id, verify
from llmeval.verify.work import TOO_LONG
from tests.support.synthetic import reasoning

THINK = "<think>\n" + reasoning(4000, random.Random(7)) + "\n</think>\n\n"


def judge(
    gold: str, gen: str, kind: str = "math", policy: str = "strict", problem: str | None = None
) -> str:
    """What eval decides for one finished output (no cache, no pool: these rows are fast)."""
    pred, lenient_answer = read_answers(kind, (gen, None, False), False, gold, problem)
    answer = pred if policy == "strict" or lenient_answer is None else lenient_answer
    if answer is None:
        return "no_answer"
    strict, lenient, _ = verify(gold=gold, answer=answer, kind=kind)  # type: ignore[arg-type]
    return (lenient or strict) if policy == "lenient" else strict


MATH_ROWS = [
    # the plain case, with long reasoning before
    ("42", THINK + "So the answer is $\\boxed{42}$.", "correct"),
    ("42", THINK + "So the answer is $\\boxed{41}$.", "incorrect"),
    # nested braces, dfrac
    ("\\frac{\\sqrt{3}}{2}", THINK + "$\\boxed{\\dfrac{\\sqrt{3}}{2}}$", "correct"),
    ("\\frac{14}{3}", THINK + "$\\boxed{14/3}$", "correct"),
    ("\\frac{14}{3}", THINK + "$\\boxed{4.6667}$", "incorrect"),  # lenient: correct
    # several boxes in one span: only the last counts (math-verify alone makes a set)
    ("42", THINK + "$\\boxed{1}$ and so $\\boxed{42}$", "correct"),
    ("1", THINK + "$\\boxed{1}$ and so $\\boxed{42}$", "incorrect"),
    ("2", "\\boxed{\\boxed{2}}", "correct"),
    # boxes inside the reasoning never count
    ("7", "<think>\nmaybe \\boxed{7}\n</think>\nFinal: \\boxed{8}", "incorrect"),
    ("7", "<think>\nmaybe \\boxed{7}, let me check the case n = 3 again", "no_answer"),
    ("7", THINK + "I am not sure, perhaps 7.", "no_answer"),
    ("42", THINK + "\\boxed{41} no wait \\boxed{42", "no_answer"),
    ("42", THINK + "\\boxed{}", "no_answer"),
    # \fbox and the bare form
    ("42", THINK + "\\fbox{42}", "correct"),
    ("42", THINK + "$\\boxed 42$", "correct"),
    # \text{}, units, degrees
    ("\\text{Evelyn}", THINK + "\\boxed{\\text{Evelyn}}", "correct"),
    ("\\text{Evelyn}", THINK + "\\boxed{Evelyn}", "correct"),
    ("5", THINK + "\\boxed{5\\text{ cm}}", "correct"),
    ("42", THINK + "\\boxed{42\\text{ degrees}}", "correct"),
    ("60", THINK + "\\boxed{60^\\circ}", "correct"),
    ("90^\\circ", THINK + "\\boxed{90}", "correct"),
    ("\\frac{\\pi}{3}", THINK + "\\boxed{60^\\circ}", "incorrect"),  # degrees never become radians
    ("18.90", THINK + "\\boxed{\\$18.90}", "correct"),
    # percentages: 10\% equals both 10 and 0.1 (math-verify's reading)
    ("10", THINK + "\\boxed{10\\%}", "correct"),
    ("0.1", THINK + "\\boxed{10\\%}", "correct"),
    # intervals, tuples, sets
    ("(1,2)", THINK + "\\boxed{[1,2]}", "incorrect"),
    ("[1,2)", THINK + "\\boxed{[1, 2)}", "correct"),
    ("\\left( 3, \\frac{\\pi}{2} \\right)", THINK + "\\boxed{(3, \\frac{\\pi}{2})}", "correct"),
    (
        "\\left(3, \\frac{\\pi}{2}\\right)",
        THINK + "\\boxed{\\left(3,\\dfrac{\\pi}{2}\\right)}",
        "correct",
    ),
    ("-8,1", THINK + "\\boxed{1, -8}", "correct"),
    ("-8,1", THINK + "\\boxed{-8}", "incorrect"),
    ("3", THINK + "\\boxed{3, 5}", "incorrect"),
    ("(1,8,19), (2,7,13)", THINK + "\\boxed{(2,7,13),(1,8,19)}", "correct"),
    # equations
    ("5", THINK + "\\boxed{x=5}", "correct"),
    ("x=5", THINK + "\\boxed{5}", "correct"),
    ("4x+5", THINK + "\\boxed{4x+5}", "correct"),  # gold parsed inside $...$, not as "4"
    ("4x+5", THINK + "\\boxed{4}", "incorrect"),
    ("p - q", THINK + "\\boxed{-q+p}", "correct"),
    # AIME formatting: zero padding, sentence period, digit groups, a space inside
    ("25", THINK + "\\boxed{025}", "correct"),
    ("25", THINK + "\\boxed{0025}", "correct"),
    ("42", THINK + "\\boxed{42.}", "correct"),
    ("42", THINK + "\\boxed{4 2}", "incorrect"),  # read as a mixed number, never as 42
    ("10000", THINK + "\\boxed{10\\,000}", "correct"),
    ("10000", THINK + "\\boxed{10{,}000}", "correct"),
    ("10000", THINK + "\\boxed{10,000}", "correct"),  # digit groups of three: a number
    ("1,2", THINK + "\\boxed{2,1}", "correct"),  # otherwise a comma makes a set
    # minerva-style scientific gold
    ("4.5e33", THINK + "\\boxed{4.5 \\times 10^{33}}", "correct"),
    ("1.6", THINK + "\\boxed{1.60}", "correct"),
    ("\\infty", THINK + "\\boxed{\\infty}", "correct"),
    # issue 29: the forms of long reasoning outputs
    ("77", THINK + "The total is $\\boxed{77\\,€}$.", "correct"),
    ("49", THINK + "So the angle is $\\boxed{49\\degree}$.", "correct"),
    ("19, 46, \\text{ and } 82", THINK + "$\\boxed{19, 46, and 82}$", "correct"),
    ("19, 46, \\text{ and } 82", THINK + "$\\boxed{19, 46}$", "incorrect"),
]


@pytest.mark.parametrize(("gold", "gen", "expected"), MATH_ROWS)
def test_math_table(gold: str, gen: str, expected: str) -> None:
    assert judge(gold, gen) == expected


CHOICE_ROWS = [
    ("C", THINK + "\\boxed{C}", "correct"),
    ("C", THINK + "\\boxed{\\text{C}}", "correct"),
    ("C", THINK + "\\boxed{(C)}", "correct"),
    ("C", THINK + "Answer: C", "correct"),
    ("C", THINK + "**Answer:** (C)", "correct"),
    ("C", THINK + "\\boxed{B}", "incorrect"),
    ("C", THINK + "\\boxed{A, C}", "incorrect"),
    ("C", THINK + "Answer: C or D", "incorrect"),
    ("C", THINK + "\\boxed{2.5 eV}", "incorrect"),
    ("C", THINK + "It must be C, I think.", "no_answer"),
    ("C", "<think>\nAnswer: C is tempting", "no_answer"),
]


@pytest.mark.parametrize(("gold", "gen", "expected"), CHOICE_ROWS)
def test_choice_table(gold: str, gen: str, expected: str) -> None:
    assert judge(gold, gen, kind="choice") == expected


GPQA_0 = json.loads((DATA_DIR / "gpqa_diamond.jsonl").open().readline())  # gold D, (D) 10^-4 eV
OPTIONS = "Which is a root?\n\n(A) f(-6)=0\n(B) f(6)=0\n(C) f(0)=6\n(D) f(1)=0"
GAP = " Let me double-check the other case carefully. " * 12  # ~550 characters
ECHO = "Billy sold 8 DVDs on Monday and some on Tuesday, 15 in all. Answer with 1 to 10."

# (kind, gold, output, strict verdict, lenient verdict[, problem]): both policies per row
POLICY_ROWS = [
    # several final boxes: a gold of k parts, an output ending with k boxes
    ("math", "2, 3", THINK + "The roots are $\\boxed{2}$ and $\\boxed{3}$.", "correct", "correct"),
    (
        "math",
        "2, 3",
        THINK + "The roots are $\\boxed{2}$ and $\\boxed{4}$.",
        "incorrect",
        "incorrect",
    ),
    ("math", "x=1, y=2", THINK + "So $\\boxed{x=1}$, $\\boxed{y=2}$.", "correct", "correct"),
    ("math", "1, 2, 3", THINK + "$\\boxed{1, 2}$ and $\\boxed{3}$", "correct", "correct"),
    ("math", "2, 3", THINK + "\\boxed{7} then \\boxed{2, 3}", "correct", "correct"),
    (
        "math",
        "2, 3",
        THINK + "first \\boxed{2}." + GAP + "Final: \\boxed{3}",
        "incorrect",
        "incorrect",
    ),
    (
        "math",
        "2, 3",
        THINK + "\\boxed{2}" + GAP + "\\boxed{3} and \\boxed{3}",
        "incorrect",
        "incorrect",
    ),
    ("math", "3", THINK + "$\\boxed{2}$ and $\\boxed{3}$", "correct", "correct"),
    # the lenient policy: anchors, Minerva's, the last number of a finished output
    ("math", "42", THINK + "The final answer is 42. I hope it is correct.", "no_answer", "correct"),
    ("math", "17", THINK + "so x = 3 and y = 17", "no_answer", "correct"),
    ("math", "3", THINK + "so x = 3 and y = 17", "no_answer", "incorrect"),
    ("math", "7", THINK + "I have no idea.", "no_answer", "no_answer"),
    # multiple choice as models write it
    ("choice", "B", "B", "no_answer", "correct"),
    ("choice", "B", "**B**", "no_answer", "correct"),
    ("choice", "B", "B.", "no_answer", "correct"),
    ("choice", "B", "Let me think.\n\n(B) 3.2 eV", "no_answer", "correct"),
    ("choice", "B", "Answer: B", "correct", "correct"),
    ("choice", "B", "The answer is (B)", "correct", "correct"),
    ("choice", "C", "B", "no_answer", "incorrect"),
    ("choice", "B", "(A) or (B), I cannot tell", "no_answer", "no_answer"),
    ("choice", "B", "I think B is right, but maybe not.", "no_answer", "no_answer"),
    ("choice", "H", "\\boxed{(H) $\\frac{2(a^2-ab+b^2)}{a^2-b^2}$}", "correct", "correct"),
    ("choice", "H", "\\boxed{(G) $\\frac{2(a^2-ab+b^2)}{a^2-b^2}$}", "incorrect", "incorrect"),
    ("choice", "C", "\\boxed{(A) and (C)}", "incorrect", "incorrect"),
    # option letters run from A to J (MMLU-Pro's ten), in boxes and on a final line
    ("choice", "J", THINK + "\\boxed{(J) 12 N}", "correct", "correct"),
    ("choice", "J", THINK + "So the answer is\n\n(J) 12 N", "no_answer", "correct"),
    ("choice", "B", THINK + "So it is\n\n(B) or C", "no_answer", "no_answer"),
    # an option's text for its letter (lenient, the options in the problem)
    ("choice", "D", "\\boxed{10^-4 eV}", "incorrect", "correct", GPQA_0["problem"]),
    ("choice", "D", "\\boxed{10^-9 eV}", "incorrect", "incorrect", GPQA_0["problem"]),
    ("math", "A", "\\boxed{f(-6)=0}", "incorrect", "correct", OPTIONS),
    ("math", "\\text{(A)}", "\\boxed{f(6)=0}", "incorrect", "incorrect", OPTIONS),
    ("math", "A", "\\boxed{f(-6)=0}", "incorrect", "incorrect"),  # no options: no letter
    # issue 29.8-9: a sentence after the anchor; an output that restates the problem
    ("math", "7", THINK + "**Answer:** Billy sold 7 DVDs on Tuesday.", "no_answer", "correct"),
    ("math", "8", THINK + "**Answer:** Billy sold 7 DVDs on Tuesday.", "no_answer", "incorrect"),
    ("math", "10", ECHO, "no_answer", "no_answer", ECHO),  # was the problem's last number
    ("math", "7", ECHO + "\nHe sold 7.", "no_answer", "correct", ECHO),
]


@pytest.mark.parametrize(
    ("kind", "gold", "gen", "strict", "lenient", "problem"),
    [(*row, None)[:6] for row in POLICY_ROWS],
)
def test_both_policies_table(
    kind: str, gold: str, gen: str, strict: str, lenient: str, problem: str | None
) -> None:
    assert judge(gold, gen, kind, "strict", problem) == strict
    assert judge(gold, gen, kind, "lenient", problem) == lenient


@pytest.mark.parametrize(
    ("gold", "answer"),
    [
        ("42", "042"),
        ("42", "41"),
        ("-7", "-7"),
        ("-7", "7"),
        ("\\frac{3}{4}", "\\dfrac{6}{8}"),
        ("\\frac{3}{4}", "3/4"),
        ("\\frac{3}{4}", "\\frac{4}{3}"),
        ("6", "\\frac{12}{2}"),
        ("0", "-0"),
        ("-\\frac{1}{2}", "-\\frac{2}{4}"),
    ],
)
def test_exact_fast_path_agrees_with_math_verify(gold: str, answer: str) -> None:
    import math_verify

    fast = exact_status(gold, answer)
    assert fast is not None
    slow = math_verify.verify(parse_gold(gold), math_verify.parse("\\boxed{" + answer + "}"))
    assert fast == ("correct" if slow else "incorrect")


def test_verifier_id_names_versions_and_policy() -> None:
    vid = verifier_id("math")
    assert "math-verify==0.9.0" in vid
    assert "policy=strict" in vid and "policy=lenient" in verifier_id("math", "lenient")
    assert verifier_id("choice") != vid


def _terms(chars: int) -> str:
    """A sum of assorted terms of about `chars` characters (sympy's work grows with it)."""
    rng, parts = random.Random(1), []
    while sum(map(len, parts)) < chars:
        k = rng.randint(1, 9)
        parts.append(rng.choice([f"\\frac{{{k}}}{{x+{k}}}", f"x^{{{k}}}", f"\\sin({k}x)"]))
    return "+".join(parts)


@pytest.mark.parametrize(
    ("gold", "answer", "expected"),
    [
        # over 200 characters and 10x its gold: not compared (a 1,100-character sum took 15 s
        # of CPU against x^2+1, and each distinct one up to the whole --timeout)
        ("x^2+1", _terms(1100), ("incorrect", None, TOO_LONG)),
        ("x^2+1", _terms(201), ("incorrect", None, TOO_LONG)),
        # the structure bounds it too: 37 operators are compared, 87 (181 characters) are not
        ("0", "\\sin^2 x+\\cos^2 x-1" + "+0" * 30, ("correct", None, None)),
        ("0", "\\sin^2 x+\\cos^2 x-1" + "+0" * 80, ("incorrect", None, TOO_LONG)),
        # 7 fractions against a gold of 1 (at most 6), 10 parentheses deep (at most 8)
        (
            "\\frac{1}{x+1}",
            "+".join(f"\\frac{{1}}{{x+{k}}}" for k in range(1, 8)),
            ("incorrect", None, TOO_LONG),
        ),
        ("x+1", "(" * 10 + "x+1" + ")" * 10, ("incorrect", None, TOO_LONG)),
        # a long gold lets its answer be as long: 10x
        ("\\left(" + _terms(60) + "\\right)", "(" + _terms(60) + ")", ("correct", None, None)),
    ],
    ids=[
        "1100-chars",
        "201-chars",
        "37-operators",
        "87-operators",
        "7-fractions",
        "10-deep",
        "long-gold",
    ],
)
def test_an_answer_s_size_bounds_its_work(gold: str, answer: str, expected: tuple) -> None:
    assert verify(gold=gold, answer=answer) == expected


# Issue 40.13: sums of 60 fractions over quadratics (1,139 characters, within 10x the gold)
# against a 116-character gold each cost the whole --timeout; now their structure is refused
GOLD_116 = (
    "\\frac{x^3+2x^2-5x+7}{(x+1)(x+2)(x+3)}+\\frac{5}{x+4}-\\frac{2x}{x^2-9}"
    "+\\frac{1}{(x+1)^2}-\\frac{3}{x^2+x+1}+\\frac{1}{x}"
)


def _sixty_fractions(seed: int) -> str:
    rng = random.Random(seed)
    return "+".join(
        f"\\frac{{{rng.randint(1, 9)}}}{{x^2+{rng.randint(1, 9)}x+{rng.randint(1, 9)}}}"
        for _ in range(60)
    )


def test_twelve_long_sums_cost_their_reading_not_the_deadline() -> None:
    """Under eval's worker pool, twelve such answers are refused by their structure: none is
    a timeout (each was one, after the whole deadline of CPU)."""
    results: list[VerifyResult] = []
    tasks = [VerifyTask(str(k), "math", GOLD_116, _sixty_fractions(k)) for k in range(12)]
    VerifyPool(2, timeout_s=5).run(tasks, results.append)
    assert sorted((r.status, r.detail) for r in results) == [("incorrect", TOO_LONG)] * 12
