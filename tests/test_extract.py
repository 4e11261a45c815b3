"""Extraction: reasoning stripped, the last box found (nested, fbox, bare), letters for GPQA."""

from __future__ import annotations

import random

import pytest

from llmeval.evaluate.extract import (
    canonical_answer,
    clean_math_answer,
    extract_math,
    final_boxes,
    last_boxed,
    response_text,
)
from llmeval.evaluate.policy_answers import extract_choice, lenient_letter, options, read_answers
from llmeval.judge.prompt import judgement
from tests.support.synthetic import output

RNG = random.Random(3)
THINK = "<think>\n" + "Let me try small cases first. So far \\boxed{7} looks right. " * 40


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("so \\boxed{42}.", "42"),
        ("\\boxed{\\frac{1}{\\sqrt{2}}}", "\\frac{1}{\\sqrt{2}}"),
        ("\\boxed{1} and then \\boxed{2}", "2"),
        ("\\boxed{\\boxed{5}}", "5"),
        ("\\fbox{12}", "12"),
        ("\\boxed{3} then \\fbox{4}", "4"),
        ("$\\boxed 42$.", "42"),
        ("\\boxed {x+1}", "x+1"),
        ("\\boxed{41} and finally \\boxed{42", None),  # cut off: the final answer is unknown
        ("no box here", None),
        ("\\boxedsomething{3}", None),
        ("\\boxed{\\{1,2\\}}", "\\{1,2\\}"),
    ],
)
def test_last_boxed(text: str, expected: str | None) -> None:
    assert last_boxed(text) == expected


def test_last_boxed_deep_nesting_is_linear() -> None:
    deep = "\\boxed{" + "{" * 100_000 + "1" + "}" * 100_000 + "}"
    assert last_boxed(deep) == "{" * 100_000 + "1" + "}" * 100_000


def test_reasoning_is_dropped_up_to_the_last_think_close() -> None:
    gen = THINK + "</think>\nWait</think>\nThe answer is \\boxed{8}."
    assert response_text(gen) == "\nThe answer is \\boxed{8}."
    assert extract_math(gen) == "8"


def test_think_only_output_has_no_answer() -> None:
    # a truncated output that never left its reasoning: the tentative \boxed{7} must not count
    assert extract_math(THINK) is None
    # the prompt opened <think> (R1 chat template): gen starts inside the reasoning
    assert extract_math("Let me see, \\boxed{7} maybe", starts_in_think=True) is None
    assert extract_math("reasoning</think>\\boxed{7}", starts_in_think=True) == "7"


def test_reasoning_tags_are_read_as_the_judge_reads_them() -> None:
    # one rule (llmeval/thinking.py): `<thinking>` and any case are reasoning tags, and a
    # reasoning block opened again after the last close and never closed is reasoning too
    assert extract_math("<THINK>\nmaybe \\boxed{7}") is None
    assert extract_math("<thinking>\nmaybe \\boxed{7}") is None
    assert extract_math("<Thinking>\\boxed{7}</Thinking>\nSo \\boxed{8}.") == "8"
    assert extract_math("<think>a</think>\\boxed{5}\n<think>\nwait, \\boxed{6}") is None
    assert judgement("<THINK>\nJudgement: Yes\n</THINK>\nJudgement: No") == "no"


def test_separate_reasoning_field() -> None:
    assert extract_math("The answer is \\boxed{9}.", reasoning="... \\boxed{7} ...") == "9"
    assert extract_math("", reasoning="long thoughts \\boxed{7}") is None


def test_realistic_output() -> None:
    gen = output("\\dfrac{14}{3}", 3000, RNG)
    assert extract_math(gen) == "\\dfrac{14}{3}"
    assert extract_math(output(None, 3000, RNG)) is None
    assert extract_math(output("5", 3000, RNG, closed=False)) is None


@pytest.mark.parametrize(
    ("content", "expected"),
    [(" 42. ", "42"), ("10\\,000", "10000"), ("1\\,234\\,567", "1234567"), ("4\\,2", "4\\,2")],
)
def test_clean_math_answer(content: str, expected: str) -> None:
    assert clean_math_answer(content) == expected


def test_empty_box_is_no_answer() -> None:
    assert extract_math("\\boxed{ }") is None


