"""The chat client: least-loaded endpoints, retries with capped jittered backoff, typed errors.

Two transports with one interface (`senders.py`): httpx (the default: httpx requests and
responses through `httpx_transport.LeanTransport`, h11 via httpcore on plain asyncio) and
`http1.Pool` (`--http fast`, about half the CPU per request). Neither uses environment proxies.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import ssl
import time
from dataclasses import dataclass
from typing import Any

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
from llmeval.client.senders import BROKEN, CONNECT, FastSender, HttpxSender, describe
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

    def __init__(self, config: ClientConfig) -> None:
        self.config = config
        self.retries = 0
        self.in_flight = 0
        self.models_problem = ""  # what /models answered when it did not list models
        urls = [normalize_base_url(u) for u in config.base_urls]
        # one context for all pools, made only for https (loading the CA store takes ~40 ms)
        ctx = ssl.create_default_context() if any(u.startswith("https") for u in urls) else None
        headers = {
            "content-type": "application/json",
            "accept-encoding": "identity",
            "user-agent": f"llmeval/{__version__}",
        }
        if config.api_key:
            headers["authorization"] = f"Bearer {config.api_key}"
        sender = FastSender if config.http == "fast" else HttpxSender
        self.endpoints = [Endpoint(url, sender(url, config, ctx, headers)) for url in urls]

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
        except asyncio.TimeoutError:  # TimeoutError from 3.11 on
            raise Transient(f"no whole answer within the {deadline:g} s deadline") from None

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
        except BROKEN as exc:
            raise Transient(describe(exc), connect=isinstance(exc, CONNECT)) from None
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
