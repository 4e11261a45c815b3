"""The chat client over httpx: endpoints, sharded connection pools, retries with backoff, errors.

Each endpoint spreads its requests over several small `httpx.AsyncClient`s: one client's pool
costs grow with its size (268 req/s at 256 in flight against 1,084 at 8, see FACTS.md).
"""

from __future__ import annotations

import asyncio
import logging
import random
import ssl
import sys
import time
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

try:  # httpcore imports sniffio on every request; a failing import scans sys.path each time
    import sniffio  # noqa: F401
except ImportError:
    sys.modules.setdefault("sniffio", None)  # type: ignore[arg-type]

import httpx

from llmeval import __version__
from llmeval.chat import (
    MalformedResponse,
    Reply,
    StreamError,
    StreamParser,
    error_message,
    is_context_error,
    parse_completion,
)
from llmeval.errors import ServerError, UsageError

log = logging.getLogger("llmeval")

SHARD_SIZE = 8  # connections per AsyncClient
SET_ASIDE_AFTER = 3  # consecutive failures before an endpoint is set aside


class ChatFailure(Exception):
    """A sample that could not be completed; the message is the server's or the transport's."""


class ContextLengthError(ChatFailure):
    """Prompt + max_tokens exceed the context: deterministic, recorded, never retried."""


class RequestRejected(ChatFailure):
    """A 4xx the server will repeat (bad parameter): fails the sample at once."""


class FatalServerError(ChatFailure):
    """Every further request would fail the same way (auth, wrong model, servers gone)."""


class _Transient(Exception):
    def __init__(self, message: str, retry_after: float = 0.0, connect: bool = False) -> None:
        super().__init__(message)
        self.retry_after, self.connect = retry_after, connect


