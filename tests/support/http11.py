"""A minimal HTTP/1.1 server side over asyncio streams: parse requests, write responses.

Enough for loopback test servers: keep-alive, Content-Length bodies, chunked responses.
Hand-written so a test server can break a connection at any precise point.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    408: "Request Timeout",
    411: "Length Required",
    413: "Payload Too Large",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
}
MAX_HEAD = 64 * 1024
MAX_BODY = 64 * 1024 * 1024


@dataclass
class Request:
    """One parsed request."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    keep_alive: bool


class BadRequest(Exception):
    """The bytes on the wire are not a request we can serve; answer 400/411/413 and close."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


async def read_request(reader: asyncio.StreamReader) -> Request | None:
    """The next request on a connection, or None when the client closed it cleanly."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if not exc.partial.strip():
            return None
        raise BadRequest(400, "incomplete request head") from None
    except asyncio.LimitOverrunError:
        raise BadRequest(413, "request head too large") from None
    lines = head.decode("latin-1").split("\r\n")
    try:
        method, target, version = lines[0].split(" ", 2)
    except ValueError:
        raise BadRequest(400, "bad request line") from None
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    if "chunked" in headers.get("transfer-encoding", "").lower():
        raise BadRequest(411, "chunked request bodies are not supported")
    try:
        length = int(headers.get("content-length", "0"))
    except ValueError:
        raise BadRequest(400, "bad Content-Length") from None
    if length < 0 or length > MAX_BODY:
        raise BadRequest(413, "body too large")
    body = await reader.readexactly(length) if length else b""
    conn = headers.get("connection", "").lower()
    keep_alive = conn != "close" if version == "HTTP/1.1" else conn == "keep-alive"
    return Request(method.upper(), target.split("?", 1)[0], headers, body, keep_alive)


def response_head(status: int, headers: dict[str, str]) -> bytes:
    """Status line and headers, ending with the blank line."""
    lines = [f"HTTP/1.1 {status} {REASONS.get(status, 'Status')}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def full_response(status: int, body: bytes, *, keep_alive: bool = True, **extra: str) -> bytes:
    """A complete response with a Content-Length body."""
    headers = {
        "content-type": "application/json",
        "content-length": str(len(body)),
        "connection": "keep-alive" if keep_alive else "close",
    }
    headers.update({k.replace("_", "-"): v for k, v in extra.items()})
    return response_head(status, headers) + body


def json_response(status: int, data: Any, *, keep_alive: bool = True, **extra: str) -> bytes:
    """A complete JSON response."""
    body = json.dumps(data, ensure_ascii=False).encode()
    return full_response(status, body, keep_alive=keep_alive, **extra)


def chunk(data: bytes) -> bytes:
    """One chunk of a chunked response body."""
    return b"%x\r\n%s\r\n" % (len(data), data)


LAST_CHUNK = b"0\r\n\r\n"


def stream_head(*, keep_alive: bool = True) -> bytes:
    """Head of a chunked text/event-stream response."""
    return response_head(
        200,
        {
            "content-type": "text/event-stream",
            "transfer-encoding": "chunked",
            "cache-control": "no-cache",
            "connection": "keep-alive" if keep_alive else "close",
        },
    )
