"""The collector settings of infer's and eval's busy phases are set and always restored."""

from __future__ import annotations

import gc

import pytest

from llmeval.cli.main import fewer_collections


def test_settings_hold_inside_and_are_restored_after_an_error() -> None:
    before = gc.get_threshold()
    made_before = [object() for _ in range(3)]
    with pytest.raises(RuntimeError), fewer_collections():
        assert gc.get_threshold() == (10_000, *before[1:])
        assert gc.get_freeze_count() >= len(made_before)
        raise RuntimeError("stop")
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
