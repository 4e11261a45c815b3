"""The command line: argparse subcommands, argv -> command, typed errors -> one line + exit code.

No logic lives here: each subcommand is a module of `llmeval.cli` with
`register(subparsers)`, which adds its parser and sets `run(args) -> int` as `func`.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import logging
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from types import ModuleType

from llmeval import __version__
from llmeval.errors import EXIT_INTERRUPTED, LlmevalError
from llmeval.terminal import printable_line

COMMANDS = ("infer", "eval", "report", "task", "tasks")

log = logging.getLogger("llmeval")


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The top-level parser: only the subcommand `argv` names (a start-up saving: eval's
    modules take ~0.2 s to import), or every one (for help, or an unknown command)."""
    parser = argparse.ArgumentParser(
        prog="llmeval",
        description="Resumable evaluation of reasoning models: `infer` then `eval`.",
    )
    parser.add_argument("--version", action="version", version=f"llmeval {__version__}")
    parser.add_argument("-q", "--quiet", action="store_true", help="only warnings and errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    words = [a for a in (sys.argv[1:] if argv is None else argv) if not a.startswith("-")]
    named = words[0] if words and words[0] in COMMANDS else None
    for name in (named,) if named else COMMANDS:
        import_holding_ctrl_c(f"llmeval.cli.{name}").register(sub)
    return parser


def import_holding_ctrl_c(name: str) -> ModuleType:
    """Import a module with Ctrl-C held until the import is over, then raise it as
    KeyboardInterrupt. An interrupt landing inside an extension module's initialisation
    escapes as something else: pydantic-core turns it into a pyo3 PanicException, which was a
    traceback and exit 1 instead of a quiet exit 130."""
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):  # signals are the main thread's; an ignored or custom Ctrl-C is left alone
        return importlib.import_module(name)
    held: list[int] = []
    signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
    try:
        module = importlib.import_module(name)
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if held:
        raise KeyboardInterrupt
    return module


class _StderrHandler(logging.Handler):
    """Writes to whatever `sys.stderr` is at the time of each message (not at set-up), one
    line each, through the last filter (`printable_line`): no password, key or bearer token, no
    control character a file or a server put in a name."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            print(printable_line(self.format(record)), file=sys.stderr)
        except Exception:
            self.handleError(record)


def setup_logging(quiet: bool = False) -> None:
    """Log to stderr, one plain line per message (rich markup off: text may hold brackets)."""
    if not any(isinstance(h, _StderrHandler) for h in log.handlers):
        handler = _StderrHandler()
        handler.setFormatter(logging.Formatter("llmeval: %(levelname)s: %(message)s"))
        log.addHandler(handler)
    log.setLevel(logging.WARNING if quiet else logging.INFO)


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    """While a command runs, collect the young generation every 10,000 net allocations (not
    700) and leave start-up objects out of full collections: requests and read lines make
    many objects that live on (collections were ~8% of infer's CPU, ~5% of a warm eval)."""
    old = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(10_000, *old[1:])
    try:
        yield
    finally:
        gc.set_threshold(*old)
        gc.unfreeze()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (never raises for user errors)."""
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    setup_logging(args.quiet)
    try:
        with fewer_collections():
            return int(args.func(args))
    except LlmevalError as exc:
        print(f"llmeval {args.command}: error: {printable_line(str(exc))}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"llmeval {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def entry() -> None:
    """Console-script entry point (Ctrl-C while starting up is a quiet exit 130 too)."""
    try:
        code = main()
    except KeyboardInterrupt:
        print("llmeval: interrupted", file=sys.stderr)
        code = EXIT_INTERRUPTED
    sys.exit(code)
