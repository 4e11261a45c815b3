"""Requests per second through `llmeval infer` against a real llama-server (tiny model or SmolLM2).

Usage: .venv/bin/python -m bench.bench_llama_server [--model tiny|smollm] [--samples N]
       [--max-tokens T]
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

from scripts.local.llama_build import ensure_llama_server
from scripts.local.llama_server import LlamaServer
from scripts.local.smollm import ensure_smollm2
from scripts.local.tiny_model import write_tiny_model

DATA = Path(__file__).resolve().parent.parent / "data"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", choices=("tiny", "smollm"), default="tiny")
    parser.add_argument("--samples", type=int, default=4, help="samples per problem")
    parser.add_argument("--problems", type=int, default=50)
    parser.add_argument("--max-tokens", type=int, default=16)
    parser.add_argument("--parallel", type=int, default=4, help="server slots")
    parser.add_argument("--workers", type=int, default=8, help="requests in flight")
    parser.add_argument("--no-stream", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        tiny = args.model == "tiny"
        model = write_tiny_model(tmp / "tiny.gguf") if tiny else ensure_smollm2()
        inp = tmp / "math500.jsonl"
        lines = (DATA / "math500.jsonl").read_text().splitlines()[: args.problems]
        inp.write_text("\n".join(lines) + "\n")
        out = tmp / "out.jsonl"
        server = LlamaServer(
            ensure_llama_server(), model, alias="bench", parallel=args.parallel,
            ctx_per_slot=args.max_tokens + 1024,
        )  # fmt: skip
        with server:
            cmd = [
                sys.executable, "-m", "llmeval", "infer", "--input", str(inp),
                "--output", str(out), "--base-url", server.base_url, "--model", "bench",
                "--n-samples", str(args.samples), "--max-tokens", str(args.max_tokens),
                "--max-workers", str(args.workers), "--progress", "plain",
            ]  # fmt: skip
            if args.no_stream:
                cmd.append("--no-stream")
            started = time.monotonic()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            elapsed = time.monotonic() - started
        recs = [json.loads(line) for line in out.read_text().splitlines()]
        tokens = sum((r.get("usage") or {}).get("completion_tokens") or 0 for r in recs)
        mode = "no-stream" if args.no_stream else "stream"
        print(
            f"{args.model} ({mode}, {args.parallel} slots, {args.workers} in flight): "
            f"{len(recs)} requests in {elapsed:.1f} s = {len(recs) / elapsed:.1f} requests/s, "
            f"{tokens / elapsed:.0f} completion tokens/s (CLI start-up included)"
        )


if __name__ == "__main__":
    main()
