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
