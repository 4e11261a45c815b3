"""Command line of the loopback OpenAI server: `python -m tests.support.openai_server`.

Prints the base URL on the first stdout line, then serves until SIGINT/SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from collections.abc import Sequence

from tests.support.fake_model import load_answers
from tests.support.faults import FAULTS, parse_faults, parse_schedule
from tests.support.openai_server import OpenAIServer, ServerConfig


def build_parser() -> argparse.ArgumentParser:
    """Flags mirror `ServerConfig`."""
    p = argparse.ArgumentParser(prog="python -m tests.support.openai_server")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="0: an ephemeral port")
    p.add_argument("--model", action="append", help="served model name (repeatable)")
    p.add_argument("--answers", help="problems JSONL (problem/prompt + answer) for gold answers")
    p.add_argument("--accuracy", type=float, default=0.5, help="fraction of gold answers")
    p.add_argument("--min-words", type=int, default=20)
    p.add_argument("--max-words", type=int, default=80)
    p.add_argument("--wrong-longer", action="store_true", help="wrong answers run longer")
    p.add_argument(
        "--reasoning-field",
        choices=["reasoning_content", "reasoning"],
        help="split the reasoning out into this message field",
    )
    p.add_argument("--latency", type=float, default=0.0, help="seconds before each answer")
    p.add_argument("--latency-jitter", type=float, default=0.0, help="plus uniform 0..S seconds")
    p.add_argument(
        "--token-rate",
        type=float,
        default=0.0,
        help="streamed tokens/s, sent every 50 ms (0: at once)",
    )
    p.add_argument("--max-context", type=int, help="context-length 400 above this many tokens")
    p.add_argument("--faults", default="", help=f"KIND=RATE,... kinds: {' '.join(FAULTS)}")
    p.add_argument("--schedule", default="", help="N:KIND,... faults for chat request N (0-based)")
    p.add_argument("--slow-delay", type=float, default=1.0, help="seconds a 'slow' fault waits")
    p.add_argument("--fault-seed", type=int, default=0)
    p.add_argument("--huge-bytes", type=int, default=64 << 20, help="size of a 'huge' reply")
    p.add_argument("--api-key", help="require this bearer token")
    p.add_argument("--tools", action="store_true", help="play a model that runs Python")
    return p


def config_from_args(args: argparse.Namespace) -> ServerConfig:
    """A `ServerConfig` from parsed flags."""
    return ServerConfig(
        host=args.host,
        port=args.port,
        models=tuple(args.model or ["test-model"]),
        answers=load_answers(args.answers) if args.answers else {},
        accuracy=args.accuracy,
        min_words=args.min_words,
        max_words=args.max_words,
        wrong_longer=args.wrong_longer,
        reasoning_field=args.reasoning_field,
        latency=args.latency,
        latency_jitter=args.latency_jitter,
        token_rate=args.token_rate,
        max_context=args.max_context,
        faults=parse_faults(args.faults),
        schedule=parse_schedule(args.schedule),
        slow_delay=args.slow_delay,
        fault_seed=args.fault_seed,
        huge_bytes=args.huge_bytes,
        api_key=args.api_key,
        tools=args.tools,
    )


async def _serve(config: ServerConfig) -> None:
    server = OpenAIServer(config)
    url = await server.start()
    print(url, flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.stop()
    print(dict(server.stats), file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> None:
    """Parse flags and serve until a signal."""
    args = build_parser().parse_args(argv)
    try:
        config = config_from_args(args)
    except (ValueError, OSError) as exc:
        print(f"openai_server: error: {exc}", file=sys.stderr)
        sys.exit(2)
    asyncio.run(_serve(config))
