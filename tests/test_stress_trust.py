"""What llmeval must not take on trust, at small size (a fast `bench/stress_trust.py`): keys a
server quotes back, names built to drive a terminal, verdict caches someone else wrote."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.stress.trust import NAMES, echoed_keys, forged_caches, terminal_names


@pytest.mark.slow
def test_keys_quoted_back_show_nowhere(tmp_path: Path) -> None:
    fig = echoed_keys(tmp_path)
    assert fig.problems == [] and fig.counts["leaks"] == 0
    assert fig.counts["quoted and hidden"] >= 10  # the gateway did quote them


@pytest.mark.slow
def test_names_print_no_control_character(tmp_path: Path) -> None:
    fig = terminal_names(tmp_path, NAMES[::3])
    assert fig.problems == [] and fig.runs >= 10


@pytest.mark.slow
def test_caches_written_elsewhere_are_named_or_refused(tmp_path: Path) -> None:
    fig = forged_caches(tmp_path, evals=1)
    assert fig.problems == [], fig.problems
    assert fig.counts["accuracy with the forged cache"] == 1.0  # used, and named
