"""The httpx transport (`LeanTransport` on the asyncio network backend) inside a real
`httpx.AsyncClient`, against raw loopback servers that send exact bytes (plain and TLS)."""

from __future__ import annotations

import asyncio
import shutil
import socket
import ssl
import struct
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx
import pytest

from llmeval.client.httpx_transport import LeanTransport
from tests.raw_http import Handler, read_request, replying

Test = Callable[[httpx.AsyncClient, str], Awaitable[None]]


async def _with_server(
    handler: Handler, test: Test, *, tls: tuple[ssl.SSLContext, ssl.SSLContext] | None = None
) -> list[int]:
    """Run `test(client, base_url)`; each connection is handled by `handler(r, w, n)`."""
    served: list[int] = []

    async def conn(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        served.append(len(served))
        try:
            await handler(reader, writer, served[-1])
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(conn, "127.0.0.1", 0, ssl=tls[0] if tls else None)
    port = server.sockets[0].getsockname()[1]
    transport = LeanTransport(ssl_context=tls[1] if tls else None)
    client = httpx.AsyncClient(transport=transport, timeout=httpx.Timeout(1.0))
    try:
        await test(client, f"{'https' if tls else 'http'}://127.0.0.1:{port}")
    finally:
        await client.aclose()
        server.close()
        await server.wait_closed()
    return served


CHUNKED = (
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"5;ext=1\r\nhello\r\n1\r\n \r\n5\r\nworld\r\n0\r\nX-Trailer: 1\r\n\r\n"
)
PLAIN = b"HTTP/1.1 201 Created\r\nContent-Length: 3\r\n\r\nabc"


def test_responses_in_pieces_on_one_kept_alive_connection() -> None:
    async def test(client: httpx.AsyncClient, url: str) -> None:
        for want in [(200, b"hello world"), (201, b"abc"), (200, b"hello world")]:
            resp = await client.post(url + "/v1/x", content=b"{}")
            assert (resp.status_code, resp.content) == want

    served = asyncio.run(_with_server(replying(CHUNKED, PLAIN, CHUNKED), test))
    assert served == [0]  # one connection, kept alive


def test_requests_arrive_whole_and_bodies_of_megabytes_both_ways() -> None:
    big = bytes(range(256)) * (12 * 4096)  # 12 MB: past the read pause and the write hold
    seen: list[bytes] = []

    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        for _ in range(2):
            seen.append(await read_request(reader))
            body = seen[-1].split(b"\r\n\r\n", 1)[1]
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
            await writer.drain()
        await reader.read()

    async def test(client: httpx.AsyncClient, url: str) -> None:
        resp = await client.post(url + "/v1/big", content=big)
        assert resp.content == big
        resp = await client.post(url + "/v1/small", content=b'{"a": 1}')
        assert resp.content == b'{"a": 1}'

    assert asyncio.run(_with_server(echo, test)) == [0]
    assert seen[1].startswith(b"POST /v1/small HTTP/1.1\r\n") and seen[1].endswith(b'{"a": 1}')


def test_body_until_close_and_a_204() -> None:
    async def test(client: httpx.AsyncClient, url: str) -> None:
        resp = await client.get(url + "/v1/x")
        assert (resp.status_code, resp.content) == (200, b"all of it")

    until_close = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nall of it"
    assert asyncio.run(_with_server(replying(until_close, close=True), test)) == [0]

    async def test204(client: httpx.AsyncClient, url: str) -> None:
        for _ in range(2):
            resp = await client.post(url + "/v1/x", content=b"{}")
            assert (resp.status_code, resp.content) == (204, b"")

    no_body = b"HTTP/1.1 204 No Content\r\n\r\n"
    assert asyncio.run(_with_server(replying(no_body, no_body), test204)) == [0]


@pytest.mark.parametrize(
    ("response", "error"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", httpx.RemoteProtocolError),
        (b"NOT HTTP AT ALL\r\n\r\n", httpx.RemoteProtocolError),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", httpx.RemoteProtocolError),
    ],
)
def test_broken_responses_are_httpx_errors(response: bytes, error: type[Exception]) -> None:
    async def test(client: httpx.AsyncClient, url: str) -> None:
        with pytest.raises(error):
            await client.post(url + "/v1/x", content=b"{}")

    asyncio.run(_with_server(replying(response, close=True), test))


def test_silence_is_a_read_timeout_and_the_connection_is_not_reused() -> None:
    async def silent_once(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int
    ) -> None:
        await read_request(reader)
        if n == 0:
            await reader.read()  # never answers the first connection
        else:
            writer.write(PLAIN)
            await reader.read()

    async def test(client: httpx.AsyncClient, url: str) -> None:
        with pytest.raises(httpx.ReadTimeout):
            await client.post(url + "/v1/x", content=b"{}", timeout=0.3)
        resp = await client.post(url + "/v1/x", content=b"{}")
        assert resp.content == b"abc"

    assert asyncio.run(_with_server(silent_once, test)) == [0, 1]


def test_a_kept_alive_connection_the_server_closed_is_replaced_at_once() -> None:
    async def once_then_close(r: asyncio.StreamReader, w: asyncio.StreamWriter, n: int) -> None:
        await read_request(r)
        w.write(PLAIN)
        await w.drain()
        if n == 0:
            await asyncio.sleep(0.05)  # then closes, as an idle timeout would
        else:
            await r.read()

    async def test(client: httpx.AsyncClient, url: str) -> None:
        assert (await client.post(url + "/v1/x", content=b"{}")).content == b"abc"
        await asyncio.sleep(0.2)
        assert (await client.post(url + "/v1/x", content=b"{}")).content == b"abc"

    assert asyncio.run(_with_server(once_then_close, test)) == [0, 1]


@pytest.mark.parametrize("how", ["close", "reset"])
def test_a_request_the_server_drops_unanswered_on_a_reused_connection_is_sent_anew(
    how: str,
) -> None:
    async def drop_second(r: asyncio.StreamReader, w: asyncio.StreamWriter, n: int) -> None:
        await read_request(r)
        w.write(PLAIN)
        await w.drain()
        await read_request(r)
        if n == 0:  # the second request goes unanswered (an idle timeout's race)
            if how == "reset":
                sock = w.get_extra_info("socket")
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                w.transport.abort()
            return
        w.write(PLAIN)
        await r.read()

    async def test(client: httpx.AsyncClient, url: str) -> None:
        for _ in range(2):
            assert (await client.post(url + "/v1/x", content=b"{}")).content == b"abc"

    assert asyncio.run(_with_server(drop_second, test)) == [0, 1]


def test_a_cancelled_request_leaves_the_transport_usable() -> None:
    async def slow_first(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int
    ) -> None:
        await read_request(reader)
        if n == 0:
            await asyncio.sleep(0.5)
        writer.write(PLAIN)
        await reader.read()

    async def test(client: httpx.AsyncClient, url: str) -> None:
        task = asyncio.create_task(client.post(url + "/v1/x", content=b"{}"))
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert (await client.post(url + "/v1/x", content=b"{}")).content == b"abc"

    assert asyncio.run(_with_server(slow_first, test)) == [0, 1]


def test_refused_is_a_connect_error_naming_the_reason() -> None:
    async def test() -> None:
        async with httpx.AsyncClient(transport=LeanTransport()) as client:
            with pytest.raises(httpx.ConnectError) as caught:
                await client.get("http://127.0.0.1:1/v1/models")
        chain, exc = [], caught.value
        while exc is not None:
            chain.append(exc)
            exc = exc.__cause__
        assert any(isinstance(e, ConnectionRefusedError) for e in chain)

    asyncio.run(test())


@pytest.fixture(scope="module")
def tls_contexts(tmp_path_factory: pytest.TempPathFactory) -> tuple[ssl.SSLContext, ...]:
    """A self-signed certificate for 127.0.0.1: the server's context, and a client's trusting it."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    tmp = tmp_path_factory.mktemp("tls")
    cert, key = tmp / "cert.pem", tmp / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True,
    )  # fmt: skip
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(Path(cert), Path(key))
    client = ssl.create_default_context(cafile=str(cert))
    return server, client


def test_https_with_a_trusted_certificate_and_keep_alive(tls_contexts: tuple) -> None:
    async def test(client: httpx.AsyncClient, url: str) -> None:
        for _ in range(3):
            resp = await client.post(url + "/v1/x", content=b"{}")
            assert (resp.status_code, resp.content) == (201, b"abc")

    served = asyncio.run(_with_server(replying(PLAIN, PLAIN, PLAIN), test, tls=tls_contexts))
    assert served == [0]


def test_https_to_an_untrusted_certificate_is_a_connect_error(tls_contexts: tuple) -> None:
    async def test(client: httpx.AsyncClient, url: str) -> None:
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            await client.get(url + "/v1/models")

    server_ctx, _ = tls_contexts
    untrusting = ssl.create_default_context()  # the system's CAs only
    asyncio.run(_with_server(replying(PLAIN), test, tls=(server_ctx, untrusting)))
