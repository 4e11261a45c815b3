"""The chat protocol without I/O: request bodies, response and SSE parsing, typed errors."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic_core import from_json

from llmeval.client.messages import MalformedText, clean_text, message_texts
from llmeval.client.tools import ToolCallDeltas, tool_calls_of
from llmeval.errors import redact
from llmeval.jsonl import loads_text
from llmeval.records import token_count
from llmeval.sampling import Sampling

# Messages servers use when prompt + max_tokens exceeds the context (vLLM, SGLang, llama.cpp,
# OpenAI): deterministic, so the sample is recorded instead of retried.
_CONTEXT = re.compile(
    r"maximum context length|context length|context size|context_length_exceeded"
    r"|exceeds the available context|prompt is too long|too many tokens",
    re.IGNORECASE,
)


class ChatFailure(Exception):
    """A sample that could not be completed; the message is the server's or the transport's."""


class ContextLengthError(ChatFailure):
    """Prompt + max_tokens exceed the context: deterministic, never retried."""


class RequestRejected(ChatFailure):
    """A 4xx the server will repeat (bad parameter): fails the sample at once."""


class FatalServerError(ChatFailure):
    """Every further request would fail the same way (auth, wrong model, servers gone)."""


class Transient(Exception):
    """Worth retrying: 408/429/5xx, broken or timed-out connections, malformed replies."""

    def __init__(
        self, message: str, retry_after: float = 0.0, connect: bool = False, dropped: bool = False
    ) -> None:
        super().__init__(message)
        # dropped: a kept-alive connection the server had closed, found before any answer
        self.retry_after, self.connect, self.dropped = retry_after, connect, dropped


class MalformedResponse(Transient):
    """A 200 response that is not a usable chat completion (retried)."""


class StreamError(Transient):
    """The server reported an error inside a stream (retried, unless it is the context's)."""


def build_body(
    model: str, messages: list[dict[str, Any]], sampling: Sampling, *, seed: int, stream: bool
) -> bytes:
    """The JSON body of one chat request asking for one completion with `seed`."""
    body: dict[str, Any] = {"model": model, "messages": messages, "n": 1}
    for name in sampling.PARAMS:
        if getattr(sampling, name) is not None:
            body[name] = getattr(sampling, name)
    if sampling.thinking_budget is not None:
        body["thinking_token_budget"] = sampling.thinking_budget
    body["seed"] = seed
    if stream:
        body |= {"stream": True, "stream_options": {"include_usage": True}}
    return json.dumps(body | sampling.extra_body, ensure_ascii=False).encode()


def is_context_error(status: int, message: str) -> bool:
    """A 400-class rejection because the prompt plus max_tokens exceed the model's context."""
    return status in (400, 413, 422) and bool(_CONTEXT.search(message))


def error_message(raw: bytes, limit: int = 300) -> str:
    """The server's error message from an error body, on one line, secrets hidden (`redact`)."""
    text = raw.decode("utf-8", "replace")
    try:
        data = loads_text(raw)
    except ValueError:
        data = None
    if isinstance(data, dict):
        inner = data.get("error", data)
        if isinstance(inner, dict):
            text = str(inner.get("message") or inner.get("detail") or inner)
        elif isinstance(inner, str):
            text = inner
        elif "detail" in data:
            text = str(data["detail"])
    text = redact(" ".join(text.split()))
    return text[:limit] + ("..." if len(text) > limit else "")


def raise_for_status(url: str, status: int, raw: bytes, retry_after: str | None) -> None:
    """Turn a non-200 answer into the right error."""
    message = error_message(raw)
    if status in (408, 409, 425, 429) or status >= 500:
        try:
            wait = float(retry_after or 0)
        except ValueError:
            wait = 0.0
        raise Transient(f"HTTP {status}: {message}", retry_after=wait)
    if is_context_error(status, message):
        raise ContextLengthError(message)
    if status in (401, 403, 404):
        raise FatalServerError(f"{url}: HTTP {status}: {message}")
    raise RequestRejected(f"HTTP {status}: {message}")


@dataclass
class Reply:
    """What one completion returned, where from and how long the good attempt took."""

    text: str = ""
    reasoning: str | None = None
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    reasoning_tokens: int | None = None  # usage.completion_tokens_details.reasoning_tokens
    system_fingerprint: Any = None  # as the server sent it (the client keeps a short one)
    ttft_s: float | None = None
    endpoint: str | None = None
    latency_s: float | None = None
    cut_by: str | None = None  # "max_reply_bytes": the reply was cut at the size cap
    bad_usage: bool = False  # a token count that was not sane was dropped
    tool_calls: list[dict[str, str]] = field(default_factory=list)  # [{id, name, arguments}]


CUT = "max_reply_bytes"


def _usage_into(reply: Reply, usage: Any) -> None:
    """The token counts of `usage`; one that is there but not sane (reasoning tokens: also
    more than the completion's) is dropped and noted."""
    if not isinstance(usage, dict):
        return
    details = usage.get("completion_tokens_details")
    if not isinstance(details, dict):
        reply.bad_usage |= details is not None
        details = {}
    sent = {name: usage.get(name) for name in ("prompt_tokens", "completion_tokens")}
    sent["reasoning_tokens"] = details.get("reasoning_tokens")
    for name, value in sent.items():
        count, whole = token_count(value), reply.completion_tokens
        if name == "reasoning_tokens" and count is not None and whole is not None and count > whole:
            count = None
        reply.bad_usage |= count is None and value is not None
        setattr(reply, name, count)


def parse_completion(raw: bytes, cut: bool = False) -> Reply:
    """A non-streamed chat completion (choice index 0), or as much of one as the first bytes
    hold when it was `cut` at the size cap; raises `MalformedResponse` when it is not one."""
    try:
        data = from_json(raw, allow_partial="trailing-strings") if cut else loads_text(raw)
        _raise_if_error(data)
        choice = next((c for c in data["choices"] if c.get("index", 0) == 0), None)
        if choice is None:
            raise MalformedResponse("malformed completion (no choice of index 0)")
        text, reasoning = message_texts(choice["message"])
        calls = tool_calls_of(choice["message"])
    except MalformedText as exc:
        raise MalformedResponse(str(exc)) from None
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise MalformedResponse(f"malformed completion ({type(exc).__name__}: {exc})") from None
    finish = "length" if cut else choice.get("finish_reason")
    reply = Reply(clean_text(text), clean_text(reasoning) or None, cut_by=CUT if cut else None)
    reply.tool_calls = calls
    reply.finish_reason = None if finish is None else str(finish)
    reply.system_fingerprint = data.get("system_fingerprint")
    _usage_into(reply, data.get("usage"))
    return reply


def _raise_if_error(data: Any) -> None:
    """The server's error object instead of a reply or event (HTTP 200 with `{"error": ...}`,
    or vLLM's `"object": "error"`): its message, retried (a context-length one is not)."""
    if isinstance(data, dict) and ("error" in data or data.get("object") == "error"):
        message = error_message(json.dumps(data).encode())
        if is_context_error(400, message):
            raise ContextLengthError(message)
        raise StreamError(f"the server replied with an error: {message}")


@dataclass
class StreamParser:
    """Accumulates a chat completion from SSE bytes fed in arbitrary pieces, until [DONE] or
    until its text (or one line) exceeds `limit` (then `done`, and the reply is cut)."""

    started: float = 0.0
    now: Any = None  # a clock (time.perf_counter) for time-to-first-token
    limit: int = 1 << 24  # characters of text, bytes of a line
    _buf: bytes = b""
    _text: list[str] = field(default_factory=list)
    _reasoning: list[str] = field(default_factory=list)
    _calls: ToolCallDeltas = field(default_factory=ToolCallDeltas)
    _size: int = 0
    reply: Reply = field(default_factory=Reply)
    done: bool = False
    saw_choice: bool = False

    def feed(self, data: bytes) -> None:
        """Consume bytes; complete lines are parsed, a partial line is kept. Nothing after
        [DONE] (or the cap) counts."""
        if self.done:
            return
        lines = (self._buf + data if self._buf else data).split(b"\n")
        self._buf = lines.pop()
        for line in lines:
            if line[:5] == b"data:" and not self.done:
                self._event(line[5:].strip())
        if len(self._buf) > self.limit:  # one line that never ends
            self.done, self.reply.cut_by = True, CUT

    def _event(self, payload: bytes) -> None:
        if payload == b"[DONE]":
            self.done = True
            return
        if not payload:
            return
        try:
            event = loads_text(payload)
        except ValueError:
            raise MalformedResponse("malformed stream event (not JSON)") from None
        if not isinstance(event, dict):
            raise MalformedResponse("malformed stream event (not an object)")
        _raise_if_error(event)
        if event.get("usage"):
            _usage_into(self.reply, event["usage"])
        if self.reply.system_fingerprint is None:
            self.reply.system_fingerprint = event.get("system_fingerprint")
        try:
            self._choices(event.get("choices") or ())
        except MalformedText as exc:
            raise MalformedResponse(str(exc)) from None
        except (AttributeError, TypeError) as exc:
            raise MalformedResponse(f"malformed stream event ({exc})") from None

    def _choices(self, choices: Iterable[Any]) -> None:
        for choice in choices:
            if choice.get("index", 0) != 0 or self.reply.finish_reason is not None:
                continue  # another completion (n=1 ignored), or text after this one finished
            self.saw_choice = True
            delta = choice.get("delta") or {}
            content, reasoning = message_texts(delta)
            self._size += self._calls.add(delta.get("tool_calls"))
            if (content or reasoning) and self.reply.ttft_s is None and self.now is not None:
                self.reply.ttft_s = self.now() - self.started
            if content:
                self._text.append(content)
            if reasoning:
                self._reasoning.append(reasoning)
            self._size += len(content) + len(reasoning)
            if self._size > self.limit:
                self.done, self.reply.cut_by = True, CUT
            if choice.get("finish_reason"):
                self.reply.finish_reason = str(choice["finish_reason"])

    def finish(self) -> Reply:
        """The reply once the stream ended (finish "length" when cut at `limit`); raises
        `MalformedResponse` for a stream that broke off."""
        if self._buf.strip() and not self.done:
            self.feed(b"\n")
        if self.reply.cut_by:
            self.reply.finish_reason = "length"
        elif not self.saw_choice:
            raise MalformedResponse("stream ended without any choice")
        elif self.reply.finish_reason is None:
            cut = "before its finish" if not self.done else "without a finish_reason"
            raise MalformedResponse(f"stream ended {cut}")
        self.reply.text = clean_text("".join(self._text))
        self.reply.tool_calls = self._calls.done()
        if self._reasoning:
            self.reply.reasoning = clean_text("".join(self._reasoning))
        return self.reply
