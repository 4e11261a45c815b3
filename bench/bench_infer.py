"""Throughput of the infer client against the loopback server (run in its own process).

Prints completed requests/s (non-streamed), SSE chunks/s parsed (streamed), and utilisation
(achieved / ideal rate) at a fixed server latency. Figures only; nothing is asserted.
Usage: python bench/bench_infer.py [--requests 4000] [--in-flight 256]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager

from llmeval import client as client_module
from llmeval.chat import build_body
from llmeval.client import ChatClient, ClientConfig

HTTP = ["fast"]  # the transport measured (set from --http)
ROUNDS = 16  # requests per worker in the latency run


@contextmanager
def server(*flags: str) -> Iterator[str]:
    """The test server in a subprocess (so it does not share our GIL); yields its URL."""
    cmd = [sys.executable, "-m", "llmeval.testing.openai_server", "--port", "0", *flags]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip()
    finally:
        proc.terminate()
        proc.wait(10)


async def drive(url: str, n: int, in_flight: int, stream: bool, max_tokens: int) -> float:
    """Seconds to complete `n` requests with `in_flight` workers."""
    config = ClientConfig(
        base_urls=[url], stream=stream, max_workers=in_flight, max_retries=0, http=HTTP[0]
    )
    msgs = [{"role": "user", "content": "What is 6 times 7?"}]
    bodies = [
        build_body("test-model", msgs, max_tokens=max_tokens, seed=i, stream=stream, sampling={})
        for i in range(n)
    ]
    async with ChatClient(config) as client:
        pending = iter(bodies)

        async def worker() -> None:
            for body in pending:
                await client.complete(body)

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(in_flight)))
        return time.perf_counter() - start


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--requests", type=int, default=4000)
    p.add_argument("--in-flight", type=int, default=256)
    p.add_argument("--shard-size", type=int, default=client_module.SHARD_SIZE)
    p.add_argument("--only", choices=["whole", "stream", "latency", "cli"])
    p.add_argument("--http", choices=["fast", "httpx"], default="fast")
    args = p.parse_args()
    HTTP[0] = args.http
    client_module.SHARD_SIZE = args.shard_size
    n, k = args.requests, args.in_flight
    if args.only in (None, "whole"):
        whole(n, k)
    if args.only in (None, "stream"):
        streamed(n, k)
    if args.only in (None, "latency"):
        latency(k)
    if args.only in (None, "cli"):
        cli(k)


def cli(k: int) -> None:
    """`llmeval infer` end to end as a process: MATH-500 x 4, non-streamed, instant server."""
    with server() as url, tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "llmeval", "infer", "--input", "data/math500.jsonl",
               "--output", f"{tmp}/out.jsonl", "--base-url", url, "--n-samples", "4",
               "--no-stream", "--max-workers", str(k), "--http", HTTP[0]]  # fmt: skip
        start = time.perf_counter()
        done = subprocess.run(cmd, check=True, capture_output=True, text=True)
        secs = time.perf_counter() - start
        print(f"llmeval infer (process, MATH-500 x 4, {k} workers): {2000 / secs:,.0f} samples/s "
              f"including start-up; its own line: {done.stdout.strip()}")  # fmt: skip


def whole(n: int, k: int) -> None:
    """Non-streamed requests against an instant server."""
    with server() as url:
        asyncio.run(drive(url, 200, k, False, 50))  # warm up
        cpu = time.process_time()
        secs = asyncio.run(drive(url, n, k, False, 50))
        cpu = time.process_time() - cpu
        print(f"non-streamed, {k} in flight: {n / secs:,.0f} samples/s "
              f"(client CPU {1e6 * cpu / n:.0f} us/sample)")  # fmt: skip


def streamed(n: int, k: int) -> None:
    """Streamed 400-token replies: SSE chunks parsed per second."""
    with server("--min-words", "400", "--max-words", "400") as url:
        m = max(200, n // 10)
        cpu = time.process_time()
        secs = asyncio.run(drive(url, m, min(k, 64), True, 1000))
        cpu = time.process_time() - cpu
        chunks = m * 404  # role chunk + ~400 token chunks + finish + usage
        print(f"streamed, {min(k, 64)} in flight: {chunks / secs:,.0f} SSE chunks/s parsed "
              f"(client CPU {1e6 * cpu / chunks:.1f} us/chunk)")  # fmt: skip


def latency(k: int) -> None:
    """Utilisation at 0.5 s per request: achieved / ideal rate."""
    with server("--latency", "0.5") as url:
        m = k * ROUNDS
        secs = asyncio.run(drive(url, m, k, False, 50))
        ideal = k / 0.5
        print(f"latency 0.5 s, {k} in flight: {m / secs:,.0f} samples/s, "
              f"utilisation {m / secs / ideal:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