@pytest.mark.parametrize(
    ("gen", "letter"),
    [
        ("\\boxed{C}", "C"),
        ("\\boxed{\\text{C}}", "C"),
        ("\\boxed{\\textbf{(C)}}", "C"),
        ("\\boxed{(C)}", "C"),
        ("\\boxed{C) 2.5 eV}", "C"),
        ("Answer: C", "C"),
        ("**Answer:** (C)", "C"),
        ("The answer is D.", "D"),
        ("\\boxed{A, C}", "A,C"),
        ("Answer: A or C", "A,C"),
        ("\\boxed{2.5 eV}", "2.5 eV"),
        ("\\boxed{(H) $\\frac{2(a^2-ab+b^2)}{a^2-b^2}$}", "H"),
        ("\\boxed{B. 3.2 eV}", "B"),
        ("\\boxed{(A) and (C)}", "A,C"),
        ("B", None),  # a bare letter: the lenient policy's reading
        ("I think it is probably C.", None),
        (THINK + "</think> Answer: B", "B"),
        (THINK + "Answer: B", None),
    ],
)
def test_extract_choice(gen: str, letter: str | None) -> None:
    assert extract_choice(gen) == letter


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("\\dfrac{1}{2}", "\\frac{1}{2}"),
        ("\\left( 3, 4 \\right)", "(3,4)"),
        ("042", "42"),
        ("\\text{Evelyn}", "Evelyn"),
        ("x = 5", "x=5"),
        ("10\\!000", "10000"),
    ],
)
def test_canonical_answer_merges_spellings(a: str, b: str) -> None:
    assert canonical_answer(a) == canonical_answer(b)


def test_canonical_answer_keeps_different_answers_apart() -> None:
    assert canonical_answer("0.5") != canonical_answer("5")
    assert canonical_answer("x") != canonical_answer("X")
    assert canonical_answer("100") != canonical_answer("1")


@pytest.mark.parametrize(
    ("text", "parts", "expected"),
    [
        ("\\boxed{2} and \\boxed{3}", 2, "2, 3"),
        ("\\boxed{2} and \\boxed{3}", 1, "3"),
        ("\\boxed{2} and \\boxed{3}", 3, "3"),  # too few boxes: the last one
        ("\\boxed{1} \\boxed{2, 3}", 2, "2, 3"),  # the last box holds the list
        ("\\boxed{1, 2} \\boxed{3}", 3, "1, 2, 3"),
        ("\\boxed{2}" + "x" * 401 + "\\boxed{3}", 2, "3"),  # far apart: intermediate
        ("\\boxed{\\boxed{5}}", 2, "5"),  # nested boxes are one answer
        ("\\boxed{2} and \\boxed{3", 2, None),  # the last box cut off
    ],
)
def test_final_boxes_of_a_several_part_gold(text: str, parts: int, expected: str | None) -> None:
    assert final_boxes(text, parts) == expected


def test_several_final_boxes_read_under_both_policies_from_the_gold() -> None:
    gen = THINK + "</think> The solutions are $\\boxed{-8}$ and $\\boxed{1}$."
    assert read_answers("math", (gen, None, False), False, "-8$,$1", None) == ("-8, 1", None)
    assert read_answers("math", (gen, None, False), False, "1", None) == ("1", None)


def test_lenient_readings_never_come_from_a_truncated_output() -> None:
    for kind, gen in (("math", "so x = 3 and y = 17"), ("choice", "B")):
        assert read_answers(kind, (gen, None, False), True, "17", None) == (None, None)
        assert read_answers(kind, (gen, None, False), False, "17", None)[1] in ("17", "B")


@pytest.mark.parametrize(
    ("problem", "expected"),
    [
        ("Pick one.\n(A) 1\n(B) 2\nC) 3", {"A": "1", "B": "2", "C": "3"}),
        ("Pick one.\n(A) 1", {}),  # one option is no list of options
        ("(A) 1\n(B) 2\n(A) 3", {}),  # a repeated letter: ambiguous
        (None, {}),
    ],
)
def test_options_of_a_problem(problem: str | None, expected: dict[str, str]) -> None:
    assert options(problem) == expected


@pytest.mark.parametrize(
    ("gen", "letter"),
    [
        ("B", "B"),
        ("**B**", "B"),
        ("(B)", "B"),
        ("B.", "B"),
        ("Thinking...\n\n(B) 3.2 eV", "B"),
        ("C) 2.5 eV", "C"),
        ("(A) and (B)", None),
        ("I am unsure.", None),
        ("The options are close; B seems best", None),
        ("", None),
    ],
)
def test_lenient_letter(gen: str, letter: str | None) -> None:
    assert lenient_letter(gen) == letter
