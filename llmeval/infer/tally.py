"""What an `infer` run did so far: its tally, the counters its progress display shows, and the
end-of-run summary."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from llmeval.progress import Progress
from llmeval.runs.pairs import Shard

log = logging.getLogger("llmeval")


@dataclass
class Tally:
    """What the run did so far; read by the progress display and the summary."""

    total: int = 0
    written: int = 0
    failed: int = 0  # not written: refused for context length, or failed after retries
    context_length: int = 0
    context_error: str | None = None  # the server's first context-length message
    tokens: int = 0
    bad_usage: int = 0  # replies whose token counts were not sane (written without them)
    cut: int = 0  # replies cut at --max-reply-bytes
    failures: list[str] = field(default_factory=list)
    fatal: str | None = None
    interrupted: bool = False


def cpu_share(cpu_s: float, wall_s: float) -> float:
    """The fraction of one CPU core used: CPU seconds over wall seconds."""
    return cpu_s / wall_s if wall_s > 0 else 0.0


def counters(tally: Tally, in_flight: int, retries: int, elapsed: float, cpu: float) -> str:
    """The run's rates and counters after its written/total, for the progress display (`cpu`:
    the CPU seconds this process used over `elapsed`)."""
    wall = max(elapsed, 1e-9)
    per_s = tally.written / wall
    left = tally.total - tally.written - tally.failed
    eta = timedelta(seconds=int(left / per_s)) if per_s > 0 else "?"  # H:MM:SS
    return (
        f"{per_s:.1f} samples/s {tally.tokens / wall:,.0f} tok/s in flight {in_flight} "
        f"retries {retries} failed {tally.failed} ETA {eta} "
        f"cpu {cpu_share(cpu, elapsed):.0%}"
    )


def client_bound_hint(cpu_s: float, wall_s: float, stream: bool) -> str | None:
    """A warning when a run of 10 s or more kept llmeval's one process (asyncio: one core) over
    90% busy: the client rather than the server may have limited the rate; None otherwise."""
    share = cpu_share(cpu_s, wall_s)
    if wall_s < 10.0 or share < 0.9:
        return None
    if stream:
        cure = "`--no-stream` costs far less CPU per sample than parsing every token"
    else:
        cure = "run several llmeval processes, each with its own --shard k/K of one run"
    return (
        f"llmeval used {share:.0%} of a CPU core over this {wall_s:.0f} s run: the client, "
        f"not the server, may have limited the rate; {cure}"
    )


async def show_progress(
    tally: Tally, info: Callable[[], str], live: bool | None, interval: float
) -> None:
    """Show the tally's written/total and `info()` until cancelled, 4 times a second (a plain
    line every `interval` s), and once more at the end."""
    shown = Progress("infer", live, interval)
    try:
        while True:
            shown.update(tally.written, tally.total, info())
            await asyncio.sleep(0.25)
    finally:
        shown.update(tally.written, tally.total, info())
        shown.close()


def stopwatch(clock: Callable[[], float] = time.monotonic) -> Callable[[], float]:
    """Seconds of `clock` since now (`time.process_time`: CPU seconds this process used)."""
    t0 = clock()
    return lambda: clock() - t0


def print_summary(tally: Tally, output: Path, seconds: float, hint: str | None = None) -> None:
    """The end-of-run summary: one line on stdout, failures and hints as warnings."""
    rate = tally.written / seconds if seconds > 0 else 0.0
    line = f"infer: wrote {tally.written} of {tally.total} samples to {output} in {seconds:.1f} s"
    if tally.written:
        line += f" ({rate:.1f} samples/s)"
    print(line, flush=True)
    for message in tally.failures:
        log.warning("failed: %s", message)
    counted = (
        (
            tally.failed - tally.context_length,
            "samples failed and were not written: rerun to resume",
        ),
        (
            tally.bad_usage,
            "replies carried token counts that are not whole numbers from 0 to "
            "10^9 (NaN, negative, huge or text): written without them",
        ),
        (
            tally.cut,
            "replies were longer than --max-reply-bytes (the server ignored max_tokens?): "
            "written cut there, with finish_reason length and cut_by max_reply_bytes",
        ),
    )
    for count, what in counted:
        if count:
            log.warning("%d %s", count, what)
    if tally.interrupted:
        log.warning("interrupted: every finished sample is kept; rerun to resume")
    if hint:
        log.warning("%s", hint)


def print_run_line(
    output: Path, present: int, total: int, files: int, shard: Shard | None, mine: int | None,
    owned: int,
) -> None:  # fmt: skip
    """The run as a whole, after a shard or a run with shards' files: the samples its files
    hold now (and this shard's), on stdout."""
    state = "complete" if present >= total else f"{total - present} missing"
    head = f"shard {shard} has {mine} of its {owned} samples; " if shard else ""
    where = f"{files} file" + "s" * (files != 1)
    print(f"infer: {head}the run {output} holds {present} of {total} samples in {where} ({state})")
