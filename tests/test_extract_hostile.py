"""Extraction runs in the eval process itself, outside any verifier deadline: every function
must stay linear on hostile text (regressions of what the hostile-output stress found)."""

from __future__ import annotations

import multiprocessing as mp
from collections.abc import Callable

from llmeval.evaluate.extract import (
    clean_math_answer,
    extract_anchored,
    extract_math,
    final_boxes,
    last_boxed,
)
from llmeval.evaluate.policy_answers import extract_choice, lenient_letter


def _finishes(fn: Callable[[str], object], text: str, guard_s: float = 120) -> None:
    """`fn(text)` returns in a child process (a hang guard far above the ~0.1 s it takes now;
    the quadratic or cubic versions needed hours on these sizes)."""
    child = mp.get_context("fork").Process(target=fn, args=(text,), daemon=True)
    child.start()
    child.join(guard_s)
    hung = child.is_alive()
    child.kill()
    assert not hung and child.exitcode == 0, f"{fn.__name__} hung or failed on {len(text)} chars"


def test_twenty_thousand_boxedx_commands_need_no_recursion() -> None:
    text = "\\boxedx" * 20_000 + " so \\boxed{7} and \\boxedy" * 3
    assert last_boxed(text) == "7"
    assert last_boxed("\\boxedx" * 50_000) is None
    assert extract_math("\\fbox{3}" + "\\boxedabc" * 30_000) == "3"


def test_a_box_before_other_commands_keeps_its_old_meaning() -> None:
    assert last_boxed("\\boxed{1} \\boxedfoo{2}") == "1"
    assert last_boxed("\\boxed{1 \\boxedfoo{2}}") is None  # the box's braces are cut at the command
    assert last_boxed("\\boxed 42 \\boxedtext") == "42"


def test_sentence_periods_are_stripped_in_linear_time() -> None:
    assert clean_math_answer("42 . .") == "42"
    assert clean_math_answer("x \\.") == "x \\."
    assert clean_math_answer(". . .") is None
    _finishes(clean_math_answer, "1" + " ." * 500_000)  # 1 MB: about 100 s when quadratic


def test_answer_line_regex_does_not_backtrack_on_long_runs_of_spaces() -> None:
    assert extract_choice("Answer:  ** C") == "C"
    assert extract_choice("the answer is (B)") == "B"
    _finishes(extract_choice, "Answer" + " " * 100_000 + "z")  # 1,000 spaces took 10 s


def test_final_boxes_and_lenient_readings_stay_linear() -> None:
    assert final_boxes("\\boxed{1}" * 100_000, 12) == ", ".join(["1"] * 12)
    _finishes(lambda text: final_boxes(text, 12), "\\boxedx" * 100_000 + "\\boxed{1}")
    _finishes(lambda text: final_boxes(text, 12), "\\boxed{" + "1," * 500_000 + "}")
    _finishes(extract_anchored, "1," * 500_000 + "x")
    _finishes(lenient_letter, "(A" * 500_000)
    _finishes(extract_choice, "\\boxed{(A)" + " (B" * 300_000 + "}")


def test_reasoning_tags_are_found_in_linear_time() -> None:
    # the last closing tag is looked for from the end: every `</` that is none is passed once
    _finishes(extract_math, "</" * 500_000 + "\\boxed{1}")
    _finishes(extract_math, "</thinking" * 100_000 + "<THINK" * 100_000)
