"""The two transports behind `ChatClient`, one interface (`endpoint.Sender`): httpx (the
default) and llmeval's lean HTTP/1.1 client (`--http fast`); and their errors in a few words."""

from __future__ import annotations

import os
import ssl
import sys
from collections.abc import Awaitable
from typing import Any

try:  # httpcore imports sniffio on every request; a failing import scans sys.path each time
    import sniffio  # noqa: F401
except ImportError:
    sys.modules.setdefault("sniffio", None)  # type: ignore[arg-type]

import httpx

from llmeval.client import http1
from llmeval.client.endpoints import ClientConfig
from llmeval.client.httpx_transport import LeanTransport

BROKEN = (httpx.HTTPError, http1.HttpError)
CONNECT = (httpx.ConnectError, httpx.ConnectTimeout, http1.ConnectFailed)


class _Opened:
    """`async with`: the response of `send()` once it is awaited; closed on the way out."""

    __slots__ = ("resp", "send")

    def __init__(self, send: Awaitable[Any]) -> None:
        self.send, self.resp = send, None

    async def __aenter__(self) -> Any:
        self.resp = await self.send
        return self.resp

    async def __aexit__(self, *exc: object) -> None:
        await self.resp.aclose()


class HttpxSender:
    """One httpx transport per endpoint (`httpx_transport.LeanTransport`): httpx requests and
    responses, h11 under them, an O(1) pool of keep-alive connections."""

    def __init__(
        self, url: str, config: ClientConfig, ctx: ssl.SSLContext | None, headers: dict
    ) -> None:
        self.transport = LeanTransport(ssl_context=ctx, keepalive_expiry=60)
        self.urls = {
            "chat": httpx.URL(url + "/chat/completions"),
            "models": httpx.URL(url + "/models"),
        }
        host = {"host": self.urls["chat"].netloc.decode("ascii")}
        self.headers = httpx.Headers({**host, **headers})
        timeout = httpx.Timeout(config.timeout, connect=config.connect_timeout, pool=None)
        self.extensions = {"timeout": timeout.as_dict()}

    def open(self, method: str, which: str, body: bytes = b"") -> _Opened:
        request = httpx.Request(
            method, self.urls[which], headers=self.headers, content=body or None,
            extensions=self.extensions,
        )  # fmt: skip
        return _Opened(self.transport.handle_async_request(request))

    async def aclose(self) -> None:
        await self.transport.aclose()


class FastSender:
    """One `http1.Pool` per endpoint: its cost does not grow with its size."""

    def __init__(
        self, url: str, config: ClientConfig, ctx: ssl.SSLContext | None, headers: dict
    ) -> None:
        self.pool = http1.Pool(
            url, connect_timeout=config.connect_timeout, read_timeout=config.timeout,
            ssl_context=ctx, headers=headers,
        )  # fmt: skip
        path = url.split("://", 1)[1].partition("/")[2]
        self.paths = {"chat": f"/{path}/chat/completions", "models": f"/{path}/models"}

    def open(self, method: str, which: str, body: bytes = b"") -> _Opened:
        return _Opened(self.pool.request(method, self.paths[which], body))

    async def aclose(self) -> None:
        await self.pool.aclose()


def describe(exc: Exception) -> str:
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
        # an SSL error's errno is the SSL library's code, not the system's: not a reason here
        if (
            isinstance(cause, OSError)
            and not isinstance(cause, ssl.SSLError)
            and cause.errno
            and cause.errno > 0
        ):
            return os.strerror(cause.errno).lower()
        cause, seen = cause.__cause__ or cause.__context__, seen + 1
    return None
