"""Infer benchmark: `llmeval infer` end to end (its own process, writing its output) against
the loopback test server (its own process) answering instantly, or after a latency.

    .venv/bin/python -m bench.bench_infer [--runs 3] [--only throughput,chunks,latency,stream]

1. throughput: samples/s with 64, 256 and 1024 in flight, streamed and not; client CPU per
   sample; server CPU share.
2. chunks: SSE chunks/s parsed, streamed 400-token answers, 256 in flight.
3. latency: 0.5 s per answer, 256 in flight: achieved / ideal rate (in flight / latency),
   end to end over 256 x 16 samples (8 s) and 256 x 120 (60 s), and in the steady state of
   the longer run.
4. stream: 2,000-token answers streamed at 100 tokens/s, 256 in flight: achieved / ideal.
CPU is user+sys of the process (less sensitive to the machine's load than wall time).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

from bench.harness import (
    PYTHON,
    LineCounter,
    Measure,
    _cpu_s,
    machine,
    measure,
    med,
    median_measure,
    repeat,
    table,
)
from llmeval.tasks import DATA_DIR

PROBLEMS = DATA_DIR / "math500.jsonl"


@contextmanager
def server(*flags: str) -> Iterator[tuple[str, int]]:
    """The test server in its own process; yields (base URL, pid)."""
    cmd = [PYTHON, "-m", "tests.support.openai_server", "--port", "0", *flags]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip(), proc.pid
    finally:
        proc.terminate()
        proc.wait(10)


def infer(
    url: str, out: Path, n: int, workers: int, *flags: str, problems: Path = PROBLEMS
) -> list[str]:
    return [
        PYTHON, "-m", "llmeval", "-q", "infer", "--input", str(problems), "--output", str(out),
        "--base-url", url, "--n-samples", str(n), "--max-workers", str(workers),
        "--progress", "plain", "--progress-interval", "3600", *flags,
    ]  # fmt: skip


def run_infer(url: str, pid: int, n: int, workers: int, *flags: str) -> Measure:
    """One fresh infer run (500 problems x n); extra: samples, chunks, server CPU seconds."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "math500.jsonl"
        before = _cpu_s(pid)
        m = measure(infer(url, out, n, workers, *flags))
        m.extra["server_cpu"] = _cpu_s(pid) - before
        tokens = samples = 0
        with out.open("rb") as handle:
            for line in handle:
                row = json.loads(line)
                samples += 1
                tokens += (row.get("usage") or {}).get("completion_tokens") or 0
        m.extra["samples"] = samples
        m.extra["chunks"] = tokens + 4 * samples  # role, tokens, finish, usage, [DONE]
    return m


def throughput(runs: int) -> list[list[object]]:
    rows = []
    with server() as (url, pid):
        for stream in (False, True):
            for workers in (64, 256, 1024):
                flags = ["--stream" if stream else "--no-stream"]
                m = median_measure(repeat(partial(run_infer, url, pid, 8, workers, *flags), runs))
                rate = m.extra["samples"] / m.wall
                rows.append(
                    ["yes" if stream else "no", workers, rate, 1e6 * m.cpu / m.extra["samples"],
                     m.extra["server_cpu"] / m.wall, m.main_mb]
                )  # fmt: skip
    return rows


def chunks(runs: int) -> list[list[object]]:
    rows = []
    with server("--min-words", "400", "--max-words", "400") as (url, pid):
        flags = ["--stream", "--max-tokens", "1000"]
        m = median_measure(repeat(partial(run_infer, url, pid, 2, 256, *flags), runs))
        rows.append(
            [m.extra["chunks"] / m.wall, 1e6 * m.cpu / m.extra["chunks"],
             m.extra["server_cpu"] / m.wall]
        )  # fmt: skip
    return rows


