"""Raw loopback HTTP handlers shared by the transport tests: read one request, dribble replies."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

# handler(reader, writer, connection number)
Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter, int], Awaitable[None]]


async def read_request(reader: asyncio.StreamReader) -> bytes:
    """One request: its head and its Content-Length body."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = [int(v) for k, _, v in (ln.partition(b":") for ln in head.split(b"\r\n"))
              if k.lower() == b"content-length"]  # fmt: skip
    return head + await reader.readexactly(length[0] if length else 0)


def replying(*responses: bytes, close: bool = False) -> Handler:
    """A handler answering one request per response, 7 bytes at a time; then it holds the
    connection until the client closes it, or closes it itself (`close`)."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        for response in responses:
            await read_request(reader)
            for i in range(0, len(response), 7):  # dribble: bodies arrive in pieces
                writer.write(response[i : i + 7])
                await writer.drain()
        if not close:
            await reader.read()  # keep the connection until the client closes it

    return handler
