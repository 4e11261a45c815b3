"""`llmeval infer` (not built yet)."""

from __future__ import annotations

import argparse

from llmeval.errors import UsageError


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `infer` parser."""
    parser = sub.add_parser("infer", help="(not built yet)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Not built yet."""
    raise UsageError("'llmeval infer' is not built yet")
