"""Resume benchmark: `llmeval infer` writing a 1 GB output (MATH-500 x 64 samples of ~30k
characters from the loopback server), then resuming on it: time and peak memory to scan the
file and plan what is missing.

    .venv/bin/python -m bench.bench_resume [--runs 3] [--n 64] [--words 5000]

1. write: one run (about 32,000 requests): wall, samples/s, peak RSS of infer (VmHWM).
2. resume, nothing missing: the same command again (start-up, server check, scan, plan).
3. resume, 10% missing: the output without every 10th line; that scan plus 3,200 requests.
4. scan + plan alone (`resume.done_keys` + `infer.plan`) in a fresh process.
Scans run with the file in the page cache (the machine cannot drop caches). Prints figures.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from bench.bench_infer import PROBLEMS, infer, server
from bench.harness import PYTHON, _cpu_s, machine, measure, median_measure, repeat, table

SCAN = """
import sys
from llmeval.infer.run import plan
from llmeval.problems import load_problems
from llmeval.infer.resume import done_keys
done = done_keys(sys.argv[1])
jobs = list(plan(load_problems(sys.argv[2]), int(sys.argv[3]), done, 0))
print(len(done), len(jobs))
"""


def drop_every_tenth(src: Path, dst: Path) -> int:
    """Copy `src` without every 10th line; returns the lines dropped."""
    dropped = 0
    with src.open("rb") as inp, dst.open("wb") as out:
        for i, line in enumerate(inp):
            if i % 10 == 9:
                dropped += 1
            else:
                out.write(line)
    return dropped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--n", type=int, default=64)
    parser.add_argument("--words", type=int, default=5000)
    args = parser.parse_args()
    print(machine())
    words = ["--min-words", str(args.words), "--max-words", str(args.words + 200)]
    flags = ["--no-stream", "--timeout", "120"]
    with server(*words) as (url, pid), tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "math500.jsonl"
        before = _cpu_s(pid)
        write = measure(infer(url, out, args.n, 256, *flags))
        server_cpu = _cpu_s(pid) - before
        size_gb = out.stat().st_size / 1e9
        lines = sum(1 for _ in out.open("rb"))
        again = median_measure(
            repeat(lambda: measure(infer(url, out, args.n, 256, *flags)), args.runs)
        )
        scan_code = [PYTHON, "-c", SCAN, str(out), str(PROBLEMS), str(args.n)]
        scan = median_measure(repeat(lambda: measure(scan_code), args.runs))
        partial = Path(tmp) / "partial" / "math500.jsonl"
        partial.parent.mkdir()

        def resume_partial():
            dropped = drop_every_tenth(out, partial)
            for suffix in (".spec.json",):
                Path(f"{partial}{suffix}").write_bytes(Path(f"{out}{suffix}").read_bytes())
            m = measure(infer(url, partial, args.n, 256, *flags))
            m.extra["dropped"] = dropped
            return m

        ten = median_measure(repeat(resume_partial, args.runs, warmup=0))
    print(f"\nmachine at the end: {machine()}")
    rows = [
        ["write (one run)", lines, write.wall, write.cpu, lines / write.wall, write.main_mb],
        ["resume, nothing missing", 0, again.wall, again.cpu, "", again.main_mb],
        ["resume, 10% missing", ten.extra["dropped"], ten.wall, ten.cpu, "", ten.main_mb],
        ["scan + plan only (process)", 0, scan.wall, scan.cpu, "", scan.main_mb],
    ]
    print(f"\noutput {size_gb:.2f} GB, {lines} samples; medians of {args.runs} runs")
    print(f"the test server used {server_cpu:.1f} s CPU while the output was written")
    table(
        "infer on a 1 GB output",
        ["run", "requests", "wall s", "cpu s", "samples/s", "peak MB"],
        rows,
    )
    figures = [
        ["resume scan + plan (s)", "<= 5", again.wall, _met(again.wall <= 5)],
        ["resume peak memory (MB)", "<= 300", again.main_mb, _met(again.main_mb <= 300)],
        [
            "infer peak memory writing 1 GB (MB)",
            "<= 300",
            write.main_mb,
            _met(write.main_mb <= 300),
        ],
    ]
    table("figures", ["figure", "target", "measured", "met"], figures)


def _met(ok: bool) -> str:
    return "yes" if ok else "NO"


if __name__ == "__main__":
    main()
