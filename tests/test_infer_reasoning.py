"""The settings that make reasoning runs differ and what the server says: --reasoning-effort and
--thinking-budget, reasoning tokens and characters in the rows, the server's identity in the
run spec (against the loopback server; `/version` garbage through `httpx.MockTransport`)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from llmeval.client.chat_client import ChatClient, ClientConfig
from llmeval.client.identity import MAX_TEXT, served_model, short_text
from llmeval.client.protocol import StreamParser, parse_completion
from llmeval.inference.online import main as upstream_main
from llmeval.records import Generation, RunSpec, ServerInfo, Usage
from tests.infer_helpers import FAST, err_line, infer, rows, write_jsonl
from tests.support.fake_model import count_tokens
from tests.support.threaded_server import serve

PROBLEMS = [{"id": f"q{i}", "problem": f"Add {i} and {i}.", "answer": str(2 * i)} for i in range(3)]


@pytest.fixture
def inp(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "in.jsonl", PROBLEMS)


def spec_of(out: Path) -> RunSpec:
    return RunSpec.read(Path(f"{out}.spec.json").read_bytes())


def test_effort_and_budget_are_sent_recorded_and_part_of_the_spec(
    inp: Path, tmp_path: Path, capsys
) -> None:
    out = tmp_path / "o.jsonl"
    flags = ["--reasoning-effort", "high", "--thinking-budget", "4096"]
    with serve() as srv:
        assert infer(srv.url, inp, out, *flags) == 0
        bodies = list(srv.server.bodies)
        assert {(b["reasoning_effort"], b["thinking_token_budget"]) for b in bodies} == {
            ("high", 4096)
        }
        spec = spec_of(out)
        assert (spec.reasoning_effort, spec.thinking_budget) == ("high", 4096)
        assert infer(srv.url, inp, out, "--reasoning-effort", "low", *flags[2:]) == 2
        assert "reasoning_effort: high -> low" in err_line(capsys.readouterr().err)
        assert infer(srv.url, inp, out, "--reasoning-effort", "high") == 2
        assert "thinking_budget: 4096 -> null" in err_line(capsys.readouterr().err)
        # the upstream entry point forwards them, with its spellings
        other = tmp_path / "up.jsonl"
        argv = ["--input_file", str(inp), "--output_file", str(other), "--base_url", srv.url,
                "--reasoning_effort", "medium", "--thinking_budget", "64", *FAST]  # fmt: skip
        assert upstream_main(argv) == 0
        assert (spec_of(other).reasoning_effort, spec_of(other).thinking_budget) == ("medium", 64)


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--reasoning-effort", "high; rm -rf"], "--reasoning-effort String should match"),
        (["--reasoning-effort", ""], "--reasoning-effort String should have at least 1"),
        (["--thinking-budget", "0"], "--thinking-budget must be at least 1, got 0"),
        (["--extra-body", '{"thinking_token_budget": 9}'], "use --thinking-budget"),
        (["--extra-body", '{"reasoning_effort": "low"}'], "use --reasoning-effort"),
    ],
)
def test_bad_effort_or_budget_names_its_flag(
    flags: list[str], message: str, inp: Path, tmp_path: Path, capsys
) -> None:
    assert infer("http://127.0.0.1:9/v1", inp, tmp_path / "o.jsonl", *flags) == 2
    assert message in err_line(capsys.readouterr().err)


@pytest.mark.parametrize("stream", ["--stream", "--no-stream"])
@pytest.mark.parametrize("field", [None, "reasoning_content", "reasoning"])
def test_reasoning_tokens_and_characters_are_recorded(
    stream: str, field: str | None, inp: Path, tmp_path: Path
) -> None:
    out = tmp_path / "o.jsonl"
    with serve(reasoning_field=field) as srv:
        assert infer(srv.url, inp, out, stream, "--n-samples", "2", "--max-tokens", "30") == 0
    for row in rows(out):
        gen = Generation.model_validate(row)
        assert gen.usage and gen.usage.completion_tokens and gen.usage.reasoning_tokens
        thought = gen.reasoning or gen.gen.removeprefix("<think>\n").partition("</think>")[0]
        assert gen.usage.reasoning_tokens == count_tokens(thought)
        assert gen.usage.reasoning_tokens <= gen.usage.completion_tokens
        assert row.get("reasoning_chars") == (len(gen.reasoning) if field else None)


def test_a_server_without_reasoning_tokens_gets_rows_without_them(
    inp: Path, tmp_path: Path
) -> None:
    out = tmp_path / "o.jsonl"
    with serve(reasoning_tokens=False) as srv:
        assert infer(srv.url, inp, out) == 0
    assert all(set(r["usage"]) == {"prompt_tokens", "completion_tokens"} for r in rows(out))


@pytest.mark.parametrize(
    "details", [{"reasoning_tokens": 50}, {"reasoning_tokens": float("nan")}, "many", [3]]
)
def test_reasoning_tokens_that_are_not_sane_are_dropped_and_counted(details: object) -> None:
    usage = {"prompt_tokens": 5, "completion_tokens": 9, "completion_tokens_details": details}
    whole = {"choices": [{"message": {"content": "x"}, "finish_reason": "stop"}], "usage": usage}
    reply = parse_completion(json.dumps(whole).encode())
    assert (reply.completion_tokens, reply.reasoning_tokens, reply.bad_usage) == (9, None, True)
    parser = StreamParser()
    event = {"choices": [{"index": 0, "delta": {"content": "x"}, "finish_reason": "stop"}]}
    parser.feed(f"data: {json.dumps(event)}\n\ndata: {json.dumps({'usage': usage})}\n\n".encode())
    streamed = parser.finish()
    assert (streamed.reasoning_tokens, streamed.bad_usage) == (None, True)
    fine = {**usage, "completion_tokens_details": {"reasoning_tokens": 9}}
    assert parse_completion(json.dumps({**whole, "usage": fine}).encode()).reasoning_tokens == 9
    assert Usage.model_validate({"reasoning_tokens": "12"}).reasoning_tokens is None


def test_the_servers_identity_is_in_the_run_spec(inp: Path, tmp_path: Path) -> None:
    out, bare = tmp_path / "o.jsonl", tmp_path / "bare.jsonl"
    with serve(version="0.11.2", fingerprint="fp_abc") as srv:
        assert infer(srv.url, inp, out, "--no-stream") == 0
        assert srv.stats["GET /version"] == 1
        assert infer(srv.url, inp, out) == 0  # nothing to do: the server is not asked again
        assert srv.stats["GET /version"] == 1
    server = spec_of(out).server
    assert server is not None
    assert (server.model_id, server.version, server.system_fingerprint) == (
        "test-model",
        "0.11.2",
        "fp_abc",
    )
    with serve(version=None, fingerprint=None) as srv:  # no /version (404), no fingerprint
        assert infer(srv.url, inp, bare, "--model", "test-model") == 0
    assert spec_of(bare).server == ServerInfo(model_id="test-model")


def _identity(handler: Callable[[httpx.Request], httpx.Response], listing: object) -> ServerInfo:
    config = ClientConfig(base_urls=["http://gpu:8000/v1"])
    client = ChatClient(config, transport=httpx.MockTransport(handler))
    client.listing = listing

    async def go() -> ServerInfo:
        async with client:
            return await client.identity("m")

    return asyncio.run(go())


@pytest.mark.parametrize(
    ("status", "body", "version"),
    [
        (200, b'{"version": "0.11.0"}', "0.11.0"),
        (404, b'{"detail": "Not Found"}', None),
        (200, b"<html>garbage</html>", None),
        (200, b'{"version": {"major": 0}}', None),
        (200, b'["0.11.0"]', None),
        (200, b'{"version": "' + b"9" * 10_000 + b'"}', None),  # past 4 KB: not a version
        (200, b'{"version": "0.1\\u0000\\u202e\\n1"}', "0.1 1"),
        (200, b'{"version": "' + b"v" * 1000 + b'"}', "v" * (MAX_TEXT - 3) + "..."),
    ],
)
def test_a_version_is_a_short_string_or_nothing(
    status: int, body: bytes, version: str | None
) -> None:
    asked: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        asked.append(str(request.url))
        return httpx.Response(status, content=body)

    root = "/models/Qwen3-8B-step-1200"
    info = _identity(handler, [{"id": "m", "root": root}])
    assert asked == ["http://gpu:8000/version"]
    assert (info.version, info.model_id, info.model_root) == (version, "m", root)


def test_served_model_and_short_text() -> None:
    assert served_model([{"id": "a"}, {"id": "m", "root": "r"}], "m") == ("m", "r")
    assert served_model([{"id": "other"}], "m") == ("other", None)  # the only one served
    assert served_model([{"id": "a"}, {"id": "b"}], "m") == (None, None)
    assert served_model({"id": "m"}, "m") == served_model(None, "m") == (None, None)
    assert short_text(True) is None and short_text({"a": 1}) is None and short_text("  ") is None
    assert short_text(12) == "12" and short_text("a\tb\x1bc") == "a b c"
