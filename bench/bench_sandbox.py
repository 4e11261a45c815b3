"""Sandbox calls per second on this machine, each call a fresh isolated process: started on
demand (fresh) and started ahead (prewarmed), for a one-line program and one that imports
sympy; and llmeval's own overhead per turn of a tool conversation (the loopback server as the
model, every call answered from the cache).

    python -m bench.bench_sandbox [--calls 200] [--in-flight 4]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from pathlib import Path

from bench.harness import machine
from llmeval.sandbox import Sandbox
from llmeval.transcripts import ToolSettings
from tests.infer_helpers import infer, write_jsonl
from tests.support.threaded_server import serve

PROGRAMS = {
    "print": "print(6 * 7)",
    "sympy": "import sympy\nx = sympy.Symbol('x')\nprint(sympy.factor(x**2 - 1))",
}


async def _calls(box: Sandbox, code: str, calls: int, in_flight: int) -> float:
    """Calls per second over `calls` distinct programs, `in_flight` at once (no cache)."""
    queue = iter(range(calls))

    async def worker() -> None:
        for i in queue:
            result = await box.run(f"{code}\n# {i}")
            assert result.status == "ok", result

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(in_flight)))
    return calls / (time.perf_counter() - start)


def sandbox_rates(calls: int, in_flight: int) -> tuple[list[tuple[str, str, int, float]], str]:
    """(program, fresh|prewarmed, processes started ahead, calls/s) and the isolation."""
    out, isolation = [], ""
    for name, code in PROGRAMS.items():
        n = calls if name == "print" else max(10, calls // 10)
        for prewarm in (0, in_flight):
            box = Sandbox(ToolSettings(), prewarm=prewarm)
            try:
                box.warm()
                rate = asyncio.run(_calls(box, code, n, in_flight))
                isolation = box.info.isolation
            finally:
                box.close()
            out.append((name, "prewarmed" if prewarm else "fresh", prewarm, rate))
    return out, isolation


def turn_overhead(samples: int) -> tuple[float, float]:
    """llmeval's wall and CPU milliseconds per turn of a 3-call conversation whose calls are
    all answered from the cache (a second run over a copy of the first's cache)."""
    problems = [{"id": f"p{i}", "problem": f"Problem {i}, calls=3", "answer": str(i + 20)}
                for i in range(samples)]  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp, serve(tools=True) as srv:
        folder = Path(tmp)
        inp = write_jsonl(folder / "in.jsonl", problems)
        flags = ["--tools", "python", "--model", "test-model", "--task", "math", "--progress",
                 "plain", "--progress-interval", "60", "--max-workers", "64"]  # fmt: skip
        assert infer(srv.url, inp, folder / "a.jsonl", *flags) == 0
        (folder / "b.jsonl.tools.jsonl").write_bytes((folder / "a.jsonl.tools.jsonl").read_bytes())
        wall, cpu = time.perf_counter(), time.process_time()
        assert infer(srv.url, inp, folder / "b.jsonl", *flags) == 0
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        lines = (folder / "b.jsonl").read_text().splitlines()
        turns = sum(len(json.loads(line)["turns"]) for line in lines)
    return 1000 * wall / turns, 1000 * cpu / turns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--in-flight", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--samples", type=int, default=300)
    args = parser.parse_args()
    print(machine())
    rates, isolation = sandbox_rates(args.calls, args.in_flight)
    print(f"isolation: {isolation}; {args.in_flight} calls in flight")
    for name, how, ahead, rate in rates:
        print(f"  {name:6s} {how:9s} ({ahead} started ahead): {rate:6.1f} calls/s")
    wall, cpu = turn_overhead(args.samples)
    print(f"llmeval per turn (calls from the cache, server in-process): {wall:.2f} ms wall, "
          f"{cpu:.2f} ms CPU (the server's included)")  # fmt: skip


if __name__ == "__main__":
    main()
