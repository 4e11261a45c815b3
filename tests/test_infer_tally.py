"""infer's progress counters and end-of-run summary: counters, CPU share, the client-bound hint."""

from __future__ import annotations

import logging
import time

import pytest

from llmeval.infer.tally import (
    Tally,
    client_bound_hint,
    counters,
    cpu_share,
    print_summary,
    stopwatch,
)
from llmeval.progress import Progress


def test_plain_progress_line() -> None:
    tally = Tally(total=200, written=50, failed=2, tokens=10_000)
    line = counters(tally, in_flight=8, retries=3, elapsed=10, cpu=4.5)
    assert line.startswith("5.0 samples/s 1,000 tok/s in flight 8")
    assert "retries 3 failed 2 ETA 0:00:29 cpu 45%" in line


def test_cpu_share_of_an_instant_is_zero() -> None:
    assert cpu_share(0.01, 0.0) == 0.0
    assert cpu_share(3.0, 4.0) == 0.75


def test_the_cpu_clock_counts_this_process_working_not_sleeping() -> None:
    cpu = stopwatch(time.process_time)
    time.sleep(0.2)
    slept = cpu()
    work = time.process_time() + 0.2  # 0.2 s of this process's CPU, however busy the machine
    while time.process_time() < work:
        pass
    assert slept < 0.1 < cpu() - slept


@pytest.mark.parametrize(
    ("stream", "cure"),
    [(True, "`--no-stream`"), (False, "several llmeval processes, each with its own --shard k/K")],
)
def test_a_client_busy_all_run_is_told_what_would_relieve_it(stream: bool, cure: str) -> None:
    hint = client_bound_hint(57.0, 60.0, stream)
    assert hint is not None
    assert "95% of a CPU core over this 60 s run" in hint
    assert cure in hint


@pytest.mark.parametrize(
    ("cpu_s", "wall_s"),
    [(50.0, 60.0), (9.5, 9.9), (0.0, 0.0)],  # busy 83%; a short run; nothing ran
)
def test_no_hint_for_a_client_with_room_or_a_short_run(cpu_s: float, wall_s: float) -> None:
    assert client_bound_hint(cpu_s, wall_s, True) is None


def test_the_summary_ends_with_the_hint(
    tmp_path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture
) -> None:
    tally = Tally(total=10)
    tally.written = 10
    with caplog.at_level(logging.WARNING, logger="llmeval"):
        print_summary(tally, tmp_path / "out.jsonl", 60.0, client_bound_hint(59, 60, True))
    assert "wrote 10 of 10 samples" in capsys.readouterr().out
    assert [r.getMessage() for r in caplog.records][-1].startswith("llmeval used 98% of a CPU")


def test_the_live_bar_shows_markup_in_its_counters_as_text(
    capsys: pytest.CaptureFixture[str],
) -> None:
    shown = Progress("infer", live=True)
    shown.update(1, 2, "[/] [link=http://x]y[/link]")
    shown.update(2, 2, "[/] [link=http://x]y[/link]", last=True)
    shown.close()
    assert "[/] [link=http://x]y[/link]" in capsys.readouterr().err
