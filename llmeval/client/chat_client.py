"""The chat client: least-loaded endpoints, retries with capped jittered backoff, typed errors.

One `httpx.AsyncClient` for every endpoint, on aiohttp's HTTP/1.1 client (httpx-aiohttp's
transport: about ten times stock httpx's rate with hundreds of requests in flight). No
environment proxies; `transport=` swaps in `httpx.MockTransport` for tests.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import ssl
import time
from dataclasses import dataclass
from typing import Any

import aiohttp
import httpx
from httpx_aiohttp import AiohttpTransport

from llmeval import __version__
from llmeval.client.endpoints import (
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
from llmeval.client.protocol import (
    MalformedResponse,
    Reply,
    StreamError,
    StreamParser,
    error_message,
    is_context_error,
    parse_completion,
)
from llmeval.errors import ServerError

__all__ = [
    "ChatClient", "ChatFailure", "ClientConfig", "ContextLengthError", "FatalServerError",
    "Outcome", "RequestRejected", "display_url", "normalize_base_url",
]  # fmt: skip

log = logging.getLogger("llmeval")


@dataclass
class Outcome:
    """A completed request: the reply, where it came from, and how long the good attempt took."""

    reply: Reply
    endpoint: str
    latency_s: float


class ChatClient:
    """Sends chat requests to the least-loaded endpoint, retrying what is worth retrying."""

    def __init__(
        self, config: ClientConfig, transport: httpx.AsyncBaseTransport | None = None
    ) -> None:
        self.config = config
        self.retries = 0
        self.in_flight = 0
        self.models_problem = ""  # what /models answered when it did not list models
        # credentials in a URL are not sent: the key goes as a bearer token (--api-key)
        self.endpoints = [Endpoint(display_url(normalize_base_url(u))) for u in config.base_urls]
        headers = {
            "content-type": "application/json",
            "accept-encoding": "identity",
            "user-agent": f"llmeval/{__version__}",
        }
        if config.api_key:
            headers["authorization"] = f"Bearer {config.api_key}"
        if transport is None:
            https = any(ep.url.startswith("https") for ep in self.endpoints)
            limits = httpx.Limits(max_connections=max(100, config.max_workers))
            # the CA store is loaded (~40 ms) only when some endpoint is https
            verify = ssl.create_default_context() if https else False
            transport = AiohttpTransport(verify=verify, trust_env=False, limits=limits)
        self.transport = transport
        self.http = httpx.AsyncClient(
            transport=transport,
            headers=headers,
            timeout=httpx.Timeout(config.timeout, connect=config.connect_timeout, pool=None),
            trust_env=False,
        )

    async def __aenter__(self) -> ChatClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close every connection."""
        await self.http.aclose()

    async def models(self) -> list[str]:
        """Model ids served (from the first endpoint that answers); unreachable ones set aside."""
        found: list[str] | None = None
        errors = []
        for ep in self.endpoints:
            try:
                resp = await self.http.get(ep.url + "/models")
                status, raw = resp.status_code, resp.content
            except BROKEN as exc:
                errors.append(f"cannot reach {ep.label}: {describe(exc)}")
                ep.failures, ep.down_until = SET_ASIDE_AFTER, time.monotonic() + 30
                continue
            if status in (401, 403):
                raise ServerError(f"{ep.label}: HTTP {status}: {error_message(raw)}")
            if found is None and status == 200:
                try:
                    found = [str(m["id"]) for m in json.loads(raw)["data"]]
                except (ValueError, KeyError, TypeError):
                    found = []
            elif status != 200:  # kept for the error when no model is found at all
                self.models_problem = f"{ep.label}/models: HTTP {status}: {error_message(raw)}"
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
                reply = await self._attempt(ep, body, start)
            except Transient as exc:
                if exc.dropped and attempt < cfg.max_retries:  # not the server's fault
                    continue
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

    async def _attempt(self, ep: Endpoint, body: bytes, start: float) -> Reply:
        """One attempt, cut off (and its connection dropped) past `--deadline`."""
        deadline = self.config.deadline
        if deadline is None:
            return await self._once(ep, body, start)
        try:
            return await asyncio.wait_for(self._once(ep, body, start), deadline)
        except TimeoutError:  # TimeoutError from 3.11 on
            raise Transient(f"no whole answer within the {deadline:g} s deadline") from None

    async def _once(self, ep: Endpoint, body: bytes, start: float) -> Reply:
        ep.in_flight += 1
        self.in_flight += 1
        # straight to the transport: AsyncClient.send's layers (auth, redirects, cookies, hooks)
        # cost ~30% of the client's CPU per request, and a chat request needs none of them
        request = self.http.build_request("POST", ep.url + "/chat/completions", content=body)
        try:
            try:
                resp = await self.transport.handle_async_request(request)
            except BROKEN as exc:  # llama-server closes a kept-alive connection after a stream
                connect = _is_connect(exc)  # refused, unresolvable: back off as usual
                dropped = not connect and any(isinstance(e, _DROPPED) for e in _chain(exc))
                raise Transient(describe(exc), connect=connect, dropped=dropped) from None
            try:
                if resp.status_code != 200:
                    raw = await resp.aread()
                    raise_for_status(
                        ep.label, resp.status_code, raw, resp.headers.get("retry-after")
                    )
                if self.config.stream:
                    return await _read_stream(resp, start)
                return parse_completion(await resp.aread())
            finally:
                await resp.aclose()
        except BROKEN as exc:
            raise Transient(describe(exc), connect=_is_connect(exc)) from None
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


# Transport errors: httpx's, and aiohttp's where httpx-aiohttp lets them through (body reads).
BROKEN = (httpx.TransportError, aiohttp.ClientError)
_CONNECT = (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError, httpx.ConnectError)
# a reused connection the server had closed: the request could not be written, or no answer
_DROPPED = (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError)


def _chain(exc: BaseException) -> list[BaseException]:
    """`exc` and its causes (httpx-aiohttp raises httpx errors from aiohttp's, from the OS's)."""
    found: list[BaseException] = []
    cause: BaseException | None = exc
    while cause is not None and len(found) < 10:
        found.append(cause)
        cause = cause.__cause__ or cause.__context__
    return found


def _is_connect(exc: BaseException) -> bool:
    """Whether no connection could be made (httpx-aiohttp maps every aiohttp connection error,
    a dropped keep-alive included, to `ConnectTimeout`: the cause says which it was)."""
    return any(isinstance(e, _CONNECT) for e in _chain(exc))


def describe(exc: BaseException) -> str:
    """A transport error in a few words, with the OS's reason where there is one."""
    for cause in _chain(exc):
        # an SSL error's errno is the SSL library's code, not the system's
        errno = 0 if isinstance(cause, ssl.SSLError) else getattr(cause, "errno", 0) or 0
        if isinstance(cause, OSError) and errno > 0:
            reason = os.strerror(errno).lower()
            return f"cannot connect: {reason}" if _is_connect(exc) else reason
    detail = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {detail}" if detail != type(exc).__name__ else detail
