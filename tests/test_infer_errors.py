"""Every bad input or server gets one error line naming file/line and an exit code; outputs stay."""

from __future__ import annotations

import json
import os
import re
import resource
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.infer_helpers import ROOT, err_line, infer, write_jsonl
from tests.support.threaded_server import serve

GOOD = {"id": "a", "problem": "q", "answer": "1"}
OWN_KEYS = ("sample_idx", "problem_id", "finish_reason", "usage", "prompt", "answer", "doc_id",
            "sample_index", "subject", "reasoning_content")  # fmt: skip
NO_THINKING = '{"chat_template_kwargs": {"enable_thinking": false}}'


def _existing_output(tmp_path: Path) -> tuple[Path, bytes]:
    out = tmp_path / "out.jsonl"
    line = {"problem_id": "a", "sample_idx": 0, "prompt": "q", "answer": "1", "gen": "x"}
    out.write_text(json.dumps(line) + "\n" + json.dumps(line | {"sample_idx": 1}))  # unterminated
    return out, out.read_bytes()


@pytest.mark.parametrize(
    ("content", "where"),
    [
        (None, r"in\.jsonl: no such file"),
        (json.dumps(GOOD) + "\n{not json\n", r"in\.jsonl:2: not valid JSON"),
        ('{"id": "a", "problem": "q"}\n', r"in\.jsonl:1: missing key 'answer'"),
        ('{"id": "a", "answer": "1"}\n', r"in\.jsonl:1: missing key 'problem'"),
        (json.dumps(GOOD) + "\n" + json.dumps(GOOD) + "\n",
         r"in\.jsonl:2: duplicate id 'a' \(also on line 1\)"),
    ],
)  # fmt: skip
def test_bad_input_one_line_and_output_untouched(tmp_path: Path, capsys, content, where) -> None:
    inp = tmp_path / "in.jsonl"
    if content is not None:
        inp.write_text(content)
    out, before = _existing_output(tmp_path)
    with serve() as srv:
        assert infer(srv.url, inp, out, "--n-samples", "4") == 2
        assert srv.stats["completions"] == 0
    assert re.search(where, err_line(capsys.readouterr().err))
    assert out.read_bytes() == before
    assert not Path(f"{out}.spec.json").exists()


def test_broken_line_inside_the_output_is_named_and_kept(tmp_path: Path, capsys) -> None:
    inp = write_jsonl(tmp_path / "in.jsonl", [GOOD])
    out = tmp_path / "out.jsonl"
    out.write_text(
        '{"problem_id": "a", "sample_idx": 0}\n{broken\n{"problem_id": "a", "sample_idx": 1}\n'
    )
    before = out.read_bytes()
    with serve() as srv:
        assert infer(srv.url, inp, out, "--n-samples", "4") == 2
    assert "out.jsonl:2: not valid JSON" in err_line(capsys.readouterr().err)
    assert out.read_bytes() == before


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_server_exit_4(tmp_path: Path, capsys) -> None:
    inp = write_jsonl(tmp_path / "in.jsonl", [GOOD])
    out, before = _existing_output(tmp_path)
    url = f"http://127.0.0.1:{_free_port()}/v1"
    assert infer(url, inp, out, "--model", "m", "--n-samples", "3") == 4  # (n=1: nothing to do)
    line = err_line(capsys.readouterr().err)
    assert line.endswith(f"cannot reach {url}: cannot connect: connection refused")
    assert out.read_bytes() == before


