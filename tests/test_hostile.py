"""Hostile generations (a fast `bench/stress_hostile.py`): nothing hangs past the deadline,
nothing crashes, no payload runs, and the HTML report keeps model markup as text."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmeval.verify.pool import BACKSTOP
from tests.stress.hostile import choice_rows, math_rows
from tests.stress.hostile_run import run_hostile


def test_the_full_set_has_over_a_hundred_generations(tmp_path: Path) -> None:
    assert len(math_rows(tmp_path)) + len(choice_rows(tmp_path)) >= 100


@pytest.mark.slow
def test_hostile_outputs_through_extraction_pool_eval_and_report(tmp_path: Path) -> None:
    run = run_hostile(tmp_path, per_kind=3, timeout_s=1.5, commands=("report",))
    assert run.samples >= 20
    assert run.crashes == []
    assert run.payload_files == []
    assert run.statuses.get("timeout", 0) >= 1  # the towers really were cut at the deadline
    # a hang guard, not a speed figure: the deadline is CPU time, the backstop wall time
    assert run.max_verify_s < BACKSTOP * run.deadline_s + 5
