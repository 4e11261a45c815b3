"""An httpcore network backend on a plain asyncio protocol (httpcore's own uses anyio, whose
cancel scope per read and write, and poll() per idle check, cost more than the HTTP itself)."""

from __future__ import annotations

import asyncio
import socket
import ssl
import sys
from collections.abc import Awaitable, Iterable
from typing import Any, TypeVar

import httpcore

PAUSE_AT = 1 << 20  # stop reading the socket while this much is buffered and unread
T = TypeVar("T")
HOLD = 64 * 1024  # writes up to this size wait for the next read: one send per request


class _Protocol(asyncio.Protocol):
    """Buffers what arrives; one waiter at a time (httpcore reads and writes in turn)."""

    def __init__(self) -> None:
        self.transport: Any = None
        self.buffer = b""
        self.eof = False
        self.error: BaseException | None = None
        self.paused = self.reading_paused = False
        self.waiter: asyncio.Future[None] | None = None
        self.held: list[bytes] = []  # written, not yet handed to the transport
        self.held_size = 0

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if len(self.buffer) > PAUSE_AT and not self.reading_paused:
            self.reading_paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof, self.error = True, exc
        self._wake()

    def pause_writing(self) -> None:
        self.paused = True

    def resume_writing(self) -> None:
        self.paused = False
        self._wake()

    def _wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    async def wait(self, timeout: float | None, error: type[Exception]) -> None:
        """Until `_wake`, or raise `error` after `timeout` seconds."""
        loop = asyncio.get_running_loop()
        self.waiter = waiter = loop.create_future()
        timer = None if timeout is None else loop.call_later(timeout, _expire, waiter)
        try:
            await waiter
        except _Expired:
            raise error(f"timed out after {timeout:g} s") from None
        finally:
            self.waiter = None
            if timer is not None:
                timer.cancel()


async def _within(awaitable: Awaitable[T], seconds: float | None) -> T:
    """Await with a deadline (`asyncio.timeout` where present: cheaper than `wait_for`)."""
    if sys.version_info >= (3, 11):
        async with asyncio.timeout(seconds):
            return await awaitable
    return await asyncio.wait_for(awaitable, seconds)  # pragma: no cover - Python 3.10


class _Expired(Exception):
    pass


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_exception(_Expired())


class AsyncioStream(httpcore.AsyncNetworkStream):
    """One TCP (or TLS) connection."""

    def __init__(self, protocol: _Protocol) -> None:
        self._p = protocol

    def _flush(self) -> None:
        p = self._p
        if p.held:
            data = b"".join(p.held) if len(p.held) > 1 else p.held[0]
            p.held.clear()
            p.held_size = 0
            if not p.transport.is_closing():
                p.transport.write(data)

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        p = self._p
        self._flush()
        if not p.buffer and not p.eof:
            await p.wait(timeout, httpcore.ReadTimeout)
        data = p.buffer
        if data:
            if len(data) > max_bytes:
                data, p.buffer = data[:max_bytes], data[max_bytes:]
            else:
                p.buffer = b""
            if p.reading_paused and len(p.buffer) <= PAUSE_AT:
                p.reading_paused = False
                p.transport.resume_reading()
            return data
        if p.error is not None:
            raise httpcore.ReadError(str(p.error) or type(p.error).__name__) from p.error
        return b""

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        p = self._p
        if not buffer:
            return
        if p.transport.is_closing():
            raise httpcore.WriteError("connection closed")
        p.held.append(buffer)
        p.held_size += len(buffer)
        if p.held_size <= HOLD:  # a request is written whole before its response is read
            return
        self._flush()
        while p.paused and not p.eof:
            await p.wait(timeout, httpcore.WriteTimeout)
        if p.eof and p.error is not None:
            raise httpcore.WriteError(str(p.error)) from p.error

    async def aclose(self) -> None:
        self._p.held.clear()
        self._p.transport.close()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        p = self._p
        loop = asyncio.get_running_loop()
        try:
            p.transport = await _within(
                loop.start_tls(p.transport, p, ssl_context, server_hostname=server_hostname),
                timeout,
            )
        except (TimeoutError, asyncio.TimeoutError):
            p.transport.close()
            raise httpcore.ConnectTimeout(f"TLS handshake timed out after {timeout:g} s") from None
        except (OSError, ssl.SSLError) as exc:
            p.transport.close()
            raise httpcore.ConnectError(str(exc)) from exc
        return self

    def get_extra_info(self, info: str) -> Any:
        transport = self._p.transport
        if info == "is_readable":  # idle and readable: the server has closed it
            return bool(self._p.buffer) or self._p.eof
        if info in ("client_addr", "server_addr"):
            return transport.get_extra_info("sockname" if info == "client_addr" else "peername")
        return transport.get_extra_info(info)  # "ssl_object", "socket"


class AsyncioBackend(httpcore.AsyncNetworkBackend):
    """Opens `AsyncioStream`s."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        local = (local_address, 0) if local_address else None
        try:
            _, protocol = await _within(
                loop.create_connection(_Protocol, host, port, local_addr=local), timeout
            )
        except (TimeoutError, asyncio.TimeoutError):
            raise httpcore.ConnectTimeout(f"connect timeout after {timeout:g} s") from None
        except OSError as exc:
            raise httpcore.ConnectError(str(exc)) from exc
        sock = protocol.transport.get_extra_info("socket")
        for option in socket_options or ():
            sock.setsockopt(*option)
        if sock is not None and sock.family != socket.AF_UNIX:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return AsyncioStream(protocol)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
