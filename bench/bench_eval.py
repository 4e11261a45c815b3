"""Benchmark of `llmeval eval` on a synthetic MATH-500-like run (60 problems x 64 samples,
20k-character reasoning): cold with 1 and 2 workers, warm, +10% samples, bare read time.

    .venv/bin/python bench/bench_eval.py [--problems 60] [--n 64] [--chars 20000]

Each eval runs as its own process (`python -m llmeval eval`), as a user would run it.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from llmeval.testing.synthetic import math500_run, write_jsonl


def _eval(path: Path, *extra: str) -> tuple[float, dict]:
    result = path.with_suffix(".result.json")
    argv = [sys.executable, "-m", "llmeval", "-q", "eval", str(path), "--no-progress"]
    start = time.perf_counter()
    subprocess.run([*argv, "--result-json", str(result), *extra], check=True, capture_output=True)
    return time.perf_counter() - start, json.loads(result.read_text())


def _bare_read(path: Path) -> float:
    start = time.perf_counter()
    with path.open("rb") as handle:
        for line in handle:
            json.loads(line)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--problems", type=int, default=60)
    parser.add_argument("--n", type=int, default=64)
    parser.add_argument("--chars", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = math500_run(args.problems, args.n, args.chars)
        base = rows[: len(rows) * 10 // 11]
        path = write_jsonl(Path(tmp) / "math500_bench.jsonl", base)
        size_mb = path.stat().st_size / 1e6
        bare = _bare_read(path)
        print(f"{len(base)} samples, {size_mb:.0f} MB; bare read+json.loads {bare:.2f} s")
        cache = path.with_name(path.name + ".verdicts.jsonl")
        for workers in (1, 2):
            cache.unlink(missing_ok=True)
            seconds, result = _eval(path, "--workers", str(workers))
            pairs = result["cache"]["new"]
            print(
                f"cold, {workers} worker(s): {seconds:.2f} s = {len(base) / seconds:.0f} samples/s "
                f"({pairs} distinct pairs verified)"
            )
        seconds, result = _eval(path)
        print(f"warm: {seconds:.2f} s (verified {result['cache']['new']})")
        write_jsonl(path, rows)
        seconds, result = _eval(path)
        print(f"+10% samples: {seconds:.2f} s (verified {result['cache']['new']} new pairs)")
        print(f"accuracy {result['tasks'][0]['accuracy']:.4f}")


if __name__ == "__main__":
    main()
