"""The chat client: least-loaded endpoints, retries with capped jittered backoff, typed errors.

Two transports with one interface: `http1.Pool` (the default, about 10x less CPU per request)
and httpx (`--http httpx`: `AsyncHTTPTransport` pools sharded small, since a pool's cost grows
with its size, FACTS.md). Neither uses environment proxies.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import random
import ssl
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

try:  # httpcore imports sniffio on every request; a failing import scans sys.path each time
    import sniffio  # noqa: F401
except ImportError:
    sys.modules.setdefault("sniffio", None)  # type: ignore[arg-type]

import httpx

from llmeval import __version__, http1
from llmeval.chat import (
    MalformedResponse,
    Reply,
    StreamError,
    StreamParser,
    error_message,
    is_context_error,
    parse_completion,
)
from llmeval.endpoint import (
    SET_ASIDE_AFTER,
    ChatFailure,
    ClientConfig,
    ContextLengthError,
    Endpoint,
    FatalServerError,
    RequestRejected,
    Transient,
    display_url,
    normalize_base_url,
    pick,
    raise_for_status,
)
from llmeval.errors import ServerError

__all__ = [
    "ChatClient", "ChatFailure", "ClientConfig", "ContextLengthError", "FatalServerError",
    "Outcome", "RequestRejected", "display_url", "normalize_base_url",
]  # fmt: skip

log = logging.getLogger("llmeval")

SHARD_SIZE = 2  # connections per httpx pool
_BROKEN = (httpx.HTTPError, http1.HttpError)
_CONNECT = (httpx.ConnectError, httpx.ConnectTimeout, http1.ConnectFailed)


class _HttpxSender:
    """httpx transports, each with a small pool; a request takes the least-loaded one."""

    def __init__(self, url: str, config: ClientConfig, ctx: ssl.SSLContext, headers: dict) -> None:
        limits = httpx.Limits(
            max_connections=SHARD_SIZE, max_keepalive_connections=SHARD_SIZE, keepalive_expiry=60
        )
        shards = max(1, -(-config.max_workers // SHARD_SIZE))
        self.transports = [
            httpx.AsyncHTTPTransport(verify=ctx, limits=limits) for _ in range(shards)
        ]
        self.loads = [0] * shards
        self.urls = {
            "chat": httpx.URL(url + "/chat/completions"),
            "models": httpx.URL(url + "/models"),
        }
        self.headers = [(k.encode(), v.encode()) for k, v in headers.items()]
        timeout = httpx.Timeout(config.timeout, connect=config.connect_timeout, pool=None)
        self.extensions = {"timeout": timeout.as_dict()}

    @contextlib.asynccontextmanager
    async def open(self, method: str, which: str, body: bytes = b"") -> AsyncIterator[Any]:
        i = self.loads.index(min(self.loads))
        self.loads[i] += 1
        try:
            request = httpx.Request(
                method, self.urls[which], headers=self.headers, content=body or None,
                extensions=self.extensions,
            )  # fmt: skip
            resp = await self.transports[i].handle_async_request(request)
            try:
                yield resp
            finally:
                await resp.aclose()
        finally:
            self.loads[i] -= 1

    async def aclose(self) -> None:
        for transport in self.transports:
            await transport.aclose()


class _FastSender:
    """One `http1.Pool` per endpoint: its cost does not grow with its size."""

    def __init__(self, url: str, config: ClientConfig, ctx: ssl.SSLContext, headers: dict) -> None:
        self.pool = http1.Pool(
            url, connect_timeout=config.connect_timeout, read_timeout=config.timeout,
            ssl_context=ctx, headers=headers,
        )  # fmt: skip
        path = url.split("://", 1)[1].partition("/")[2]
        self.paths = {"chat": f"/{path}/chat/completions", "models": f"/{path}/models"}

    @contextlib.asynccontextmanager
    async def open(self, method: str, which: str, body: bytes = b"") -> AsyncIterator[Any]:
        resp = await self.pool.request(method, self.paths[which], body)
        try:
            yield resp
        finally:
            await resp.aclose()

    async def aclose(self) -> None:
        await self.pool.aclose()


@dataclass
class Outcome:
    """A completed request: the reply, where it came from, and how long the good attempt took."""

    reply: Reply
    endpoint: str
    latency_s: float


class ChatClient:
    """Sends chat requests to the least-loaded endpoint, retrying what is worth retrying."""

    def __init__(self, config: ClientConfig) -> None:
        self.config = config
        self.retries = 0
        self.in_flight = 0
        ctx = ssl.create_default_context()  # one context for all pools: loading it is slow
        headers = {
            "content-type": "application/json",
            "accept-encoding": "identity",
            "user-agent": f"llmeval/{__version__}",
        }
        if config.api_key:
            headers["authorization"] = f"Bearer {config.api_key}"
        sender = _FastSender if config.http == "fast" else _HttpxSender
        self.endpoints = [
            Endpoint(url, sender(url, config, ctx, headers))
            for url in map(normalize_base_url, config.base_urls)
        ]

    async def __aenter__(self) -> ChatClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close every connection."""
        for ep in self.endpoints:
            await ep.sender.aclose()

    async def models(self) -> list[str]:
        """Model ids served (from the first endpoint that answers); unreachable ones set aside."""
        found: list[str] | None = None
        errors = []
        for ep in self.endpoints:
            try:
                async with ep.sender.open("GET", "models") as resp:
                    status, raw = resp.status_code, await resp.aread()
            except _BROKEN as exc:
                errors.append(f"cannot reach {ep.label}: {_describe(exc)}")
                ep.failures, ep.down_until = SET_ASIDE_AFTER, time.monotonic() + 30
                continue
            if status in (401, 403):
                raise ServerError(f"{ep.label}: HTTP {status}: {error_message(raw)}")
            if found is None and status == 200:
                try:
                    found = [str(m["id"]) for m in json.loads(raw)["data"]]
                except (ValueError, KeyError, TypeError):
                    found = []
        if len(errors) == len(self.endpoints):
            raise ServerError("; ".join(errors))
        for error in errors:
            log.warning("%s (set aside for now)", error)
        return found or []

    async def complete(self, body: bytes) -> Outcome:
        """One completion for `body`, retried with capped, jittered exponential backoff."""
        cfg = self.config
        last: Endpoint | None = None
        several = len(self.endpoints) > 1
        for attempt in range(cfg.max_retries + 1):
            ep = pick(self.endpoints, last)
            start = time.perf_counter()
            try:
                reply = await self._once(ep, body, start)
            except Transient as exc:
                ep.failed(several, cfg.backoff_max, exc.connect)
                last = ep
                if attempt == cfg.max_retries:
                    if all(e.unreachable for e in self.endpoints):  # no use going on
                        raise FatalServerError(f"servers unreachable: {exc}") from None
                    raise ChatFailure(f"gave up after {attempt + 1} attempts: {exc}") from None
                self.retries += 1
                delay = random.uniform(0, min(cfg.backoff_max, cfg.backoff_base * 2**attempt))
                await asyncio.sleep(max(delay, min(exc.retry_after, cfg.backoff_max)))
                continue
            ep.succeeded()
            return Outcome(reply, ep.label, time.perf_counter() - start)
        raise AssertionError("unreachable")

    async def _once(self, ep: Endpoint, body: bytes, start: float) -> Reply:
        ep.in_flight += 1
        self.in_flight += 1
        try:
            async with ep.sender.open("POST", "chat", body) as resp:
                if resp.status_code != 200:
                    raw = await resp.aread()
                    raise_for_status(
                        ep.label, resp.status_code, raw, resp.headers.get("retry-after")
                    )
                if self.config.stream:
                    return await _read_stream(resp, start)
                return parse_completion(await resp.aread())
        except _BROKEN as exc:
            raise Transient(_describe(exc), connect=isinstance(exc, _CONNECT)) from None
        except MalformedResponse as exc:
            raise Transient(str(exc)) from None
        finally:
            ep.in_flight -= 1
            self.in_flight -= 1


async def _read_stream(resp: Any, start: float) -> Reply:
    """Parse an SSE response as its bytes arrive."""
    parser = StreamParser(started=start, now=time.perf_counter)
    try:
        async for data in resp.aiter_raw():
            parser.feed(data)
    except StreamError as exc:
        if is_context_error(400, str(exc)):
            raise ContextLengthError(str(exc)) from None
        raise Transient(f"error in stream: {exc}") from None
    return parser.finish()


def _describe(exc: Exception) -> str:
    """A transport error in a few words."""
    if isinstance(exc, http1.HttpError):
        return str(exc)
    if isinstance(exc, httpx.ConnectError) and (reason := _os_reason(exc)):
        return f"cannot connect: {reason}"
    detail = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {detail}" if detail != type(exc).__name__ else detail


def _os_reason(exc: BaseException) -> str | None:
    """The operating system's reason at the root of a connect error ("connection refused")."""
    seen = 0
    cause: BaseException | None = exc
    while cause is not None and seen < 10:
        if isinstance(cause, OSError) and cause.errno and cause.errno > 0:
            return os.strerror(cause.errno).lower()
        cause, seen = cause.__cause__ or cause.__context__, seen + 1
    return None
