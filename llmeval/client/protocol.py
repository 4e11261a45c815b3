"""The chat protocol without I/O: request bodies, response and SSE parsing, error classification.

Pure functions over bytes and dicts, so `client.py` holds only transport, retries and endpoints.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from pydantic_core import from_json

# Messages servers use when prompt + max_tokens exceeds the context (vLLM, SGLang, llama.cpp,
# OpenAI): deterministic, so the sample is recorded instead of retried.
_CONTEXT = re.compile(
    r"maximum context length|context length|context size|context_length_exceeded"
    r"|exceeds the available context|prompt is too long|too many tokens",
    re.IGNORECASE,
)


def loads(raw: bytes) -> Any:
    """Parse JSON fast (pydantic-core, ~3x json.loads); json.loads where it refuses (lone
    surrogate escapes, which servers do send). Raises ValueError for invalid JSON."""
    try:
        return from_json(raw)
    except ValueError:
        try:
            return json.loads(raw)
        except RecursionError:  # brackets nested 100,000 deep
            raise ValueError("JSON nested too deeply") from None


def build_body(
    model: str,
    messages: list[dict[str, str]],
    *,
    max_tokens: int,
    seed: int,
    stream: bool,
    sampling: dict[str, Any],
    extra_body: dict[str, Any] | None = None,
) -> bytes:
    """The JSON body of one chat request asking for one completion."""
    body: dict[str, Any] = {"model": model, "messages": messages, "n": 1, "max_tokens": max_tokens}
    body.update({k: v for k, v in sampling.items() if v is not None})
    body["seed"] = seed
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    if extra_body:
        body.update(extra_body)
    return json.dumps(body, ensure_ascii=False).encode()


def clean_text(text: str | None) -> str | None:
    """Text safe to store: valid surrogate pairs joined, lone surrogates replaced by U+FFFD."""
    if not text:
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def is_context_error(status: int, message: str) -> bool:
    """A 400-class rejection because the prompt plus max_tokens exceed the model's context."""
    return status in (400, 413, 422) and bool(_CONTEXT.search(message))


def error_message(raw: bytes, limit: int = 300) -> str:
    """The server's error message from an error body, on one line."""
    text = raw.decode("utf-8", "replace")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        data = None
    if isinstance(data, dict):
        inner = data.get("error", data)
        if isinstance(inner, dict):
            text = str(inner.get("message") or inner.get("detail") or inner)
        elif isinstance(inner, str):
            text = inner
        elif "detail" in data:
            text = str(data["detail"])
    text = " ".join(text.split())
    return text[:limit] + ("..." if len(text) > limit else "")


class MalformedResponse(ValueError):
    """A 200 response that is not a usable chat completion (retried)."""


@dataclass
class Reply:
    """What one completion returned, before it becomes a record."""

    text: str = ""
    reasoning: str | None = None
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    ttft_s: float | None = None


def _count(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _finish(value: Any) -> str | None:
    return None if value is None else str(value)


def _text_of(value: Any) -> str:
    """Message text: a string, or the text parts of a list of content parts."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(
            p["text"] for p in value if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    raise MalformedResponse(f"message text is a {type(value).__name__}")


def _usage_into(reply: Reply, usage: Any) -> None:
    if isinstance(usage, dict):
        reply.prompt_tokens = _count(usage.get("prompt_tokens"))
        reply.completion_tokens = _count(usage.get("completion_tokens"))


def parse_completion(raw: bytes) -> Reply:
    """A non-streamed chat completion; raises `MalformedResponse` when it is not one."""
    try:
        data = loads(raw)
        choice = data["choices"][0]
        message = choice["message"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise MalformedResponse(f"malformed completion ({type(exc).__name__}: {exc})") from None
    if not isinstance(message, dict):
        raise MalformedResponse("malformed completion (message is not an object)")
    reasoning = _text_of(message.get("reasoning_content") or message.get("reasoning"))
    reply = Reply(
        text=clean_text(_text_of(message.get("content"))) or "",
        reasoning=clean_text(reasoning) or None,
        finish_reason=_finish(choice.get("finish_reason") if isinstance(choice, dict) else None),
    )
    _usage_into(reply, data.get("usage"))
    return reply


@dataclass
class StreamParser:
    """Accumulates a chat completion from SSE bytes fed in arbitrary pieces."""

    started: float = 0.0
    now: Any = None  # a clock (time.perf_counter) for time-to-first-token
    _buf: bytes = b""
    _text: list[str] = field(default_factory=list)
    _reasoning: list[str] = field(default_factory=list)
    reply: Reply = field(default_factory=Reply)
    done: bool = False
    saw_choice: bool = False

    def feed(self, data: bytes) -> None:
        """Consume bytes; complete lines are parsed, a partial line is kept."""
        lines = (self._buf + data if self._buf else data).split(b"\n")
        self._buf = lines.pop()
        for line in lines:
            if line[:5] == b"data:":
                self._event(line[5:].strip())

    def _event(self, payload: bytes) -> None:
        if payload == b"[DONE]":
            self.done = True
            return
        if not payload:
            return
        try:
            event = loads(payload)
        except ValueError:
            raise MalformedResponse("malformed stream event (not JSON)") from None
        if not isinstance(event, dict):
            raise MalformedResponse("malformed stream event (not an object)")
        if "error" in event:
            raise StreamError(error_message(json.dumps(event).encode()))
        if event.get("usage"):
            _usage_into(self.reply, event["usage"])
        try:
            self._choices(event.get("choices") or ())
        except (AttributeError, TypeError) as exc:
            raise MalformedResponse(f"malformed stream event ({exc})") from None

    def _choices(self, choices: list[Any]) -> None:
        for choice in choices:
            if choice.get("index", 0) != 0:
                continue  # a server that ignored n=1: keep the first completion only
            self.saw_choice = True
            delta = choice.get("delta") or {}
            content = _text_of(delta.get("content"))
            reasoning = _text_of(delta.get("reasoning_content") or delta.get("reasoning"))
            if (content or reasoning) and self.reply.ttft_s is None and self.now is not None:
                self.reply.ttft_s = self.now() - self.started
            if content:
                self._text.append(content)
            if reasoning:
                self._reasoning.append(reasoning)
            if choice.get("finish_reason"):
                self.reply.finish_reason = _finish(choice["finish_reason"])

    def finish(self) -> Reply:
        """The reply once the stream ended; raises `MalformedResponse` for a cut stream."""
        if self._buf.strip():
            self.feed(b"\n")
        if not self.saw_choice:
            raise MalformedResponse("stream ended without any choice")
        if self.reply.finish_reason is None:
            cut = "before its finish" if not self.done else "without a finish_reason"
            raise MalformedResponse(f"stream ended {cut}")
        self.reply.text = clean_text("".join(self._text)) or ""
        if self._reasoning:
            self.reply.reasoning = clean_text("".join(self._reasoning))
        return self.reply


class StreamError(Exception):
    """The server reported an error inside a stream."""
