"""Fixtures every test shares."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def fresh_logging() -> Iterator[None]:
    """The "llmeval" logger as in a fresh process, before and after each test: no handler
    (`main()` attaches its own) and no level (`caplog` sets one)."""
    log = logging.getLogger("llmeval")
    log.handlers.clear()
    yield
    log.handlers.clear()
    log.setLevel(logging.NOTSET)


@pytest.fixture(autouse=True)
def own_task_folder(tmp_path_factory: pytest.TempPathFactory, monkeypatch) -> None:
    """Tasks a test adds (`llmeval task add`) go to a folder of the test's own, and no test
    reads the user's ($LLMEVAL_TASKS)."""
    monkeypatch.setenv("LLMEVAL_TASKS", str(tmp_path_factory.mktemp("tasks")))
