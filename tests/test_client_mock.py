"""The chat client's request and response handling through `httpx.MockTransport` (no socket):
what it sends, what it retries, what it reads from whole and streamed replies."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from llmeval.client.chat_client import ChatClient, ClientConfig
from llmeval.client.protocol import ChatFailure, RequestRejected, build_body
from llmeval.sampling import Sampling

MSG = [{"role": "user", "content": "2+2?"}]
COMPLETION = {
    "choices": [{"message": {"content": "\\boxed{4}"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 5, "completion_tokens": 3},
}


def _sse(*events: dict) -> bytes:
    return b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + (
        b"data: [DONE]\n\n"
    )


def _client(handler, stream: bool = False, **kw) -> ChatClient:  # type: ignore[no-untyped-def]
    config = ClientConfig(
        base_urls=["http://gpu-node:8000"],
        stream=stream,
        retry_delay=0.0,
        retry_max_delay=0.0,
        **kw,
    )
    return ChatClient(config, transport=httpx.MockTransport(handler))


def _complete(client: ChatClient, stream: bool = False) -> object:
    async def go() -> object:
        async with client:
            body = build_body("m", MSG, Sampling(max_tokens=9), seed=3, stream=stream)
            return await client.complete(body)

    return asyncio.run(go())


def test_the_request_carries_the_body_the_key_and_no_compression() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=COMPLETION)

    outcome = _complete(_client(handler, api_key="sk-secret"))
    (req,) = seen
    assert str(req.url) == "http://gpu-node:8000/v1/chat/completions" and req.method == "POST"
    assert req.headers["authorization"] == "Bearer sk-secret"
    assert req.headers["accept-encoding"] == "identity"
    body = json.loads(req.content)
    assert body["seed"] == 3 and body["n"] == 1 and body["max_tokens"] == 9
    assert outcome.text == "\\boxed{4}" and outcome.completion_tokens == 3  # type: ignore[attr-defined]


def test_server_errors_and_malformed_replies_are_retried_then_the_good_one_kept() -> None:
    replies = [
        httpx.Response(429, json={"error": {"message": "slow down"}}, headers={"retry-after": "0"}),
        httpx.Response(503, text="overloaded"),
        httpx.Response(200, text="{not json"),
        httpx.Response(200, json={"choices": []}),
        httpx.Response(200, json=COMPLETION),
    ]
    client = _client(lambda request: replies.pop(0))
    assert _complete(client).text == "\\boxed{4}"  # type: ignore[attr-defined]
    assert client.retries == 4 and not replies


def test_a_bad_request_is_not_retried_and_retries_are_capped() -> None:
    calls = []

    def bad(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(400, json={"error": {"message": "top_k must be positive"}})

    with pytest.raises(RequestRejected, match="HTTP 400: top_k must be positive"):
        _complete(_client(bad))
    assert len(calls) == 1
    with pytest.raises(ChatFailure, match="gave up after 3 attempts: HTTP 500"):
        _complete(_client(lambda r: httpx.Response(500, text="boom"), max_retries=2))


def test_a_streamed_reply_is_assembled_with_reasoning_and_usage() -> None:
    events = [
        {"choices": [{"index": 0, "delta": {"reasoning_content": "think "}}]},
        {"choices": [{"index": 0, "delta": {"content": "\\boxed{"}}]},
        {"choices": [{"index": 0, "delta": {"content": "4}"}, "finish_reason": "stop"}]},
        {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 4}},
    ]

    def handler(request: httpx.Request) -> httpx.Response:
        assert json.loads(request.content)["stream_options"] == {"include_usage": True}
        return httpx.Response(200, stream=httpx.ByteStream(_sse(*events)))

    reply = _complete(_client(handler, stream=True), stream=True)
    assert (reply.text, reply.reasoning, reply.completion_tokens) == ("\\boxed{4}", "think ", 4)
    assert reply.ttft_s is not None


def test_a_stream_cut_before_its_finish_is_retried() -> None:
    cut = _sse({"choices": [{"index": 0, "delta": {"content": "\\boxed{"}}]})[:-16]
    whole = _sse({"choices": [{"index": 0, "delta": {"content": "7"}, "finish_reason": "stop"}]})
    replies = [httpx.Response(200, stream=httpx.ByteStream(b)) for b in (cut, whole)]
    client = _client(lambda request: replies.pop(0), stream=True)
    assert _complete(client, stream=True).text == "7"  # type: ignore[attr-defined]
    assert client.retries == 1
