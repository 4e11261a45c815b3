"""The chat client against the loopback server: every fault retried, typed errors, endpoints."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from llmeval.client.chat_client import ChatClient, ClientConfig
from llmeval.client.protocol import (
    ChatFailure,
    ContextLengthError,
    FatalServerError,
    Reply,
    RequestRejected,
    build_body,
)
from llmeval.sampling import Sampling
from tests.support.threaded_server import serve

MSG = [{"role": "user", "content": "What is 6 times 7?"}]


def _body(stream: bool, seed: int = 1, max_tokens: int = 200, **extra: Any) -> bytes:
    sampling = Sampling(max_tokens=max_tokens, extra_body=extra)
    return build_body("test-model", MSG, sampling, seed=seed, stream=stream)


def _config(urls: list[str], stream: bool, **kw: Any) -> ClientConfig:
    base = dict(
        base_urls=urls, stream=stream, retry_delay=0.01, retry_max_delay=0.05, max_workers=4
    )
    base.update(kw)
    return ClientConfig(**base)


def _run(config: ClientConfig, *bodies: bytes) -> list[Reply]:
    async def go() -> list[Reply]:
        async with ChatClient(config) as client:
            return [await client.complete(b) for b in bodies]

    return asyncio.run(go())


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize(
    "fault",
    ["429", "408", "500", "503", "drop", "drop_mid", "malformed", "empty", "close_after"],
)
def test_each_fault_is_retried_and_the_reply_is_the_clean_one(fault: str, stream: bool) -> None:
    with serve() as clean:
        (want,) = _run(_config([clean.url], stream), _body(stream))
    with serve(schedule={0: fault}) as srv:
        config = _config([srv.url], stream, max_workers=1)
        got = _run(config, _body(stream), _body(stream, 2))
        assert srv.stats[f"fault {fault}"] == 1
        assert srv.stats["POST /v1/chat/completions"] == 3  # one fault, one retry, one more
    assert got[0].text == want.text and got[0].text.startswith("<think>")
    assert got[0].finish_reason == "stop"


def test_slow_response_past_the_read_timeout_is_retried() -> None:
    with serve(schedule={0: "slow"}, slow_delay=1.0) as srv:
        (got,) = _run(_config([srv.url], True, timeout=0.3), _body(True))
        assert srv.stats["fault slow"] == 1 and got.finish_reason == "stop"


def test_streamed_and_whole_replies_agree_and_report_usage() -> None:
    with serve(reasoning_field="reasoning") as srv:
        a, b = (
            _run(_config([srv.url], True), _body(True, max_tokens=15)),
            _run(_config([srv.url], False), _body(False, max_tokens=15)),
        )
    ra, rb = a[0], b[0]
    assert (ra.text, ra.reasoning, ra.finish_reason) == (rb.text, rb.reasoning, rb.finish_reason)
    assert ra.finish_reason == "length" and ra.completion_tokens == 15 and ra.reasoning
    assert ra.ttft_s is not None and rb.ttft_s is None


def test_context_length_is_its_own_error_and_not_retried() -> None:
    with serve(max_context=50) as srv:
        for stream in (True, False):
            with pytest.raises(ContextLengthError, match="maximum context length is 50"):
                _run(_config([srv.url], stream), _body(stream, max_tokens=100))
        assert srv.stats["POST /v1/chat/completions"] == 2


def test_other_4xx_fails_at_once_and_auth_and_model_are_fatal() -> None:
    with serve(api_key="k-123") as srv:
        bad = json.dumps({"model": "test-model"}).encode()  # no messages: a 400
        with pytest.raises(RequestRejected, match="HTTP 400: body must be JSON"):
            _run(_config([srv.url], False, api_key="k-123"), bad)
        with pytest.raises(FatalServerError, match="HTTP 401"):
            _run(_config([srv.url], True, api_key="wrong"), _body(True))
        wrong = build_body("nope", MSG, Sampling(max_tokens=5), seed=1, stream=False)
        with pytest.raises(FatalServerError, match="The model `nope` does not exist"):
            _run(_config([srv.url], False, api_key="k-123"), wrong)
        assert srv.stats["POST /v1/chat/completions"] == 3
        assert srv.server.auth_seen == {"Bearer k-123", "Bearer wrong"}


def test_retries_are_capped() -> None:
    with serve(faults={"503": 1.0}) as srv:
        with pytest.raises(ChatFailure, match="gave up after 3 attempts: HTTP 503"):
            _run(_config([srv.url], True, max_retries=2), _body(True))
        assert srv.stats["fault 503"] == 3


def test_load_is_spread_and_a_dead_endpoint_is_set_aside() -> None:
    async def many(config: ClientConfig, n: int) -> list[Reply]:
        async with ChatClient(config) as client:
            return await asyncio.gather(*(client.complete(_body(True, i)) for i in range(n)))

    with serve(latency=0.02) as a, serve(latency=0.02) as b:
        got = asyncio.run(many(_config([a.url, b.url], True, max_workers=8), 40))
        assert {o.endpoint for o in got} == {a.url, b.url}
        assert a.stats["completions"] + b.stats["completions"] == 40
        assert min(a.stats["completions"], b.stats["completions"]) >= 10
        dead = "http://127.0.0.1:9/v1"  # discard port: connection refused
        got = asyncio.run(many(_config([dead, a.url], True, max_retries=4), 20))
        assert {o.endpoint for o in got} == {a.url}


def test_a_server_gone_for_good_stops_the_run() -> None:
    with serve() as srv:
        url = srv.url
    with pytest.raises(FatalServerError, match="servers unreachable: cannot connect"):
        _run(_config([url], True, max_retries=2), _body(True))


def test_a_trickling_stream_is_cut_at_the_deadline_the_read_timeout_never_trips() -> None:
    with serve(token_rate=40) as srv:  # a byte every 50 ms; 200 tokens take ~5 s
        config = _config([srv.url], True, timeout=0.3, deadline=0.6, max_retries=1)
        with pytest.raises(ChatFailure, match=r"gave up after 2 .*within the 0.6 s deadline"):
            _run(config, _body(True))
        assert srv.stats["POST /v1/chat/completions"] == 2
        (got,) = _run(_config([srv.url], True, deadline=30.0), _body(True, max_tokens=8))
        assert got.finish_reason == "length"


def test_a_kept_alive_connection_the_server_closed_is_replaced_at_once() -> None:
    """llama-server closes a kept-alive connection after a stream: the next request finds it
    closed before any answer. That is retried at once on a new connection, with no backoff,
    no retry counted and no failure held against the endpoint."""

    async def two(config: ClientConfig) -> tuple[int, int]:
        async with ChatClient(config) as client:
            await client.complete(_body(True))
            await client.complete(_body(True, 2))
            return client.retries, client.endpoints[0].failures

    with serve(schedule={0: "close_after"}) as srv:
        config = _config([srv.url], True, max_workers=1, retry_delay=30.0, retry_max_delay=30.0)
        assert asyncio.run(two(config)) == (0, 0)
        assert srv.stats["dropped after close_after"] == 1
