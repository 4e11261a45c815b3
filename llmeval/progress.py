"""Progress on stderr, for infer and eval alike: a rich bar on a terminal, else a plain line
every few seconds (and a last one at the end)."""

from __future__ import annotations

import sys
import time
from typing import Any

from llmeval.terminal import printable_line


class Progress:
    """Shows `done` of `total` and a line of counters, as `name`; `live` None: a bar when
    stderr is a terminal."""

    def __init__(self, name: str, live: bool | None = None, interval: float = 2.0) -> None:
        self.name, self.interval = name, interval
        self.live = sys.stderr.isatty() if live is None else live
        self._bar: Any = None
        self._shown = time.monotonic()  # when the last plain line was printed (none yet)

    def update(self, done: int, total: int, info: str, last: bool = False) -> None:
        """Show the counts now (a plain line only when `interval` passed, or when `last`);
        `info` may quote a server's message: it goes through the last filter."""
        info = printable_line(info)
        if self.live:
            if self._bar is None:
                from rich.console import Console
                from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

                # no markup: the counters may quote a server's message, which may hold `[/]`
                columns = (TextColumn(self.name, markup=False), BarColumn(), MofNCompleteColumn())
                info_column = TextColumn("{task.fields[info]}", markup=False)
                self._bar = Progress(*columns, info_column, console=Console(file=sys.stderr))
                self._bar.start()
                self._bar.add_task(self.name, total=total, info=info)
            self._bar.update(self._bar.task_ids[0], completed=done, total=total, info=info)
        elif last or time.monotonic() - self._shown >= self.interval:
            self._shown = time.monotonic()
            share = f"{100.0 * done / total:.0f}%" if total else "100%"
            print(f"{self.name}: {done}/{total} ({share}) {info}", file=sys.stderr, flush=True)

    def close(self) -> None:
        """Stop the bar, if one is showing."""
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
