"""Replies of a server that misbehaves in what it sends, not in how it connects: token counts
that are garbage, a reply that ignores max_tokens, choices out of index order, text after
[DONE]. The fault kinds `KINDS` (added to `faults.FAULTS`); pure rewrites of the bytes
`replies` makes, except `send_huge`, which writes its own reply.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

from tests.support import http11

# "bad_usage": usage counts from GARBAGE (in turn); "huge": a reply of `huge_bytes` whatever
# max_tokens said; "disorder": a wrong choice with index 1 before choice 0; "after_done":
# more text streamed after [DONE]; "after_stop": more text streamed after choice 0's
# finish_reason, before [DONE]; "error_200": HTTP 200 whose body is an error object.
KINDS = ("bad_usage", "huge", "disorder", "after_done", "after_stop", "error_200")
ERROR_200 = "injected error in a 200 reply"
GARBAGE = (b"NaN", b"1e400", b"-7", b'"12"', b"9" * 400, b"true", b"12.5", b"-Infinity", b"{}")
MARK = "\0garbage"  # what `usage` carries until the bytes are rewritten
MARKED_USAGE = {"prompt_tokens": MARK, "completion_tokens": MARK, "total_tokens": MARK}
WRONG = "WRONG CHOICE \\boxed{-1}"
AFTER_DONE = "TEXT AFTER DONE \\boxed{-2}"
AFTER_STOP = "TEXT AFTER STOP \\boxed{-3}"
_MARK_JSON = json.dumps(MARK).encode()
_PIECE = b"word " * 13_000  # 65,000 bytes of text per write of a huge reply


def rewrite_body(fault: str | None, raw: bytes, number: int) -> bytes:
    """A whole completion as the fault leaves it."""
    if fault == "bad_usage":
        return raw.replace(_MARK_JSON, GARBAGE[number % len(GARBAGE)])
    if fault == "disorder":
        data = json.loads(raw)
        wrong = {"index": 1, "message": {"role": "assistant", "content": WRONG}}
        data["choices"] = [wrong | {"finish_reason": "stop"}, *data["choices"]]
        return json.dumps(data).encode()
    return raw


def rewrite_events(fault: str | None, events: Iterator[bytes], number: int) -> Iterator[bytes]:
    """The SSE events of a streamed completion as the fault leaves them."""
    if fault == "disorder":
        yield _event([{"index": 1, "delta": {"content": WRONG}, "finish_reason": None}])
    for event in events:
        yield rewrite_body(fault, event, number) if fault == "bad_usage" else event
        if fault == "after_stop" and b'"finish_reason": "' in event:
            yield _event([{"index": 0, "delta": {"content": AFTER_STOP}, "finish_reason": None}])
    if fault == "after_done":
        yield _event([{"index": 0, "delta": {"content": AFTER_DONE}, "finish_reason": "stop"}])


def _event(choices: list[dict[str, object]]) -> bytes:
    return b"data: " + json.dumps({"choices": choices}).encode() + b"\n\n"


async def send_huge(writer: asyncio.StreamWriter, stream: bool, size: int, ka: bool) -> None:
    """A reply of about `size` bytes of text (whatever max_tokens said), written 65 KB at a
    time; stops when the client hangs up (as it should once the reply is past its cap)."""
    count = max(1, size // len(_PIECE))
    if stream:
        writer.write(http11.stream_head(keep_alive=ka))
        first, last = b'data: {"choices":[{"index":0,"delta":{"content":"', b'"}}]}\n\n'
        pieces: Iterator[bytes] = (http11.chunk(first + _PIECE + last) for _ in range(count))
        end = http11.chunk(_event([{"index": 0, "delta": {}, "finish_reason": "stop"}]))
        end += http11.chunk(b"data: [DONE]\n\n") + http11.LAST_CHUNK
    else:
        head = b'{"choices":[{"index":0,"message":{"role":"assistant","content":"'
        end = b'"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}'
        length = len(head) + count * len(_PIECE) + len(end)
        headers = {"content-type": "application/json", "content-length": str(length)}
        writer.write(http11.response_head(200, headers) + head)
        pieces = (_PIECE for _ in range(count))
    for piece in pieces:
        if writer.transport.is_closing():
            return
        writer.write(piece)
        await writer.drain()
    writer.write(end)
