"""`--follow` of `eval` and `report`: wait for the runs to appear, then score them again every
few seconds while they grow, showing how far they are, until every run is complete (or Ctrl-C:
the last figures stay)."""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from llmeval.errors import InputError, LlmevalError, UsageError
from llmeval.evaluate.discover import discover
from llmeval.evaluate.live import NO_ROUND_NOTE, progress_line, progress_table
from llmeval.records import ScoreReport

DEFAULT_FOLLOW_S = 30.0
# a reasoning model's first sample can take tens of minutes: infer's file is empty until then
DEFAULT_WAIT_S = 3600.0
POLL_S = 1.0  # how often a path not there yet is looked for
log = logging.getLogger("llmeval")


class FollowAction(argparse.Action):
    """`--follow [SECONDS]`: the bare flag takes the default; a value that is no number is a
    path given after the flag (`eval --follow out/`), kept with the other paths."""

    def __call__(
        self, parser: argparse.ArgumentParser, ns: argparse.Namespace, value: Any, _: Any = None
    ) -> None:
        try:
            seconds = DEFAULT_FOLLOW_S if value is None else float(value)
        except ValueError:
            seconds = DEFAULT_FOLLOW_S
            ns.input_path = [*getattr(ns, "input_path", []), value]
        ns.follow = seconds


def check_follow(args: argparse.Namespace) -> float | None:
    """The seconds between refreshes (None: no --follow), checked, and --wait's."""
    seconds: float | None = args.follow
    if seconds is not None and not 0 < seconds <= 86_400:  # (NaN too)
        raise UsageError(f"--follow {seconds:g}: give the seconds between refreshes (0-86400)")
    if not 0 <= args.wait <= 7 * 86_400:
        raise UsageError(f"--wait {args.wait:g}: give the seconds to wait, 0-604800")
    if args.wait != DEFAULT_WAIT_S and seconds is None:
        raise UsageError("--wait goes with --follow")
    return seconds


def add_follow(parser: argparse.ArgumentParser, what: str) -> None:
    """The `--follow [SECONDS]` flag of `eval` and `report`."""
    parser.add_argument(
        "--follow", action=FollowAction, nargs="?", metavar="SECONDS", default=None,
        help=f"score the runs again every SECONDS (default {DEFAULT_FOLLOW_S:g}) while they "
        f"grow, {what}, until every run is complete or Ctrl-C; only new samples are "
        "verified (the verdict cache)",
    )  # fmt: skip
    parser.add_argument(
        "--wait", type=float, default=DEFAULT_WAIT_S, metavar="SECONDS",
        help="with --follow: how long a path that is not there yet (infer started with it, "
        f"no whole line written) is waited for (default {DEFAULT_WAIT_S:g})",
    )  # fmt: skip


def named_paths(args: argparse.Namespace) -> list[str]:
    """The paths a command was given (positional, and upstream's --input_path)."""
    return [*args.paths, *args.input_path]


def with_paths(args: argparse.Namespace, paths: list[str]) -> argparse.Namespace:
    """The command's flags with only `paths` to read (those that have appeared)."""
    return argparse.Namespace(**{**vars(args), "paths": paths, "input_path": []})


def appeared(path: str) -> bool:
    """Whether eval can read a path now: it names generation files (a file, a folder of them,
    a pattern matching some) of which one holds a whole line (infer creates its file empty and
    writes a line when the first sample is done; a document such as SkyThought's results.json
    is there once it has anything)."""
    try:
        files = discover([path])
    except LlmevalError:
        return False
    return any(_has_line(file) for file in files)


def _has_line(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            while chunk := handle.read(1 << 20):
                if b"\n" in chunk or not path.name.endswith(".jsonl"):
                    return True
    except OSError:
        return False
    return False


class _OncePerMessage(logging.Filter):
    """Each warning once, not at every refresh (a bounded memory of what was said)."""

    def __init__(self) -> None:
        super().__init__()
        self.said: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        if text in self.said:
            return False
        if len(self.said) < 10_000:
            self.said.add(text)
        return True


def stamp() -> str:
    """The time of a refresh as shown: `2026-11-26 09:12:03 UTC`."""
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


class _Display:
    """A rich Live table redrawn in place on a terminal, else one plain line per refresh."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self.live: Any = None
        if sys.stdout.isatty():
            from rich.live import Live

            self.live = Live(auto_refresh=False, redirect_stderr=True, transient=True)
            self.live.start()

    def show(self, report: ScoreReport) -> None:
        if self.live is None:
            print(f"{stamp()} {progress_line(report.tasks)}", flush=True)
            return
        from rich.console import Group
        from rich.text import Text

        head = Text(f"{stamp()}: next refresh in {self.interval:g} s; Ctrl-C stops", "dim")
        note = Text(NO_ROUND_NOTE, "dim")
        self.live.update(Group(head, progress_table(report.tasks), note), refresh=True)

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()


def follow(
    interval: float,
    refresh: Callable[[list[str]], ScoreReport],
    final: Callable[[ScoreReport], None],
    paths: list[str],
    wait: float = DEFAULT_WAIT_S,
) -> int:
    """Call `refresh` on the paths that have appeared (score and write the outputs) every
    `interval` seconds, showing its progress, until every path has appeared and every run is
    complete; then, or at Ctrl-C once a refresh has finished, `final` shows the last figures
    and the exit code is 0. A path not there yet is said once and looked for every second; one
    still missing after `wait` seconds is an error. Only the last refresh's figures are kept: a
    refresh holds no more than one eval."""
    once = _OncePerMessage()
    log.addFilter(once)
    display = _Display(interval)
    last: ScoreReport | None = None
    started = time.monotonic()
    try:
        while True:
            missing = [path for path in paths if not appeared(path)]
            for path in missing:
                log.info("waiting for %s to appear (up to %g s: --wait)", path, wait)
            if missing and time.monotonic() - started > wait:
                raise InputError(missing[0], f"not there after {wait:g} s of waiting (--wait)")
            if len(missing) < len(paths):
                last = refresh([path for path in paths if path not in missing])
                display.show(last)
                if not missing and last.tasks and all(t.complete for t in last.tasks):
                    break
            time.sleep(min(interval, POLL_S) if missing else interval)
    except KeyboardInterrupt:
        if last is None:
            raise
    finally:
        display.close()
        log.removeFilter(once)
    final(last)
    return 0
