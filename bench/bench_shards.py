"""Shards benchmark: K `llmeval infer --shard k/K` client processes at once (K = 1, 2 and the
core count) against one fast loopback streaming server in its own process, the way a node's
shards or several clients share a machine: aggregate streamed tokens/s and its ratio to one
process, so the scaling of the client side is measured, not assumed.

    .venv/bin/python -m bench.bench_shards [--runs 3] [--ks 1,2,4] [--n 4] [--workers 128]

MATH-500 problems x n samples of 400-token answers streamed at once by the test server (its
CPU share is shown: a figure where it nears 1.0 is the server's limit, not the clients').
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import tempfile
from functools import partial
from pathlib import Path

from bench.bench_infer import infer, server
from bench.harness import Measure, _cpu_s, machine, measure, median_measure, repeat, table
from llmeval.runs.layout import RunFiles
from llmeval.runs.pairs import Shard

# the commands given at once; fails when any does
_ALL = """pids=()
for c in "$@"; do bash -c "$c" & pids+=($!); done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=$?; done
exit $rc"""


def run_shards(url: str, pid: int, k: int, n: int, workers: int) -> Measure:
    """One fresh run split over `k` processes; extra: tokens, samples, server CPU seconds."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "math500.jsonl"
        flags = ["--stream", "--max-tokens", "1000"]
        commands = [
            shlex.join(infer(url, out, n, workers, *flags, "--shard", str(Shard(i, k))))
            for i in range(k)
        ]
        before = _cpu_s(pid)
        m = measure(["bash", "-c", _ALL, "shards", *commands])
        m.extra["server_cpu"] = _cpu_s(pid) - before
        tokens = samples = 0
        for path in RunFiles.of(out).files:
            for line in path.read_bytes().splitlines():
                samples += 1
                tokens += (json.loads(line).get("usage") or {}).get("completion_tokens") or 0
        m.extra |= {"tokens": tokens, "samples": samples}
    return m


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--ks", help="process counts (default: 1, 2 and the core count)")
    parser.add_argument("--n", type=int, default=4, help="samples per MATH-500 problem")
    parser.add_argument("--workers", type=int, default=128, help="requests in flight per process")
    args = parser.parse_args()
    ks = sorted({int(k) for k in args.ks.split(",")} if args.ks else {1, 2, os.cpu_count() or 1})
    print(machine())
    results = {}
    with server("--min-words", "400", "--max-words", "400") as (url, pid):
        for k in ks:
            run = partial(run_shards, url, pid, k, args.n, args.workers)
            results[k] = median_measure(repeat(run, args.runs))
    print(f"\nmachine at the end: {machine()}")
    one = results[ks[0]].extra["tokens"] / results[ks[0]].wall
    rows = []
    for k, m in results.items():
        rate = m.extra["tokens"] / m.wall
        rows.append([k, int(m.extra["samples"]), int(m.extra["tokens"]), m.wall, rate,
                     rate / one, m.cpu, m.extra["server_cpu"] / m.wall])  # fmt: skip
    headers = ["processes", "samples", "tokens", "wall s", "tokens/s", f"x {ks[0]} process"]
    title = (
        f"client processes at once, 500 problems x {args.n} streamed 400-token answers, "
        f"{args.workers} in flight each; medians of {args.runs} runs after a warm-up"
    )
    table(title, [*headers, "clients cpu s", "server cpu"], rows)


if __name__ == "__main__":
    main()