def test_wrong_model_exit_4_with_the_servers_message(tmp_path: Path, capsys) -> None:
    inp = write_jsonl(tmp_path / "in.jsonl", [GOOD])
    out, before = _existing_output(tmp_path)
    with serve() as srv:
        assert infer(srv.url, inp, out, "--model", "nope", "--n-samples", "3") == 4
    assert "HTTP 404: The model `nope` does not exist." in err_line(capsys.readouterr().err)
    assert out.read_bytes() == before


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--base-url", "ftp://x"], "expected an http:// or https:// URL"),
        (["--base-url", "ftp://bob:hunter2@x/v1"], "'ftp://x/v1': expected an http"),  # no password
        (["--n-samples", "0"], "--n-samples must be at least 1"),
        (["--extra-body", "[1]"], "--extra-body must be a JSON object"),
        (["--system_prompt_type", "deepseek"], "pass the text with --system-prompt"),
        (["--deadline", "0"], "--deadline must be positive"),
        (["--timeout", "nan"], "--timeout must be positive"),  # NaN passed `<= 0`
        (["--deadline", "nan"], "--deadline must be positive"),
        (["--retry-delay", "nan"], "--retry-delay must be at least 0"),
        (["--progress-interval", "-1"], "--progress-interval must be positive"),
        (["--temperature", "nan"], "--temperature"),
        (["--timeout", "-1"], "--timeout must be positive"),
        # the text under one of llmeval's own fields: unresumable, unscorable, cut-offs counted
        # as finished, every resume asking for everything, or ids and subjects bent in eval
        *(
            (["--response_key", key], f"--response_key {key!r} names a field llmeval writes")
            for key in OWN_KEYS
        ),
        # it sent enable_thinking true whatever --extra-body said (issue 30.12)
        (["--enable-thinking", "--extra-body", NO_THINKING],
         "--enable-thinking and --extra-body's chat_template_kwargs.enable_thinking false"),
        (["--enable-thinking", "--extra-body", '{"chat_template_kwargs": [1]}'],
         "--extra-body: chat_template_kwargs must be a JSON object"),
    ],
)  # fmt: skip
def test_usage_errors(tmp_path: Path, capsys, flags: list[str], message: str) -> None:
    inp = write_jsonl(tmp_path / "in.jsonl", [GOOD])
    assert infer(None, inp, tmp_path / "o.jsonl", *flags) == 2
    assert message in err_line(capsys.readouterr().err)


@pytest.mark.parametrize(
    ("body", "flag"),
    [
        ('{"seed": 1}', "use --seed"),
        ('{"n": 8}', "use --n-samples"),
        ('{"max_tokens": 5, "repetition_penalty": 1.1}', "use --max-tokens"),
        ('{"messages": [{"role": "user", "content": "hi"}]}', "use --prompt-template"),
        ('{"model": "other"}', "use --model"),
        ('{"stream": false}', "use --stream or --no-stream"),
        ('{"top_p": 1, "top_k": 5, "temperature": 0}', "'temperature': llmeval sets it"),
    ],
)
def test_extra_body_may_not_set_what_llmeval_sets(
    tmp_path: Path, capsys, body: str, flag: str
) -> None:
    inp = write_jsonl(tmp_path / "in.jsonl", [GOOD])
    with serve() as srv:
        assert infer(srv.url, inp, tmp_path / "o.jsonl", "--extra-body", body) == 2
        assert not srv.server.bodies and not srv.stats  # nothing was sent at all
    assert flag in err_line(capsys.readouterr().err)
    assert not (tmp_path / "o.jsonl").exists()
    with serve() as srv:  # what llmeval does not set still goes through
        extra = '{"repetition_penalty": 1.1, "chat_template_kwargs": {"x": 1}}'
        assert infer(srv.url, inp, tmp_path / "o.jsonl", "--extra-body", extra) == 0
        assert srv.server.bodies[0]["repetition_penalty"] == 1.1


def test_a_huge_n_samples_warns_and_starts_at_once(tmp_path: Path) -> None:
    inp, out = write_jsonl(tmp_path / "in.jsonl", [GOOD] * 1), tmp_path / "o.jsonl"
    argv = [sys.executable, "-m", "llmeval", "infer", "--input", str(inp), "--output", str(out),
            "--n-samples", "100000000", "--max-workers", "2", "--progress", "plain"]  # fmt: skip

    def two_gb() -> None:  # the whole plan, built up front, would not fit
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    with serve() as srv:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        proc = subprocess.Popen([*argv, "--base-url", srv.url], stderr=subprocess.PIPE, text=True,
                                env=env, preexec_fn=two_gb)  # fmt: skip
        deadline = time.monotonic() + 30
        while not (out.exists() and out.read_bytes().count(b"\n") >= 20) and proc.poll() is None:
            if time.monotonic() > deadline:
                proc.kill()
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "1 problems x --n-samples 100000000 = 100000000 samples: if that is a typo" in err
