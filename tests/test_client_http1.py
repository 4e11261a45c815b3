"""The lean HTTP/1.1 client against a raw loopback server that sends exact bytes."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from llmeval.client.http1 import HttpError, Pool, ReadTimeout
from tests.raw_http import Handler, read_request, replying


async def _with_server(handler: Handler, test: Callable[[Pool], Awaitable[None]]) -> list[int]:
    """Run `test` against a server whose connections are handled by `handler(r, w, n)`."""
    served: list[int] = []

    async def conn(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        served.append(len(served))
        try:
            await handler(reader, writer, served[-1])
        finally:
            writer.close()

    server = await asyncio.start_server(conn, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    pool = Pool(f"http://127.0.0.1:{port}/v1", connect_timeout=5, read_timeout=1)
    try:
        await test(pool)
    finally:
        await pool.aclose()
        server.close()
        await server.wait_closed()
    return served


async def _body(pool: Pool, path: str = "/v1/x") -> tuple[int, bytes]:
    resp = await pool.request("POST", path, b"{}")
    try:
        return resp.status_code, await resp.aread()
    finally:
        await resp.aclose()


def test_chunked_with_extensions_and_trailers_then_keep_alive() -> None:
    chunked = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"5;ext=1\r\nhello\r\n1\r\n \r\n5\r\nworld\r\n0\r\nX-Trailer: 1\r\n\r\n"
    )
    plain = b"HTTP/1.1 201 Created\r\nContent-Length: 3\r\n\r\nabc"

    async def test(pool: Pool) -> None:
        assert await _body(pool) == (200, b"hello world")
        assert await _body(pool) == (201, b"abc")
        assert await _body(pool) == (200, b"hello world")

    served = asyncio.run(_with_server(replying(chunked, plain, chunked), test))
    assert len(served) == 1  # one connection, kept alive


def test_body_until_close_and_no_body_statuses() -> None:
    async def test(pool: Pool) -> None:
        assert await _body(pool) == (200, b"all of it")

    asyncio.run(_with_server(replying(b"HTTP/1.0 200 OK\r\n\r\nall of it", close=True), test))

    async def test204(pool: Pool) -> None:
        assert await _body(pool) == (204, b"")

    asyncio.run(_with_server(replying(b"HTTP/1.1 204 No Content\r\n\r\n"), test204))


@pytest.mark.parametrize(
    ("response", "message"),
    [
        (b"garbage\r\n\r\n", "malformed response head"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "malformed response body"),
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
            "closed mid-body|closed the connection",
        ),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", "closed"),
    ],
)
def test_broken_responses_are_http_errors(response: bytes, message: str) -> None:
    async def test(pool: Pool) -> None:
        with pytest.raises(HttpError, match=message):
            await _body(pool)

    asyncio.run(_with_server(replying(response, close=True), test))


def test_silence_is_a_read_timeout() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        await read_request(reader)
        await asyncio.sleep(3)

    async def test(pool: Pool) -> None:
        with pytest.raises(ReadTimeout):
            await _body(pool)

    asyncio.run(_with_server(silent, test))


def test_a_keep_alive_connection_closed_by_the_server_is_replaced_at_once() -> None:
    ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

    async def once_then_close(r: asyncio.StreamReader, w: asyncio.StreamWriter, n: int) -> None:
        await read_request(r)
        w.write(ok)
        await w.drain()
        await read_request(r)  # read the next request, then hang up without answering
        if n > 0:
            w.write(ok)
            await w.drain()
            await r.read()

    async def test(pool: Pool) -> None:
        assert await _body(pool) == (200, b"ok")
        assert await _body(pool) == (200, b"ok")  # resent on a new connection

    served = asyncio.run(_with_server(once_then_close, test))
    assert len(served) == 2