def normalize_base_url(url: str) -> str:
    """`http://h:p`, `http://h:p/v1/` -> `http://h:p/v1`; http(s) only."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UsageError(f"--base-url {url!r}: expected an http:// or https:// URL")
    path = parts.path.rstrip("/")
    if not path.endswith("/v1"):
        path += "/v1"
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def display_url(url: str) -> str:
    """A URL without credentials, for logs and the run spec."""
    parts = urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


@dataclass
class ClientConfig:
    """How to reach the servers and how hard to try."""

    base_urls: list[str]
    api_key: str | None = None
    stream: bool = True
    timeout: float = 600.0  # read timeout: between bytes when streaming
    connect_timeout: float = 10.0
    max_retries: int = 8
    backoff_base: float = 1.0
    backoff_max: float = 60.0
    max_workers: int = 64


class Endpoint:
    """One server: its clients (shards), load, and failure state."""

    def __init__(self, url: str, clients: list[httpx.AsyncClient]) -> None:
        self.url = url
        self.label = display_url(url)
        self.chat_url = url + "/chat/completions"
        self.clients = clients
        self.loads = [0] * len(clients)
        self.in_flight = 0
        self.failures = 0
        self.down_until = 0.0
        self.completed = 0

    def shard(self) -> int:
        """The least-loaded client."""
        loads = self.loads
        return loads.index(min(loads))


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
        ctx = ssl.create_default_context()  # one context for all clients: loading it is slow
        timeout = httpx.Timeout(config.timeout, connect=config.connect_timeout, pool=None)
        limits = httpx.Limits(
            max_connections=SHARD_SIZE, max_keepalive_connections=SHARD_SIZE, keepalive_expiry=60
        )
        headers = {
            "content-type": "application/json",
            "accept-encoding": "identity",
            "user-agent": f"llmeval/{__version__}",
        }
        if config.api_key:
            headers["authorization"] = f"Bearer {config.api_key}"
        shards = max(1, -(-config.max_workers // SHARD_SIZE))
        self.endpoints = [
            Endpoint(
                normalize_base_url(url),
                [
                    httpx.AsyncClient(verify=ctx, timeout=timeout, limits=limits, headers=headers)
                    for _ in range(shards)
                ],
            )
            for url in config.base_urls
        ]

    async def __aenter__(self) -> ChatClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close every connection."""
        for ep in self.endpoints:
            for client in ep.clients:
                await client.aclose()

    async def models(self) -> list[str]:
        """Model ids served (from the first endpoint that answers); unreachable ones set aside."""
        found: list[str] | None = None
        errors = []
        for ep in self.endpoints:
            try:
                resp = await ep.clients[0].get(ep.url + "/models")
            except httpx.HTTPError as exc:
                errors.append(f"cannot reach {ep.label}: {_describe(exc)}")
                ep.failures, ep.down_until = SET_ASIDE_AFTER, time.monotonic() + 30
                continue
            if resp.status_code in (401, 403):
                raise ServerError(
                    f"{ep.label}: HTTP {resp.status_code}: {error_message(resp.content)}"
                )
            if found is None and resp.status_code == 200:
                try:
                    found = [str(m["id"]) for m in resp.json()["data"]]
                except (ValueError, KeyError, TypeError):
                    found = []
        if len(errors) == len(self.endpoints):
            raise ServerError("; ".join(errors))
        for error in errors:
            log.warning("%s (set aside for now)", error)
        return found or []

    def _pick(self, avoid: Endpoint | None) -> Endpoint:
        now = time.monotonic()
        live = [e for e in self.endpoints if e.down_until <= now]
        choice = [e for e in live if e is not avoid] or live
        if not choice:
            return min(self.endpoints, key=lambda e: e.down_until)
        return min(choice, key=lambda e: e.in_flight)

    async def complete(self, body: bytes) -> Outcome:
        """One completion for `body`, retried with capped, jittered exponential backoff."""
        cfg = self.config
        last: Endpoint | None = None
        for attempt in range(cfg.max_retries + 1):
            ep = self._pick(last)
            start = time.perf_counter()
            try:
                reply = await self._once(ep, body, start)
            except _Transient as exc:
                self._failed(ep)
                last = ep
                if attempt == cfg.max_retries:
                    if exc.connect and all(e.down_until > time.monotonic() for e in self.endpoints):
                        raise FatalServerError(f"servers unreachable: {exc}") from None
                    raise ChatFailure(f"gave up after {attempt + 1} attempts: {exc}") from None
                self.retries += 1
                delay = random.uniform(0, min(cfg.backoff_max, cfg.backoff_base * 2**attempt))
                await asyncio.sleep(max(delay, min(exc.retry_after, cfg.backoff_max)))
                continue
            ep.failures = 0
            ep.completed += 1
            return Outcome(reply, ep.label, time.perf_counter() - start)
        raise AssertionError("unreachable")

    def _failed(self, ep: Endpoint) -> None:
        ep.failures += 1
        if ep.failures >= SET_ASIDE_AFTER and len(self.endpoints) > 1:
            pause = min(self.config.backoff_max, 2.0 ** (ep.failures - SET_ASIDE_AFTER))
            ep.down_until = time.monotonic() + pause

    async def _once(self, ep: Endpoint, body: bytes, start: float) -> Reply:
        i = ep.shard()
        ep.loads[i] += 1
        ep.in_flight += 1
        self.in_flight += 1
        try:
            if self.config.stream:
                return await self._streamed(ep.clients[i], ep, body, start)
            resp = await ep.clients[i].post(ep.chat_url, content=body)
            if resp.status_code != 200:
                _raise_status(ep, resp.status_code, resp.content, resp.headers)
            return parse_completion(resp.content)
        except httpx.HTTPError as exc:
            raise _Transient(_describe(exc), connect=isinstance(exc, httpx.ConnectError)) from None
        except MalformedResponse as exc:
            raise _Transient(str(exc)) from None
        finally:
            ep.loads[i] -= 1
            ep.in_flight -= 1
            self.in_flight -= 1

    async def _streamed(
        self, client: httpx.AsyncClient, ep: Endpoint, body: bytes, start: float
    ) -> Reply:
        async with client.stream("POST", ep.chat_url, content=body) as resp:
            if resp.status_code != 200:
                _raise_status(ep, resp.status_code, await resp.aread(), resp.headers)
            parser = StreamParser(started=start, now=time.perf_counter)
            try:
                async for data in resp.aiter_raw():
                    parser.feed(data)
            except StreamError as exc:
                if is_context_error(400, str(exc)):
                    raise ContextLengthError(str(exc)) from None
                raise _Transient(f"error in stream: {exc}") from None
            return parser.finish()


def _raise_status(ep: Endpoint, status: int, raw: bytes, headers: httpx.Headers) -> None:
    message = error_message(raw)
    if status in (408, 409, 425, 429) or status >= 500:
        try:
            retry_after = float(headers.get("retry-after", "0"))
        except ValueError:
            retry_after = 0.0
        raise _Transient(f"HTTP {status}: {message}", retry_after=retry_after)
    if is_context_error(status, message):
        raise ContextLengthError(message)
    if status in (401, 403, 404):
        raise FatalServerError(f"{ep.label}: HTTP {status}: {message}")
    raise RequestRejected(f"HTTP {status}: {message}")


def _describe(exc: Exception) -> str:
    """A transport error in a few words."""
    detail = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {detail}" if detail != type(exc).__name__ else detail