def utilisation(runs: int, stream: bool) -> list[list[object]]:
    """256 in flight on 256 problems, full rounds: 0.5 s latency (whole answers, 16 rounds),
    or 2,000 tokens at 100 tokens/s (streamed, 2 rounds of 20 s). Ideal time = samples x
    seconds per answer / 256. Start-up (the same command again on the finished output:
    imports, server check, resume scan) is reported apart. Whole answers also get one longer
    run (256 x 120, ideal 60 s) whose steady state is read from its output as it grows: the
    rate between 25% and 75% of its lines, over the ideal rate (what an hours-long run sees)."""
    if stream:
        server_flags = ["--token-rate", "100", "--min-words", "2000", "--max-words", "2000"]
        seconds, n, runs = 20.0, 2, 1
        infer_flags = ["--stream", "--max-tokens", "2000"]
    else:
        server_flags, seconds, n = ["--latency", "0.5"], 0.5, 16
        infer_flags = ["--no-stream"]
    rows = []
    with server(*server_flags) as (url, pid), tempfile.TemporaryDirectory() as tmp:
        problems = Path(tmp) / "math500.jsonl"
        problems.write_text("".join(PROBLEMS.open().readlines()[:256]))
        out = Path(tmp) / "out.jsonl"
        args = (url, out, n, 256, *infer_flags)
        walls, startups, cpus, server_cpus = [], [], [], []
        for _ in range(runs):
            _fresh(out)
            before = _cpu_s(pid)
            m = measure(infer(*args, problems=problems))
            server_cpus.append((_cpu_s(pid) - before) / m.wall)
            walls.append(m.wall)
            cpus.append(m.cpu)
            startups.append(measure(infer(*args, problems=problems)).wall)
        wall, startup = med(walls), med(startups)
        ideal = 256 * n * seconds / 256
        util, util_run = ideal / wall, ideal / (wall - startup)
        row = [256 * n, wall, startup, ideal, util, util_run, med(cpus)]
        if not stream:
            _fresh(out)
            counter = LineCounter(out)
            counter.start()
            long = measure(infer(url, out, 120, 256, *infer_flags, problems=problems))
            counter.done.set()
            counter.join()
            row += [60 / long.wall, counter.rate(0.25, 0.75) / (256 / seconds)]
            row.append(1e6 * long.cpu / (256 * 120))
        rows.append([*row, med(server_cpus)])
    return rows


def _fresh(out: Path) -> None:
    for path in out.parent.glob(out.name + "*"):  # the output, its spec and lock
        path.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", default="throughput,chunks,latency,stream")
    args = parser.parse_args()
    parts = set(args.only.split(","))
    print(machine())
    results = {}
    if "throughput" in parts:
        results["throughput"] = throughput(args.runs)
    if "chunks" in parts:
        results["chunks"] = chunks(args.runs)
    if "latency" in parts:
        results["latency"] = utilisation(args.runs, stream=False)
    if "stream" in parts:
        results["stream"] = utilisation(args.runs, stream=True)
    print(f"\nmachine at the end: {machine()}")
    print(f"MATH-500 problems; medians of {args.runs} runs after a warm-up unless noted")
    figures = []
    if "throughput" in results:
        table(
            "infer end to end, instant server (500 x 8 samples)",
            ["stream", "in flight", "samples/s", "cpu us/sample", "server cpu", "MB"],
            results["throughput"],
        )
        rate = {(r[0], r[1]): r[2] for r in results["throughput"]}[("no", 256)]
        figures.append(["samples/s, 256 in flight, whole", ">= 500", rate, _met(rate >= 500)])
    if "chunks" in results:
        table(
            "streamed chunks, 400-token answers, 256 in flight (500 x 2)",
            ["chunks/s", "cpu us/chunk", "server cpu"],
            results["chunks"],
        )
        for row in results["chunks"]:
            figures.append(["chunks/s parsed", ">= 50000", row[0], _met(row[0] >= 50_000)])
    titles = {
        "latency": "0.5 s latency, whole answers (256 x 16), 256 in flight",
        "stream": "2,000 tokens at 100 tokens/s (256 x 2, one run), 256 in flight",
    }
    for part, title in titles.items():
        if part in results:
            headers = ["samples", "wall s", "start-up s", "ideal s", "util", "util ex start-up"]
            headers += ["cpu s"]
            if part == "latency":
                headers += ["util 256x120", "util steady 256x120", "cpu us/sample 256x120"]
            table(title, [*headers, "server cpu"], results[part])
            for row in results[part]:
                figures.append([f"utilisation, {part} (info)", "", row[4], ""])
                if part == "latency":
                    figures.append(["utilisation, 60 s run, end to end", ">= 0.95", row[7],
                                    _met(row[7] >= 0.95)])  # fmt: skip
                    figures.append(["  same, steady state (info)", "", row[8], ""])
    table("figures", ["figure", "target", "measured", "met"], figures)


def _met(ok: bool) -> str:
    return "yes" if ok else "NO"


if __name__ == "__main__":
    main()
