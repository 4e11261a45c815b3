"""`--follow` of `eval` and `report`: score the runs again every few seconds while they grow,
showing how far they are, until every run is complete (or Ctrl-C: the last figures stay)."""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from llmeval.errors import UsageError
from llmeval.evaluate.live import NO_ROUND_NOTE, progress_line, progress_table
from llmeval.records import ScoreReport

DEFAULT_FOLLOW_S = 30.0
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
    """The seconds between refreshes (None: no --follow), checked."""
    seconds: float | None = args.follow
    if seconds is not None and not 0 < seconds <= 86_400:  # (NaN too)
        raise UsageError(f"--follow {seconds:g}: give the seconds between refreshes (0-86400)")
    return seconds


def add_follow(parser: argparse.ArgumentParser, what: str) -> None:
    """The `--follow [SECONDS]` flag of `eval` and `report`."""
    parser.add_argument(
        "--follow", action=FollowAction, nargs="?", metavar="SECONDS", default=None,
        help=f"score the runs again every SECONDS (default {DEFAULT_FOLLOW_S:g}) while they "
        f"grow, {what}, until every run is complete or Ctrl-C; only new samples are "
        "verified (the verdict cache)",
    )  # fmt: skip


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
    interval: float, refresh: Callable[[], ScoreReport], final: Callable[[ScoreReport], None]
) -> int:
    """Call `refresh` (score and write the outputs) every `interval` seconds, showing its
    progress, until every run is complete; then, or at Ctrl-C once a refresh has finished,
    `final` shows the last figures and the exit code is 0. Only the last refresh's figures are
    kept: a refresh holds no more than one eval."""
    once = _OncePerMessage()
    log.addFilter(once)
    display = _Display(interval)
    last: ScoreReport | None = None
    try:
        while True:
            last = refresh()
            display.show(last)
            if last.tasks and all(t.complete for t in last.tasks):
                break
            time.sleep(interval)
    except KeyboardInterrupt:
        if last is None:
            raise
    finally:
        display.close()
        log.removeFilter(once)
    final(last)
    return 0
