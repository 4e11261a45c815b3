"""What the chat client decides without I/O: config, URLs, error classes, endpoint choice.

Endpoints are chosen least-loaded; one that keeps failing is set aside for a while.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from llmeval.client.protocol import error_message, is_context_error
from llmeval.errors import UsageError

SET_ASIDE_AFTER = 3  # consecutive failures before an endpoint is set aside


class ChatFailure(Exception):
    """A sample that could not be completed; the message is the server's or the transport's."""


class ContextLengthError(ChatFailure):
    """Prompt + max_tokens exceed the context: deterministic, recorded, never retried."""


class RequestRejected(ChatFailure):
    """A 4xx the server will repeat (bad parameter): fails the sample at once."""


class FatalServerError(ChatFailure):
    """Every further request would fail the same way (auth, wrong model, servers gone)."""


class Transient(Exception):
    """Worth retrying: 408/429/5xx, broken or timed-out connections, malformed replies."""

    def __init__(
        self, message: str, retry_after: float = 0.0, connect: bool = False, dropped: bool = False
    ) -> None:
        super().__init__(message)
        self.retry_after, self.connect = retry_after, connect
        # a kept-alive connection the server had closed, found before any answer: retry at once
        self.dropped = dropped


@dataclass
class ClientConfig:
    """How to reach the servers and how hard to try."""

    base_urls: list[str]
    api_key: str | None = None
    stream: bool = True
    timeout: float = 600.0  # read timeout: between bytes when streaming
    deadline: float | None = None  # whole attempt, first byte to last (a trickling server)
    connect_timeout: float = 10.0
    max_retries: int = 8
    backoff_base: float = 1.0
    backoff_max: float = 60.0
    max_workers: int = 64


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


class Endpoint:
    """One server: its URL, load and failure state."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.label = display_url(url)
        self.in_flight = 0
        self.failures = 0
        self.down_until = 0.0
        self.completed = 0
        self.unreachable = False  # the last attempt could not connect

    def failed(self, several: bool, cap: float, connect: bool = False) -> None:
        """Count a failure; set the endpoint aside (when there are others) after a streak."""
        self.unreachable = connect
        self.failures += 1
        if self.failures >= SET_ASIDE_AFTER and several:
            self.down_until = time.monotonic() + min(cap, 2.0 ** (self.failures - SET_ASIDE_AFTER))

    def succeeded(self) -> None:
        """End a failure streak."""
        self.failures = 0
        self.unreachable = False
        self.completed += 1


def pick(endpoints: list[Endpoint], avoid: Endpoint | None) -> Endpoint:
    """The least-loaded endpoint not set aside, preferring another than `avoid`."""
    now = time.monotonic()
    live = [e for e in endpoints if e.down_until <= now]
    choice = [e for e in live if e is not avoid] or live
    if not choice:
        return min(endpoints, key=lambda e: e.down_until)
    return min(choice, key=lambda e: e.in_flight)


def raise_for_status(label: str, status: int, raw: bytes, retry_after: str | None) -> None:
    """Turn a non-200 answer into the right error."""
    message = error_message(raw)
    if status in (408, 409, 425, 429) or status >= 500:
        try:
            wait = float(retry_after or 0)
        except ValueError:
            wait = 0.0
        raise Transient(f"HTTP {status}: {message}", retry_after=wait)
    if is_context_error(status, message):
        raise ContextLengthError(message)
    if status in (401, 403, 404):
        raise FatalServerError(f"{label}: HTTP {status}: {message}")
    raise RequestRejected(f"HTTP {status}: {message}")
