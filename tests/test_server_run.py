"""What a server sends, at small size (a fast `bench/stress_server.py`): every scenario keeps
every sample once, with no traceback and the expected exit codes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.stress.server_run import SCENARIOS, Figures, describe


@pytest.mark.slow
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.__name__)
def test_scenario(scenario: Callable[[Path, int, int], Figures], tmp_path: Path) -> None:
    figures = scenario(tmp_path, 1, 8)
    assert figures.ok, describe(figures)
    assert figures.expected >= 16
