"""The chat protocol without I/O: bodies, SSE split anywhere, reasoning fields, error classes."""

from __future__ import annotations

import json

import pytest

from llmeval.client.chat_client import display_url, normalize_base_url
from llmeval.client.protocol import (
    ContextLengthError,
    MalformedResponse,
    StreamError,
    StreamParser,
    build_body,
    clean_text,
    error_message,
    is_context_error,
    parse_completion,
)
from llmeval.errors import UsageError
from llmeval.sampling import Sampling


def _sse(*events: dict | str) -> bytes:
    out = b""
    for e in events:
        data = e if isinstance(e, str) else json.dumps(e)
        out += b"data: " + data.encode() + b"\n\n"
    return out


def _delta(finish: str | None = None, **delta: str) -> dict:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


STREAM = _sse(
    _delta(role="assistant", content=""),
    _delta(reasoning_content="think "),
    _delta(reasoning_content="hard"),
    _delta(content="So \\boxed{"),
    _delta(content="42}"),
    _delta("stop"),
    {"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 5}},
    "[DONE]",
)


@pytest.mark.parametrize("size", [1, 3, 17, len(STREAM)])
def test_stream_parses_the_same_whatever_the_split(size: int) -> None:
    parser = StreamParser(started=0.0, now=lambda: 1.5)
    for i in range(0, len(STREAM), size):
        parser.feed(STREAM[i : i + size])
    reply = parser.finish()
    assert reply.text == "So \\boxed{42}"
    assert reply.reasoning == "think hard"
    assert reply.finish_reason == "stop"
    assert (reply.prompt_tokens, reply.completion_tokens) == (7, 5)
    assert reply.ttft_s == 1.5


def test_stream_reads_vllm_reasoning_field_and_crlf() -> None:
    raw = _sse(_delta(reasoning="r1"), _delta("length", content="x")).replace(b"\n", b"\r\n")
    parser = StreamParser()
    parser.feed(raw)
    reply = parser.finish()
    assert (reply.reasoning, reply.text, reply.finish_reason) == ("r1", "x", "length")


@pytest.mark.parametrize(
    "raw",
    [
        _sse(_delta(content="a")),  # cut before the finish
        _sse({"choices": []}, "[DONE]"),  # no choice at all
        _sse(_delta(content="a"), "[DONE]"),  # [DONE] without finish_reason
    ],
)
def test_cut_or_empty_stream_is_malformed(raw: bytes) -> None:
    parser = StreamParser()
    parser.feed(raw)
    with pytest.raises(MalformedResponse):
        parser.finish()


def test_extra_choices_of_a_server_that_ignored_n_are_dropped() -> None:
    parser = StreamParser()
    two = {
        "choices": [
            {"index": 0, "delta": {"content": "a"}},
            {"index": 1, "delta": {"content": "b"}},
        ]
    }
    parser.feed(_sse(two, _delta("stop", content="c")))
    assert parser.finish().text == "ac"


def test_odd_but_usable_values_are_normalised() -> None:
    raw = (
        b'{"choices": [{"message": {"content": [{"type": "text", "text": "a"}, {"text": "b"}]},'
        b' "finish_reason": 1}], "usage": {"prompt_tokens": "x", "completion_tokens": 3.0}}'
    )
    reply = parse_completion(raw)
    assert (reply.text, reply.finish_reason, reply.prompt_tokens, reply.completion_tokens) == (
        "ab", "1", None, 3,
    )  # fmt: skip
    with pytest.raises(MalformedResponse):
        StreamParser().feed(_sse({"choices": [{"delta": "oops"}]}))
    with pytest.raises(MalformedResponse):
        StreamParser().feed(_sse({"choices": ["oops"]}))


def test_broken_event_and_error_event() -> None:
    with pytest.raises(MalformedResponse):
        StreamParser().feed(b'data: {"choices": [\n\n')
    with pytest.raises(StreamError, match="boom"):
        StreamParser().feed(_sse({"error": {"message": "boom"}}))


def test_completion_with_split_reasoning_either_name() -> None:
    for name in ("reasoning_content", "reasoning"):
        raw = json.dumps(
            {
                "choices": [
                    {"message": {"content": "\\boxed{1}", name: "why"}, "finish_reason": "stop"}
                ],
                "usage": {"prompt_tokens": 3, "completion_tokens": 4},
            }
        ).encode()
        reply = parse_completion(raw)
        assert (reply.text, reply.reasoning, reply.completion_tokens) == ("\\boxed{1}", "why", 4)


@pytest.mark.parametrize(
    "raw",
    [
        b'{"choices": []}',
        b'{"choices": [',
        b"[]",
        b'{"x": 1}',
        b'{"choices": [{"message": {"content": 5}}]}',
        b'{"choices": ["x"]}',
    ],
)
def test_malformed_completions(raw: bytes) -> None:
    with pytest.raises(MalformedResponse):
        parse_completion(raw)


def test_a_completion_without_choices_says_so() -> None:
    with pytest.raises(MalformedResponse, match="no choice of index 0"):  # was StopIteration
        parse_completion(b'{"choices": []}')


def test_lone_surrogates_are_replaced_and_pairs_kept() -> None:
    raw = b'{"choices": [{"message": {"content": "a\\ud800b \\ud83d\\ude00 \\u00e9"}}]}'
    text = parse_completion(raw).text
    assert text == "a\ufffdb \U0001f600 \u00e9"
    text.encode("utf-8")
    # a pair split over two stream deltas is joined again
    assert clean_text("\ud83d" + "\ude00") == "\U0001f600"
    assert clean_text("plain") == "plain"


def test_body_has_one_completion_seed_and_usage_when_streaming() -> None:
    body = json.loads(
        build_body(
            "m",
            [{"role": "user", "content": "q"}],
            Sampling(max_tokens=10, extra_body={"chat_template_kwargs": {"enable_thinking": True}}),
            seed=5,
            stream=True,
        )
    )
    assert body["n"] == 1 and body["seed"] == 5 and body["max_tokens"] == 10
    assert body["stream_options"] == {"include_usage": True}
    assert "top_k" not in body
    assert body["chat_template_kwargs"] == {"enable_thinking": True}


def test_context_errors_and_messages() -> None:
    vllm = (
        b'{"object":"error","message":"This model\'s maximum context length is 4096 tokens. '
        b'However, you requested 5000 tokens.","code":400}'
    )
    assert is_context_error(400, error_message(vllm))
    assert is_context_error(400, "the request exceeds the available context size")
    assert not is_context_error(400, "temperature must be positive")
    assert not is_context_error(500, "maximum context length")
    assert error_message(b'{"error": {"message": "bad\\n  key"}}') == "bad key"
    assert error_message(b"plain text") == "plain text"


def test_base_urls() -> None:
    assert normalize_base_url("http://h:1") == "http://h:1/v1"
    assert normalize_base_url("https://h/v1/") == "https://h/v1"
    assert display_url("http://user:secret@h:1/v1") == "http://h:1/v1"
    for bad in ("ftp://h", "h:8000", "localhost"):
        with pytest.raises(UsageError):
            normalize_base_url(bad)


def test_a_stream_past_its_limit_is_cut_and_marked_even_within_one_endless_line() -> None:
    parser = StreamParser(limit=1000)
    parser.feed(_sse(*[_delta(content="x" * 300) for _ in range(5)]))
    assert parser.done
    reply = parser.finish()
    assert (reply.finish_reason, reply.cut_by, len(reply.text)) == (
        "length",
        "max_reply_bytes",
        1200,
    )
    endless = StreamParser(limit=1000)  # one event line that never ends
    endless.feed(_sse(_delta(content="a")) + b'data: {"choices": [{"delta": {"content": "')
    for _ in range(3):
        endless.feed(b"y" * 400)
    assert endless.done and endless.finish().text == "a"


def test_a_body_cut_at_the_cap_keeps_its_text_and_says_why() -> None:
    raw = json.dumps({"choices": [{"index": 0, "message": {"content": "z" * 5000}}]}).encode()
    reply = parse_completion(raw[:1000], cut=True)
    assert reply.finish_reason == "length" and reply.cut_by == "max_reply_bytes"
    assert reply.text == "z" * (1000 - raw.index(b"zzz"))


@pytest.mark.parametrize(
    "body",
    [
        {"error": {"message": "CUDA out of memory", "code": 500}},  # OpenAI's form
        {"object": "error", "message": "CUDA out of memory", "type": "InternalServerError"},  # vLLM
        {"error": "CUDA out of memory"},
    ],
)
def test_an_error_object_instead_of_a_completion_gives_the_server_s_message(body: dict) -> None:
    raw = json.dumps(body, indent=2).encode()  # (a body on several lines)
    with pytest.raises(StreamError, match="replied with an error: CUDA out of memory"):
        parse_completion(raw)  # (streamed or not: a JSON body is read whole, test_hostile_server)
    with pytest.raises(ContextLengthError):
        parse_completion(json.dumps({"error": {"message": "maximum context length is 9"}}).encode())


def test_nothing_after_choice_0_finished_is_read() -> None:
    parser = StreamParser()
    parser.feed(_sse(_delta(content="\\boxed{1}"), _delta("stop"), _delta(content="\\boxed{2}")))
    parser.feed(_sse({"choices": [], "usage": {"completion_tokens": 3}}, "[DONE]"))
    reply = parser.finish()
    assert (reply.text, reply.finish_reason, reply.completion_tokens) == ("\\boxed{1}", "stop", 3)
