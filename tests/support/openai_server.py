"""A loopback OpenAI-compatible chat server for tests, stress runs and benchmarks.

Deterministic text per (seed, prompt) from `FakeModel`; faults (`faults.py`) injected by
rate and/or by a schedule of request numbers. Run `python -m tests.support.openai_server --help`.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import json
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from tests.support import bad_replies, http11, replies, tool_model
from tests.support.fake_model import Completion, FakeModel, count_tokens
from tests.support.faults import FaultPicker

STREAM_TICK = 0.05  # seconds between writes of a paced (--token-rate) stream
Writer = asyncio.StreamWriter
Body = dict[str, Any]
Usage = dict[str, Any] | None
Fault = str | None


@dataclass
class ServerConfig:
    """Everything the server can be told; all faults off by default."""

    host: str = "127.0.0.1"
    port: int = 0
    models: tuple[str, ...] = ("test-model",)
    answers: dict[str, str] = field(default_factory=dict)  # problem text -> gold
    accuracy: float = 0.5
    min_words: int = 20
    max_words: int = 80
    reasoning_field: str | None = None  # "reasoning_content" or "reasoning": split it out
    latency: float = 0.0  # seconds before every chat answer
    latency_jitter: float = 0.0  # plus a uniform random 0..jitter seconds
    token_rate: float = 0.0  # streamed tokens per second (0: all at once)
    max_context: int | None = None  # prompt + max_tokens above this -> context-length 400
    faults: dict[str, float] = field(default_factory=dict)  # kind -> probability
    schedule: dict[int, str] = field(default_factory=dict)  # chat request number (0-based) -> kind
    slow_delay: float = 1.0
    huge_bytes: int = 64 << 20  # the size of a "huge" reply (which ignores max_tokens)
    fault_seed: int = 0
    api_key: str | None = None  # when set, require "Authorization: Bearer <key>"
    echo_auth: bool = False  # a refusal quotes the Authorization header and its key (gateways do)
    judge: tuple[tuple[str, str], ...] = ()  # (regex, reply): a scripted judge (fake_model)
    # what it says about itself: vLLM's /version (None: 404), the replies' system_fingerprint,
    # usage.completion_tokens_details.reasoning_tokens
    version: str | None = "0.0.0-llmeval-test"
    fingerprint: str | None = "fp_llmeval_test"
    reasoning_tokens: bool = True
    wrong_longer: bool = False  # wrong answers longer than right ones (fake_model)
    tools: bool = False  # play a model that runs Python (tool_model), in both protocols


class OpenAIServer:
    """The server; `stats` counts requests, faults and completions; `bodies` keeps chat bodies."""

    def __init__(self, config: ServerConfig | None = None) -> None:
        self.config = config or ServerConfig()
        cfg = self.config
        self.model = FakeModel(
            cfg.answers, cfg.accuracy, cfg.min_words, cfg.max_words, cfg.judge, cfg.wrong_longer
        )
        self.stats: collections.Counter[str] = collections.Counter()
        self.bodies: collections.deque[dict[str, Any]] = collections.deque(maxlen=10_000)
        self.raw_bodies: collections.deque[bytes] = collections.deque(maxlen=10_000)  # as sent
        self.auth_seen: set[str] = set()
        self.faults = FaultPicker(cfg.faults, cfg.schedule, cfg.fault_seed)
        self._server: asyncio.base_events.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self.url = ""

    async def start(self) -> str:
        """Listen; return the base URL (`http://host:port/v1`)."""
        cfg = self.config
        self._server = await asyncio.start_server(
            self._connection, cfg.host, cfg.port, limit=http11.MAX_HEAD, backlog=1024
        )
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://{cfg.host}:{port}/v1"
        return self.url

    async def stop(self) -> None:
        """Stop listening and close the server."""
        if self._server is not None:
            self._server.close()
            for writer in list(self._writers):
                writer.transport.abort()
            await self._server.wait_closed()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        drop_next = False
        self._writers.add(writer)
        try:
            while True:
                try:
                    req = await http11.read_request(reader)
                except http11.BadRequest as exc:
                    writer.write(
                        http11.json_response(exc.status, replies.error(str(exc), "bad", 400))
                    )
                    break
                if req is None:
                    break
                if drop_next:  # llama-server: the request after a stream is dropped
                    self.stats[f"{req.method} {req.path}"] += 1
                    self.stats["dropped after close_after"] += 1
                    writer.transport.abort()
                    return
                keep, drop_next = await self._dispatch(req, writer)
                if not keep or not req.keep_alive:
                    break
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass  # cancelled: the server is stopping (ending normally keeps asyncio quiet)
        except Exception as exc:  # a bug here: answer 500 and say so, rather than hang up
            self.stats["server errors"] += 1
            text = f"test server bug: {type(exc).__name__}: {exc}"
            writer.write(http11.json_response(500, replies.error(text, "ServerBug", 500)))
            print(text, file=sys.stderr, flush=True)
        finally:
            self._writers.discard(writer)
            writer.close()

    async def _dispatch(
        self, req: http11.Request, writer: asyncio.StreamWriter
    ) -> tuple[bool, bool]:
        """Serve one request; return (keep the connection, drop the next request)."""
        self.stats[f"{req.method} {req.path}"] += 1
        ka = req.keep_alive
        key = self.config.api_key
        if key is not None and req.path.startswith("/v1/"):  # (vLLM's /health needs no key)
            self.auth_seen.add(req.headers.get("authorization", ""))
            sent = req.headers.get("authorization", "")
            if sent != f"Bearer {key}":
                text = "Unauthorized: bad or missing API key"
                if self.config.echo_auth:
                    text += f" (Authorization: {sent}; key {sent.partition(' ')[2]} unknown)"
                msg = replies.error(text, "AuthenticationError", 401)
                writer.write(http11.json_response(401, msg, keep_alive=ka))
                return True, False
        if req.method == "GET" and req.path in ("/health", "/v1/health"):
            writer.write(http11.json_response(200, {"status": "ok"}, keep_alive=ka))
        elif req.method == "GET" and req.path == "/v1/models":
            data = [{"id": m, "object": "model", "owned_by": "llmeval"} for m in self.config.models]
            writer.write(http11.json_response(200, {"object": "list", "data": data}, keep_alive=ka))
        elif req.method == "GET" and req.path == "/version" and self.config.version:
            reply = {"version": self.config.version}
            writer.write(http11.json_response(200, reply, keep_alive=ka))
        elif req.method == "POST" and req.path == "/v1/chat/completions":
            return await self._chat(req, writer)
        else:
            msg = replies.error(f"no route {req.method} {req.path}", "NotFoundError", 404)
            writer.write(http11.json_response(404, msg, keep_alive=ka))
        return True, False

    async def _chat(self, req: http11.Request, writer: asyncio.StreamWriter) -> tuple[bool, bool]:
        cfg, ka = self.config, req.keep_alive
        try:
            body = json.loads(req.body)
            messages = body["messages"]
            prompt = "\n".join(str(m.get("content") or "") for m in messages)
        except (ValueError, KeyError, TypeError, AttributeError):
            msg = replies.error("body must be JSON with a messages list", "BadRequestError", 400)
            writer.write(http11.json_response(400, msg, keep_alive=ka))
            return True, False
        self.bodies.append(body)
        self.raw_bodies.append(req.body)
        if body.get("model") not in cfg.models:
            text = f"The model `{body.get('model')}` does not exist."
            writer.write(
                http11.json_response(404, replies.error(text, "NotFoundError", 404), keep_alive=ka)
            )
            return True, False
        fault = self.faults.pick()
        if fault:
            self.stats[f"fault {fault}"] += 1
        delay = cfg.latency + (cfg.slow_delay if fault == "slow" else 0.0)
        if cfg.latency_jitter > 0:
            delay += self.faults.rng.uniform(0, cfg.latency_jitter)
        if delay > 0:
            await asyncio.sleep(delay)
        if fault in ("429", "408", "500", "503"):
            msg = replies.error(f"injected {fault}", "ServerError", int(fault))
            writer.write(http11.json_response(int(fault), msg, keep_alive=ka, retry_after="0"))
            return True, False
        if fault == "drop":
            writer.transport.abort()
            return False, False
        if fault == "error_200":  # (as some proxies and servers do, streamed or not)
            msg = {"error": {"message": bad_replies.ERROR_200, "type": "server_error", "code": 500}}
            writer.write(http11.json_response(200, msg, keep_alive=ka))
            return True, False
        max_tokens = body.get("max_tokens") or body.get("max_completion_tokens")
        prompt_tokens = count_tokens(prompt)
        limit = cfg.max_context
        if fault == "context" or (limit and prompt_tokens + (max_tokens or 0) > limit):
            error = replies.context_error(limit or 2048, prompt_tokens, max_tokens)
            writer.write(http11.json_response(400, error, keep_alive=ka))
            return True, False
        if fault == "huge":
            await bad_replies.send_huge(writer, bool(body.get("stream")), cfg.huge_bytes, ka)
            return True, False
        if cfg.tools and tool_model.is_tool_request(body):
            self.stats["tool turns"] += 1
            done = tool_model.complete(body, self.model.gold_for(prompt))
        else:
            done = self.model.complete(int(body.get("seed") or 0), prompt, max_tokens)
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": done.completion_tokens,
            "total_tokens": prompt_tokens + done.completion_tokens,
        }
        if cfg.reasoning_tokens:
            usage["completion_tokens_details"] = {"reasoning_tokens": done.reasoning_tokens}
        if fault == "bad_usage":
            usage = bad_replies.MARKED_USAGE
        self.stats["completions"] += 1
        if body.get("stream"):
            include = bool((body.get("stream_options") or {}).get("include_usage"))
            await self._stream(writer, body, done, usage if include else None, fault, ka)
        else:
            self._whole(writer, body, done, usage, fault, ka)
        if fault == "drop_mid":
            writer.transport.abort()
            return False, False
        return True, fault == "close_after"

    def _whole(
        self, writer: Writer, body: Body, done: Completion, usage: Usage, fault: Fault, ka: bool
    ) -> None:
        field = self.config.reasoning_field
        fp = self.config.fingerprint
        raw = replies.completion(self.faults.count, body["model"], done, usage, fault, field, fp)
        raw = bad_replies.rewrite_body(fault, raw, self.faults.count)
        response = http11.full_response(200, raw, keep_alive=ka)
        if fault == "drop_mid":
            response = response[: len(response) - len(raw) // 2]
        writer.write(response)

    async def _stream(
        self, writer: Writer, body: Body, done: Completion, usage: Usage, fault: Fault, ka: bool
    ) -> None:
        writer.write(http11.stream_head(keep_alive=ka))
        field = self.config.reasoning_field
        fp = self.config.fingerprint
        stream = replies.events(self.faults.count, body["model"], done, usage, fault, field, fp)
        stream = bad_replies.rewrite_events(fault, stream, self.faults.count)
        rate = self.config.token_rate
        if fault == "drop_mid":
            events = list(stream)
            stream = iter(events[: max(1, len(events) // 2)])
        if rate <= 0:
            writer.write(b"".join(http11.chunk(e) for e in stream))
        else:
            # the events due so far in one write, then sleep at least a tick: a paced stream
            # costs the server a wake-up per tick, not per token (256 streams at 100 tokens/s)
            # (events are made as they are due, so 256 streams starting at once start fast)
            start, sent = time.monotonic(), 0
            while True:
                due = int((time.monotonic() - start) * rate) + 1
                batch = [http11.chunk(e) for e in itertools.islice(stream, due - sent)]
                writer.write(b"".join(batch))
                sent += len(batch)
                if sent < due:
                    break
                await writer.drain()
                await asyncio.sleep(max(STREAM_TICK, start + sent / rate - time.monotonic()))
        if fault != "drop_mid":
            writer.write(http11.LAST_CHUNK)
        await writer.drain()


if __name__ == "__main__":
    from tests.support.server_cli import main

    main()
