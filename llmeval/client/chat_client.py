"""The chat client: the model served and what the server says of itself, a fixed number of
workers, least-loaded endpoints, retries with capped jittered backoff, typed errors.

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
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

import aiohttp
import httpx
from httpx_aiohttp import AiohttpTransport

from llmeval import __version__
from llmeval.client.endpoints import (
    SET_ASIDE_AFTER,
    ClientConfig,
    Endpoint,
    display_url,
    normalize_base_url,
    pick,
)
from llmeval.client.identity import served_model, server_version, short_text
from llmeval.client.protocol import (
    ChatFailure,
    FatalServerError,
    Reply,
    StreamParser,
    Transient,
    error_message,
    parse_completion,
    raise_for_status,
)
from llmeval.errors import ServerError, UsageError, hide_secret
from llmeval.records import ServerInfo

log = logging.getLogger("llmeval")
T = TypeVar("T")


class ChatClient:
    """Sends chat requests to the least-loaded endpoint, retrying what is worth retrying."""

    def __init__(
        self, config: ClientConfig, transport: httpx.AsyncBaseTransport | None = None
    ) -> None:
        self.config = config
        self.retries = 0
        self.listing: Any = None  # the first `/models` list, as the server sent it
        self.fingerprint: str | None = None  # the first `system_fingerprint` of a reply
        # credentials in a URL are not sent: the key goes as a bearer token (--api-key)
        self.endpoints = [Endpoint(display_url(normalize_base_url(u))) for u in config.base_urls]
        headers = {
            "content-type": "application/json",
            "accept-encoding": "identity",
            "user-agent": f"llmeval/{__version__}",
        }
        if config.api_key:
            headers["authorization"] = f"Bearer {config.api_key}"
            hide_secret(config.api_key)  # a gateway may quote it back in an error
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

    @property
    def in_flight(self) -> int:
        """Requests under way, over every endpoint."""
        return sum(ep.in_flight for ep in self.endpoints)

    async def __aenter__(self) -> ChatClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        """Close every connection."""
        await self.http.aclose()

    async def resolve_model(self, wanted: str | None) -> str:
        """`wanted`, else the only model served; asks every endpoint (unreachable ones are set
        aside) so that a bad address or key fails here, before any request."""
        served: list[str] | None = None
        errors, why = [], ""
        for ep in self.endpoints:
            try:
                resp = await self.http.get(ep.url + "/models")
            except BROKEN as exc:
                errors.append(f"cannot reach {ep.url}: {describe(exc)}")
                ep.failures, ep.down_until = SET_ASIDE_AFTER, time.monotonic() + 30
                continue
            status, raw = resp.status_code, resp.content
            if status in (401, 403):
                raise ServerError(f"{ep.url}: HTTP {status}: {error_message(raw)}")
            if status != 200:  # kept for the error when no model is found at all
                why = f" ({ep.url}/models: HTTP {status}: {error_message(raw)})"
            elif served is None:
                try:
                    self.listing = json.loads(raw)["data"]
                    served = [str(m["id"]) for m in self.listing]
                except (ValueError, KeyError, TypeError):
                    served = []
        if len(errors) == len(self.endpoints):
            raise ServerError("; ".join(errors))
        for error in errors:
            log.warning("%s (set aside for now)", error)
        if wanted:
            return wanted
        if not served:
            raise ServerError(f"the server lists no models at /v1/models{why}; pass --model")
        if len(served) > 1:
            listed = ", ".join(served)
            raise UsageError(f"the server serves several models ({listed}); pick one with --model")
        log.info("model: %s (the only one the server lists)", served[0])
        return served[0]

    async def identity(self, model: str) -> ServerInfo:
        """What the servers say about themselves: the `/models` entry of `model` (asked by
        `resolve_model`), the first live server's `/version`, the first reply's fingerprint."""
        model_id, root = served_model(self.listing, model)
        live = [ep for ep in self.endpoints if not ep.failures] or self.endpoints
        version = await server_version(self.http, live[0].url)
        return ServerInfo(
            model_id=model_id, model_root=root, version=version, system_fingerprint=self.fingerprint
        )

    def workers(
        self, items: Iterable[T], handle: Callable[[T], Awaitable[None]]
    ) -> list[asyncio.Task[None]]:
        """`max_workers` tasks, each calling `handle` on the next of `items` while any are left
        (so that many requests are in flight)."""
        pending = iter(items)

        async def worker() -> None:
            for item in pending:
                await handle(item)

        return [asyncio.create_task(worker()) for _ in range(self.config.max_workers)]

    async def complete(self, body: bytes, prefer: str | None = None) -> Reply:
        """One completion for `body`, retried with capped, jittered exponential backoff; at
        the endpoint `prefer` while it answers (a conversation's turns)."""
        cfg = self.config
        last: Endpoint | None = None
        for attempt in range(cfg.max_retries + 1):
            ep = pick(self.endpoints, last, prefer)
            start = time.perf_counter()
            try:
                reply = await self._once(ep, body, start)
            except Transient as exc:
                if exc.dropped and attempt < cfg.max_retries:
                    continue  # not the server's fault: at once, on a new connection
                ep.failed(cfg.retry_max_delay, exc.connect)
                last, error = ep, exc
                if attempt < cfg.max_retries:
                    self.retries += 1
                    cap = cfg.retry_max_delay
                    delay = random.uniform(0, min(cap, cfg.retry_delay * 2**attempt))
                    await asyncio.sleep(max(delay, min(exc.retry_after, cap)))
                continue
            ep.succeeded()
            reply.endpoint, reply.latency_s = ep.url, time.perf_counter() - start
            self.fingerprint = self.fingerprint or short_text(reply.system_fingerprint)
            return reply
        if all(e.unreachable for e in self.endpoints):  # no use going on
            raise FatalServerError(f"servers unreachable: {error}")
        raise ChatFailure(f"gave up after {cfg.max_retries + 1} attempts: {error}")

    async def _once(self, ep: Endpoint, body: bytes, start: float) -> Reply:
        """One attempt, cut off (and its connection dropped) past `--deadline`."""
        # straight to the transport: AsyncClient.send's layers (auth, redirects, cookies, hooks)
        # cost ~30% of the client's CPU per request, and a chat request needs none of them
        request = self.http.build_request("POST", ep.url + "/chat/completions", content=body)
        resp = None
        ep.in_flight += 1
        try:
            async with asyncio.timeout(self.config.deadline):
                resp = await self.transport.handle_async_request(request)
                try:
                    if resp.status_code != 200:
                        raw, _ = await self._read(resp)
                        raise_for_status(
                            ep.url, resp.status_code, raw, resp.headers.get("retry-after")
                        )
                    # a whole JSON body where a stream was asked for: an error object, or a
                    # server that does not stream
                    if not self.config.stream or "json" in resp.headers.get("content-type", ""):
                        return parse_completion(*await self._read(resp))
                    parser = StreamParser(
                        started=start, now=time.perf_counter, limit=self.config.max_reply_bytes
                    )
                    async for data in resp.aiter_raw():  # parsed as the bytes arrive
                        parser.feed(data)
                        if parser.reply.cut_by:  # past the size cap: read no further
                            break
                    return parser.finish()
                finally:
                    await resp.aclose()
        except BROKEN as exc:  # first: aiohttp's timeouts are TimeoutErrors too
            raise _transient(exc, answered=resp is not None) from None
        except TimeoutError:
            raise Transient(
                f"no whole answer within the {self.config.deadline:g} s deadline"
            ) from None
        finally:
            ep.in_flight -= 1

    async def _read(self, resp: httpx.Response) -> tuple[bytes, bool]:
        """The body, and whether it was cut at `max_reply_bytes` (reading stops there)."""
        chunks, size, limit = [], 0, self.config.max_reply_bytes
        async for data in resp.aiter_bytes():  # (as read: the request asked for no encoding)
            chunks.append(data)
            size += len(data)
            if size > limit:
                return b"".join(chunks)[:limit], True
        return b"".join(chunks), False


# Transport errors: httpx's, and aiohttp's where httpx-aiohttp lets them through (body reads).
BROKEN = (httpx.TransportError, aiohttp.ClientError)
# No connection could be made (httpx-aiohttp maps every aiohttp connection error, a dropped
# keep-alive included, to `ConnectTimeout`: the cause says which it was).
_CONNECT = (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError, httpx.ConnectError)
# a reused connection the server had closed (llama-server does, after a stream): the request
# could not be written, or no answer came
_DROPPED = (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError)


def _chain(exc: BaseException) -> list[BaseException]:
    """`exc` and its causes (httpx-aiohttp raises httpx errors from aiohttp's, from the OS's)."""
    chain = [exc]
    while (cause := chain[-1].__cause__ or chain[-1].__context__) and len(chain) < 10:
        chain.append(cause)
    return chain


def _transient(exc: BaseException, answered: bool) -> Transient:
    """A transport error to retry; `dropped` when a reused connection failed before any answer."""
    chain = _chain(exc)
    connect = any(isinstance(e, _CONNECT) for e in chain)  # refused, unresolvable: back off
    dropped = not (connect or answered) and any(isinstance(e, _DROPPED) for e in chain)
    return Transient(describe(exc), connect=connect, dropped=dropped)


def describe(exc: BaseException) -> str:
    """A transport error in a few words, with the OS's reason where there is one."""
    chain = _chain(exc)
    for cause in chain:
        # an SSL error's errno is the SSL library's code, not the system's
        errno = 0 if isinstance(cause, ssl.SSLError) else getattr(cause, "errno", 0) or 0
        if isinstance(cause, OSError) and errno > 0:
            reason = os.strerror(errno).lower()
            connect = any(isinstance(e, _CONNECT) for e in chain)
            return f"cannot connect: {reason}" if connect else reason
    detail = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {detail}" if detail != type(exc).__name__ else detail
