"""Fixtures every test shares."""

from __future__ import annotations

import logging
import os
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


@pytest.fixture(autouse=True, scope="session")
def own_config_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The session's own config folder (its verdict key: `evaluate/signing.py`), never the
    user's; the commands the tests start inherit it."""
    old = os.environ.get("XDG_CONFIG_HOME")
    os.environ["XDG_CONFIG_HOME"] = str(tmp_path_factory.mktemp("config"))
    yield
    if old is None:
        os.environ.pop("XDG_CONFIG_HOME", None)
    else:
        os.environ["XDG_CONFIG_HOME"] = old
