"""Benchmark of `llmeval report` on a synthetic MATH-500 run (500 problems x 64 samples,
about 2k characters of varied text each): eval first (fills the verdict cache), then the
report from the cache; prints the times and the HTML size (gzip texts and plain JSON).

    .venv/bin/python -m bench.bench_report [--problems 500] [--n 64] [--chars 2000]

Each command runs as its own process, as a user would run it. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from llmeval.tasks import DATA_DIR
from tests.support.report_fixtures import prose
from tests.support.synthetic import generation, write_jsonl


def rows(problems: int, n: int, chars: int, seed: int = 0) -> list[dict]:
    """Half right answers, the rest wrong or missing; each text drawn anew."""
    rng = random.Random(seed)
    data = [json.loads(line) for line in (DATA_DIR / "math500.jsonl").open()][:problems]
    out = []
    for prob in data:
        for idx in range(n):
            roll = rng.random()
            final = (
                prob["answer"] if roll < 0.5 else None if roll > 0.9 else str(rng.randint(1, 40))
            )
            tail = "" if final is None else f"$$\\boxed{{{final}}}$$"
            gen = "<think>\n" + prose(rng, chars) + "\n</think>\n\nSo the result follows.\n" + tail
            meta = {"subject": prob["subject"], "level": prob["level"]}
            timing = {"latency_s": rng.uniform(5, 60), "ttft_s": rng.uniform(0.1, 1)}
            out.append(generation(prob["id"], idx, prob["answer"], gen, meta=meta, **timing))
    return out


def _run(*argv: str) -> float:
    start = time.perf_counter()
    cmd = [sys.executable, "-m", "llmeval", "-q", *argv, "--no-progress"]
    subprocess.run(cmd, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--problems", type=int, default=500)
    parser.add_argument("--n", type=int, default=64)
    parser.add_argument("--chars", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = write_jsonl(
            Path(tmp) / "math500_bench.jsonl", rows(args.problems, args.n, args.chars)
        )
        print(f"input: {args.problems} x {args.n} samples, {path.stat().st_size / 1e6:.1f} MB")
        print(f"eval (cold cache): {_run('eval', str(path)):.1f} s")
        for flag in ((), ("--no-compress",)):
            out = Path(tmp) / "report.html"
            seconds = _run("report", str(path), "--out", str(out), *flag)
            label = "plain JSON texts" if flag else "gzip texts"
            print(
                f"report ({label}, warm cache): {seconds:.1f} s, {out.stat().st_size / 1e6:.1f} MB"
            )


if __name__ == "__main__":
    main()
