"""Scaling benchmark: `llmeval eval` on 1x, 4x and 16x the samples of the MATH-500-like run
(60 problems x 64, 256, 1024 samples; 20k-character reasoning; up to ~1.3 GB), cold (2
workers) and warm: time per sample should stay flat and memory per worker should not grow.

    .venv/bin/python -m bench.bench_scaling [--runs 2] [--scales 1,4,16]

More samples of the same run give mostly the same distinct (gold, answer) pairs, so a bigger
file costs more reading, not more verification. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from bench.bench_eval import cold, warm
from bench.harness import Measure, machine, table
from tests.support.synthetic import math500_run


def scaled_file(folder: Path, base: list[dict], scale: int, n: int) -> Path:
    """`scale` copies of each base sample under new sample indices, written as a stream."""
    path = folder / f"math500_x{scale}.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for row in base:
            for copy in range(scale):
                out = dict(row, sample_idx=row["sample_idx"] + copy * n)
                handle.write(json.dumps(out, ensure_ascii=False) + "\n")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--problems", type=int, default=60)
    parser.add_argument("--n", type=int, default=64)
    parser.add_argument("--chars", type=int, default=20_000)
    parser.add_argument("--scales", default="1,4,16")
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    print(machine())
    scales = [int(s) for s in args.scales.split(",")]
    results: dict[int, tuple[int, float, Measure, Measure]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        base = math500_run(args.problems, args.n, args.chars)
        for scale in scales:
            path = scaled_file(Path(tmp), base, scale, args.n)
            size_mb = path.stat().st_size / 1e6
            results[scale] = (
                len(base) * scale,
                size_mb,
                cold(path, 2, args.runs),
                warm(path, args.runs),
            )
            path.unlink()
            path.with_name(path.name + ".verdicts.jsonl").unlink(missing_ok=True)
    print(f"\nmachine at the end: {machine()}")
    rows = []
    first = results[scales[0]]
    for scale, (samples, size_mb, c, w) in results.items():
        rows.append(
            [
                f"{scale}x",
                samples,
                size_mb,
                c.wall,
                c.cpu,
                1e3 * c.cpu / samples,
                w.wall,
                w.cpu,
                1e3 * w.cpu / samples,
                c.main_mb,
                c.grandchild_mb,
            ]
        )
    print(f"\n{args.runs} runs after a warm-up, medians; cold = 2 workers, empty cache")
    headers = ["scale", "samples", "MB", "cold s", "cold cpu", "ms/sample", "warm s"]
    headers += ["warm cpu", "ms/sample", "main MB", "worker MB"]
    table("eval scaling", headers, rows)
    last = results[scales[-1]]
    ratio_cold = (last[2].cpu / last[0]) / (first[2].cpu / first[0])
    ratio_warm = (last[3].cpu / last[0]) / (first[3].cpu / first[0])
    worker_growth = last[2].grandchild_mb / max(first[2].grandchild_mb, 1e-9)
    figures = [
        ["cold CPU per sample, largest / 1x", "<= 1 (linear)", ratio_cold, _met(ratio_cold <= 1.1)],
        ["warm CPU per sample, largest / 1x", "<= 1 (linear)", ratio_warm, _met(ratio_warm <= 1.1)],
        ["worker peak MB, largest / 1x", "flat (1)", worker_growth, _met(worker_growth <= 1.1)],
    ]
    table("figures", ["figure", "target", "measured", "met"], figures)


def _met(ok: bool) -> str:
    return "yes" if ok else "NO"


if __name__ == "__main__":
    main()
