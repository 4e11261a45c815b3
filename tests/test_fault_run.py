"""Every fault kind, streamed and not: infer completes every sample exactly once once retries
finish (a fast `bench/stress_faults.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.stress.fault_run import DEFAULT_FAULTS, run_once


@pytest.mark.slow
@pytest.mark.parametrize("stream", [True, False])
def test_all_faults_all_samples_once(stream: bool, tmp_path: Path) -> None:
    rates = {kind: 0.06 for kind in DEFAULT_FAULTS}
    run = run_once(tmp_path, stream, rates, n=2, problems=12, workers=8)
    assert run.exit_code == 0
    assert (run.samples, run.duplicated) == (24, 0)
    assert set(run.faults) >= set(DEFAULT_FAULTS)  # each kind was injected at least once
    assert run.faults.get("dropped after close_after", 0) >= 1
    assert run.requests > run.samples  # the faults cost retries, and they all finished
