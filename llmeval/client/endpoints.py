"""What the chat client decides without I/O: its config, URLs, the least-loaded endpoint."""

from __future__ import annotations

import time
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field

from llmeval.errors import UsageError, display_url

__all__ = ["ClientConfig", "Endpoint", "display_url", "normalize_base_url", "pick"]

SET_ASIDE_AFTER = 3  # consecutive failures before an endpoint is set aside


class ClientConfig(BaseModel):
    """How to reach the servers and how hard to try; its bounds are the flags' checks."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    base_urls: list[str] = Field(min_length=1)
    api_key: str | None = None
    stream: bool = True
    timeout: float = Field(600.0, gt=0)  # read timeout: between bytes when streaming
    deadline: float | None = Field(None, gt=0)  # whole attempt, first byte to last (trickling)
    connect_timeout: float = Field(10.0, gt=0)
    max_retries: int = Field(8, ge=0)
    retry_delay: float = Field(1.0, ge=0)  # the first backoff's ceiling, doubling per attempt
    retry_max_delay: float = Field(60.0, ge=0)  # the backoff's cap
    max_workers: int = Field(64, ge=1)  # requests in flight
    max_reply_bytes: int = Field(1 << 24, ge=1)  # a longer reply is cut (max_tokens ignored)


def normalize_base_url(url: str, flag: str = "--base-url") -> str:
    """`http://h:p`, `http://h:p/v1/` -> `http://h:p/v1`; http(s) only; a URL that cannot be
    read (an unclosed `[`, a port that is no number, a space in the host) is refused."""
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 (raises on a port that is no number or out of range)
    except ValueError as exc:
        raise UsageError(f"{flag} {display_url(url)!r}: not a URL ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"{flag} {display_url(url)!r}: expected an http:// or https:// URL")
    if any(c.isspace() or not c.isprintable() for c in parts.netloc):
        raise UsageError(f"{flag} {display_url(url)!r}: not a URL (a space in its host)")
    path = parts.path.rstrip("/")
    if not path.endswith("/v1"):
        path += "/v1"
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


@dataclass(eq=False)
class Endpoint:
    """One server: its URL (without credentials), load and failure state."""

    url: str
    in_flight: int = 0
    failures: int = 0
    down_until: float = 0.0
    unreachable: bool = False  # the last attempt could not connect

    def failed(self, cap: float, connect: bool) -> None:
        """Count a failure; set the endpoint aside after a streak (a lone one is used anyway)."""
        self.unreachable = connect
        self.failures += 1
        if self.failures >= SET_ASIDE_AFTER:
            self.down_until = time.monotonic() + min(cap, 2.0 ** (self.failures - SET_ASIDE_AFTER))

    def succeeded(self) -> None:
        """End a failure streak."""
        self.failures = 0
        self.unreachable = False


def pick(endpoints: list[Endpoint], avoid: Endpoint | None, prefer: str | None = None) -> Endpoint:
    """The least-loaded endpoint not set aside, preferring another than `avoid`; `prefer`
    (the endpoint of a conversation's earlier turns: its prefix is cached there) while it is
    not set aside and not the one that just failed."""
    now = time.monotonic()
    live = [e for e in endpoints if e.down_until <= now]
    for e in live:
        if e.url == prefer and e is not avoid:
            return e
    choice = [e for e in live if e is not avoid] or live
    if not choice:
        return min(endpoints, key=lambda e: e.down_until)
    return min(choice, key=lambda e: e.in_flight)
