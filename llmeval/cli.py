"""The command line: argparse subcommands, argv -> command, typed errors -> one line + exit code.

No logic lives here: each subcommand is a module of `llmeval.commands` with
`register(subparsers)`, which adds its parser and sets `run(args) -> int` as `func`.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

from llmeval import __version__
from llmeval.errors import EXIT_INTERRUPTED, LlmevalError

COMMANDS = ("infer", "eval", "report")

log = logging.getLogger("llmeval")


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="llmeval",
        description="Resumable evaluation of reasoning models: `infer` then `eval`.",
    )
    parser.add_argument("--version", action="version", version=f"llmeval {__version__}")
    parser.add_argument("-q", "--quiet", action="store_true", help="only warnings and errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        importlib.import_module(f"llmeval.commands.{name}").register(sub)
    return parser


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever `sys.stderr` is at the time of each message (not at set-up)."""

    @property  # type: ignore[override]
    def stream(self) -> object:
        return sys.stderr

    @stream.setter
    def stream(self, value: object) -> None:
        pass


def setup_logging(quiet: bool = False) -> None:
    """Log to stderr, one plain line per message (rich markup off: text may hold brackets)."""
    if not any(isinstance(h, _StderrHandler) for h in log.handlers):
        handler = _StderrHandler()
        handler.setFormatter(logging.Formatter("llmeval: %(levelname)s: %(message)s"))
        log.addHandler(handler)
    log.setLevel(logging.WARNING if quiet else logging.INFO)
    log.propagate = False


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (never raises for user errors)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    setup_logging(args.quiet)
    try:
        return int(args.func(args))
    except LlmevalError as exc:
        print(f"llmeval {args.command}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"llmeval {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def entry() -> None:
    """Console-script entry point."""
    sys.exit(main())
