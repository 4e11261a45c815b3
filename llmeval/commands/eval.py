"""`llmeval eval` (not built yet)."""

from __future__ import annotations

import argparse

from llmeval.errors import UsageError


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `eval` parser."""
    parser = sub.add_parser("eval", help="(not built yet)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Not built yet."""
    raise UsageError("'llmeval eval' is not built yet")
