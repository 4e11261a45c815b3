"""Progress of an `infer` run: a rich bar on a terminal, else a plain line every few seconds."""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from llmeval.infer.runner import Tally

log = logging.getLogger("llmeval")


@dataclass(frozen=True)
class Snapshot:
    """Counters at one instant."""

    done: int
    total: int
    failed: int
    tokens: int
    in_flight: int
    retries: int
    elapsed: float
    cpu: float = 0.0  # CPU seconds this process used over `elapsed`


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def rates(snap: Snapshot) -> tuple[float, float, float | None]:
    """(samples/s, output tokens/s, ETA seconds or None)."""
    elapsed = max(snap.elapsed, 1e-9)
    per_s = snap.done / elapsed
    left = snap.total - snap.done - snap.failed
    eta = left / per_s if per_s > 0 else None
    return per_s, snap.tokens / elapsed, eta


def cpu_share(cpu_s: float, wall_s: float) -> float:
    """The fraction of one CPU core used: CPU seconds over wall seconds."""
    return cpu_s / wall_s if wall_s > 0 else 0.0


def _counters(snap: Snapshot) -> str:
    per_s, tok_s, eta = rates(snap)
    return (
        f"{per_s:.1f} samples/s {tok_s:,.0f} tok/s in flight {snap.in_flight} "
        f"retries {snap.retries} failed {snap.failed} "
        f"ETA {_clock(eta) if eta is not None else '?'} "
        f"cpu {cpu_share(snap.cpu, snap.elapsed):.0%}"
    )


def plain_line(snap: Snapshot) -> str:
    """One progress line for logs and pipes."""
    pct = 100.0 * snap.done / snap.total if snap.total else 100.0
    return f"infer: {snap.done}/{snap.total} ({pct:.0f}%) {_counters(snap)}"


# A client busier than this share of its one core, over a run this long, may set the pace.
BOUND_SHARE = 0.9
BOUND_MIN_S = 10.0


def client_bound_hint(cpu_s: float, wall_s: float, stream: bool) -> str | None:
    """A warning when the run kept llmeval's one process (asyncio: one core) nearly always
    busy, so the client rather than the server may have limited the rate; None otherwise."""
    share = cpu_share(cpu_s, wall_s)
    if wall_s < BOUND_MIN_S or share < BOUND_SHARE:
        return None
    if stream:
        cure = "`--no-stream` costs far less CPU per sample than parsing every token"
    else:
        cure = "split the input across several llmeval processes, one output file each"
    return (
        f"llmeval used {share:.0%} of a CPU core over this {wall_s:.0f} s run: the client, "
        f"not the server, may have limited the rate; {cure}"
    )


class Progress:
    """Shows `snapshot()` until cancelled: rich on a terminal, plain lines every `interval` s."""

    def __init__(
        self,
        snapshot: Callable[[], Snapshot],
        *,
        stream: TextIO | None = None,
        live: bool | None = None,
        interval: float = 5.0,
    ) -> None:
        self.snapshot = snapshot
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty() if live is None else live
        self.interval = interval

    async def run(self) -> None:
        """Refresh until cancelled (then show the final state once)."""
        if self.live:
            await self._rich()
            return
        try:
            while True:
                await asyncio.sleep(self.interval)
                print(plain_line(self.snapshot()), file=self.stream, flush=True)
        except asyncio.CancelledError:
            pass

    async def _rich(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn
        from rich.progress import Progress as Bar

        bar = Bar(
            TextColumn("infer"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[info]}"),
            console=Console(file=self.stream),
        )
        first = self.snapshot()
        task = bar.add_task("infer", total=first.total, info="")
        with bar:
            try:
                while True:
                    self._show(bar, task)
                    await asyncio.sleep(0.25)
            except asyncio.CancelledError:
                self._show(bar, task)

    def _show(self, bar: object, task: object) -> None:
        snap = self.snapshot()
        bar.update(task, completed=snap.done, info=_counters(snap))  # type: ignore[attr-defined]


def start_clock() -> Callable[[], float]:
    """Seconds since now."""
    t0 = time.monotonic()
    return lambda: time.monotonic() - t0


def start_cpu_clock() -> Callable[[], float]:
    """CPU seconds this process used since now."""
    t0 = time.process_time()
    return lambda: time.process_time() - t0


def summarize(tally: Tally, output: Path, seconds: float, hint: str | None = None) -> None:
    """The end-of-run summary: one line on stdout, failures and hints as warnings."""
    rate = tally.written / seconds if seconds > 0 else 0.0
    line = f"infer: wrote {tally.written} of {tally.total} samples to {output} in {seconds:.1f} s"
    if tally.written:
        line += f" ({rate:.1f} samples/s)"
    if tally.context_length:
        line += f"; {tally.context_length} hit the context length (recorded, empty gen)"
    print(line, flush=True)
    for message in tally.failures:
        log.warning("failed: %s", message)
    if tally.failed:
        log.warning("%d samples failed and were not written: rerun to resume", tally.failed)
    if tally.interrupted:
        log.warning("interrupted: every finished sample is kept; rerun to resume")
    if hint:
        log.warning("%s", hint)
    sys.stdout.flush()
