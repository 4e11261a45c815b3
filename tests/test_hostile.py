"""Hostile generations (a fast `bench/stress_hostile.py`): nothing hangs past the deadline,
nothing crashes, no payload runs, and the HTML report keeps model markup as text."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmeval.evaluate.policy_answers import read_answers
from llmeval.verify.pool import BACKSTOP
from tests.stress.hostile import choice_rows, math_rows
from tests.stress.hostile_run import run_hostile


def test_every_generation_of_the_full_set_is_read_and_runs_nothing(tmp_path: Path) -> None:
    """Over a hundred hostile generations, each read in-process under both policies as eval
    reads it: no exception, no payload run, text or nothing as each answer, and a box after a
    megabyte of text still read (the slow test below sends a sample of them on to the pool,
    eval and report)."""
    marker = tmp_path / "marker"
    marker.mkdir()
    rows = [("math", r) for r in math_rows(marker)] + [("choice", r) for r in choice_rows(marker)]
    assert len(rows) >= 100
    read = {}
    for kind, row in rows:
        output = (row["gen"], row.get("reasoning"), False)
        answers = read_answers(kind, output, False, row["answer"], row["prompt"])
        assert all(a is None or isinstance(a, str) for a in answers)
        read[row["gen"]] = answers[0]
    assert list(marker.iterdir()) == []
    assert read["a" * 1_000_000 + "\\boxed{42}"] == "42"
    assert read["<think>\n" + "x" * 1_000_000 + "\n</think>\n\n\\boxed{42}"] == "42"


@pytest.mark.slow
def test_hostile_outputs_through_extraction_pool_eval_and_report(tmp_path: Path) -> None:
    run = run_hostile(tmp_path, per_kind=3, timeout_s=1.5, commands=("report",))
    assert run.samples >= 20
    assert run.crashes == []
    assert run.payload_files == []
    assert run.statuses.get("timeout", 0) >= 1  # the towers really were cut at the deadline
    # a hang guard, not a speed figure: the deadline is CPU time, the backstop wall time
    assert run.max_verify_s < BACKSTOP * run.deadline_s + 5
