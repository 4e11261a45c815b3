"""The httpx transport of `client.py`: httpx requests and responses over httpcore's HTTP/1.1
connections (h11), kept in an O(1) idle list per origin and run on plain asyncio.

httpx's own `AsyncHTTPTransport` (httpcore's pool on anyio) costs ~3x more CPU per request:
its pool rescans every connection per request and anyio opens cancel scopes per read/write.
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator
from typing import Any

import httpcore
import httpx

from llmeval.client.asyncio_backend import AsyncioBackend

_UNANSWERED = "Server disconnected without sending a response"
Origin = tuple[bytes, bytes, int]


_CORE_ERRORS = (httpcore.TimeoutException, httpcore.NetworkError, httpcore.ProtocolError,
                httpcore.ProxyError, httpcore.UnsupportedProtocol)  # fmt: skip


def _as_httpx(exc: Exception) -> httpx.TransportError:
    """httpx's error of the same name as httpcore's `exc` (as httpx's own transport maps them)."""
    for cls in type(exc).__mro__:
        mapped = getattr(httpx, cls.__name__, None)
        if isinstance(mapped, type) and issubclass(mapped, httpx.TransportError):
            return mapped(str(exc))
    return httpx.TransportError(str(exc))  # pragma: no cover - all of them are mapped


class _Body(httpx.AsyncByteStream):
    """A response body; once read whole and closed, its connection goes back to the idle list.
    (An iterator class, not an async generator: each of those costs asyncio bookkeeping.)"""

    def __init__(self, stream: Any, conn: httpcore.AsyncHTTP11Connection, idle: list) -> None:
        self._stream, self._conn, self._idle = stream, conn, idle
        self._parts: Any = None

    def __aiter__(self) -> AsyncIterator[bytes]:
        self._parts = self._stream.__aiter__()
        return self

    async def __anext__(self) -> bytes:
        try:
            return await self._parts.__anext__()
        except _CORE_ERRORS as exc:
            raise _as_httpx(exc) from exc

    async def aclose(self) -> None:
        try:
            await self._stream.aclose()  # the connection is idle again, or closed
        except _CORE_ERRORS as exc:
            raise _as_httpx(exc) from exc
        if self._conn.is_idle():
            self._idle.append(self._conn)


class LeanTransport(httpx.AsyncBaseTransport):
    """HTTP/1.1 keep-alive connections, as many as requests in flight; no proxies, no HTTP/2."""

    def __init__(
        self, ssl_context: ssl.SSLContext | None = None, keepalive_expiry: float = 60.0
    ) -> None:
        self._ssl = ssl_context
        self._expiry = keepalive_expiry
        self._backend = AsyncioBackend()
        self._idle: dict[Origin, list[httpcore.AsyncHTTP11Connection]] = {}
        self._urls: dict[tuple[Origin, bytes], httpcore.URL] = {}

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        origin = (url.raw_scheme, url.raw_host, url.port or (443 if url.scheme == "https" else 80))
        if origin[0] not in (b"http", b"https"):
            raise httpx.UnsupportedProtocol(f"unsupported URL scheme {url.scheme!r}")
        target = (origin, url.raw_path)
        if (core_url := self._urls.get(target)) is None:
            core_url = httpcore.URL(
                scheme=origin[0], host=origin[1], port=origin[2], target=url.raw_path
            )
            if len(self._urls) < 64:  # the few URLs a client calls
                self._urls[target] = core_url
        core = httpcore.Request(
            method=request.method,
            url=core_url,
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        idle = self._idle.setdefault(origin, [])
        try:
            conn = await self._take(idle)
            if conn is not None:
                try:
                    resp = await conn.handle_async_request(core)
                except (httpcore.RemoteProtocolError, httpcore.ReadError) as exc:
                    if isinstance(exc, httpcore.RemoteProtocolError) and not str(exc).startswith(
                        _UNANSWERED
                    ):
                        raise
                    conn = None  # closed or reset as we reused it, unanswered: once more, anew
            if conn is None:
                conn = await self._connect(origin, request.extensions.get("timeout", {}))
                resp = await conn.handle_async_request(core)
        except _CORE_ERRORS as exc:
            raise _as_httpx(exc) from exc
        return httpx.Response(
            status_code=resp.status,
            headers=resp.headers,
            stream=_Body(resp.stream, conn, idle),
            extensions=resp.extensions,
            request=request,
        )

    async def _take(self, idle: list[httpcore.AsyncHTTP11Connection]) -> Any:
        while idle:
            conn = idle.pop()
            if conn.is_idle() and not conn.has_expired():
                return conn
            await conn.aclose()  # expired, or the server closed it
        return None

    async def _connect(self, origin: Origin, timeouts: dict) -> httpcore.AsyncHTTP11Connection:
        scheme, host, port = origin
        timeout = timeouts.get("connect")
        name = host.decode("ascii")
        stream = await self._backend.connect_tcp(name, port, timeout=timeout)
        if scheme == b"https":
            ctx = self._ssl or ssl.create_default_context()
            try:
                stream = await stream.start_tls(ctx, server_hostname=name, timeout=timeout)
            except BaseException:  # e.g. cancelled mid-handshake: do not leave the socket open
                await stream.aclose()
                raise
        return httpcore.AsyncHTTP11Connection(
            origin=httpcore.Origin(scheme, host, port), stream=stream, keepalive_expiry=self._expiry
        )

    async def aclose(self) -> None:
        for idle in self._idle.values():
            while idle:
                await idle.pop().aclose()
