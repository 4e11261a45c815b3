"""What the loopback server sends: OpenAI-style completions, SSE events and error bodies.

Pure functions of a `Completion`; faults that corrupt the payload ("malformed", "empty") too.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

from tests.support.fake_model import Completion, tokens

_TOKEN_JSON: dict[str, bytes] = {}  # token -> its JSON string: streams repeat a small vocabulary


def error(message: str, kind: str, code: int) -> dict[str, Any]:
    """An error body as vLLM writes it."""
    return {"object": "error", "message": message, "type": kind, "param": None, "code": code}


def context_error(limit: int, prompt_tokens: int, max_tokens: int | None) -> dict[str, Any]:
    """vLLM's context-length rejection."""
    asked = prompt_tokens + (max_tokens or 0)
    text = (
        f"This model's maximum context length is {limit} tokens. However, you requested "
        f"{asked} tokens ({prompt_tokens} in the messages, {max_tokens} in the completion). "
        "Please reduce the length of the messages or completion."
    )
    return error(text, "BadRequestError", 400)


def message(done: Completion, reasoning_field: str | None) -> dict[str, Any]:
    """The assistant message, reasoning split into `reasoning_field` when one is given."""
    calls = {"tool_calls": list(done.tool_calls)} if done.tool_calls else {}
    if reasoning_field is None:
        return {"role": "assistant", "content": done.text, **calls}
    return {"role": "assistant", "content": done.content, reasoning_field: done.reasoning or None,
            **calls}  # fmt: skip


def completion(
    number: int, model: str, done: Completion, usage: dict[str, Any] | None,
    fault: str | None, reasoning_field: str | None, fingerprint: str | None = None,
) -> bytes:  # fmt: skip
    """A whole chat completion as JSON bytes."""
    choices = [
        {"index": 0, "message": message(done, reasoning_field), "finish_reason": done.finish_reason}
    ]
    data = {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": fingerprint,
        "choices": [] if fault == "empty" else choices,
        "usage": usage,
    }
    raw = json.dumps(data, ensure_ascii=False).encode()
    return raw[: len(raw) // 2] if fault == "malformed" else raw


def events(
    number: int, model: str, done: Completion, usage: dict[str, Any] | None,
    fault: str | None, reasoning_field: str | None, fingerprint: str | None = None,
) -> Iterator[bytes]:  # fmt: skip
    """The SSE events of a streamed completion, one token per event, then usage and [DONE]."""
    head = {"id": f"chatcmpl-{number}", "object": "chat.completion.chunk"}
    head.update(created=int(time.time()), model=model, system_fingerprint=fingerprint)

    def event(choices: list[Any], **extra: Any) -> bytes:
        data = json.dumps({**head, "choices": choices, **extra}, ensure_ascii=False)
        return b"data: " + data.encode() + b"\n\n"

    def delta(d: dict[str, Any], finish: str | None = None) -> bytes:
        return event([{"index": 0, "delta": d, "logprobs": None, "finish_reason": finish}])

    def token_events(key: str, toks: list[str]) -> Iterator[bytes]:
        # the same bytes as delta({key: tok}), built without a json.dumps per token
        ref = delta({key: "\0"})
        cut = ref.index(b'"\\u0000"')
        pre, post = ref[:cut], ref[cut + 8 :]
        for tok in toks:
            encoded = _TOKEN_JSON.get(tok)
            if encoded is None:
                encoded = json.dumps(tok, ensure_ascii=False).encode()
                if len(_TOKEN_JSON) < 100_000:
                    _TOKEN_JSON[tok] = encoded
            yield pre + encoded + post

    yield delta({"role": "assistant", "content": ""})
    if fault == "empty":
        yield event([])
    elif fault == "malformed":
        yield b'data: {"choices": [{"delta": {"content": "x"\n\n'
    else:
        if reasoning_field and done.reasoning:
            yield from token_events(reasoning_field, tokens(done.reasoning))
            parts = tokens(done.content)
        else:
            parts = tokens(done.text)
        yield from token_events("content", parts)
        yield from _call_deltas(done.tool_calls, delta)
        yield delta({}, done.finish_reason)
    if usage is not None:
        yield event([], usage=usage)
    yield b"data: [DONE]\n\n"


def _call_deltas(calls: tuple[dict, ...], delta: Any) -> Iterator[bytes]:
    """Function calls as a stream sends them: id and name first, the arguments in pieces."""
    for index, call in enumerate(calls):
        head = {"index": index, "id": call["id"], "type": "function",
                "function": {"name": call["function"]["name"], "arguments": ""}}  # fmt: skip
        yield delta({"tool_calls": [head]})
        arguments = call["function"]["arguments"]
        third = max(1, len(arguments) // 3)
        for start in range(0, len(arguments), third):
            piece = {"index": index, "function": {"arguments": arguments[start : start + third]}}
            yield delta({"tool_calls": [piece]})
