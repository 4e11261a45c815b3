"""`llmeval infer` end to end in-process against the loopback server: resume, spec, faults."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from llmeval.jsonl import JsonlAppender
from llmeval.records import Generation
from tests.infer_helpers import (
    AIME24,
    ROOT,
    counts,
    err_line,
    infer,
    rows,
    write_jsonl,
)
from tests.support.fake_model import load_answers
from tests.support.threaded_server import serve

SMALL = [
    {"id": f"s{i}", "problem": f"Compute {i} plus {i}.", "answer": str(2 * i)} for i in range(5)
]


@pytest.fixture
def small(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "small.jsonl", SMALL)


def test_aime24_n4_writes_120_valid_lines_and_a_rerun_none(tmp_path: Path, capsys) -> None:
    out = tmp_path / "out" / "aime24.jsonl"
    with serve(answers=load_answers(AIME24), accuracy=0.5) as srv:
        assert infer(srv.url, AIME24, out, "--n-samples", "4") == 0
        records = [Generation.model_validate(r) for r in rows(out)]
        assert len(records) == 120 and set(counts(out).values()) == {4}
        assert all(r.finish_reason == "stop" and r.model == "test-model" for r in records)
        assert all(r.usage and r.usage.completion_tokens and r.ttft_s is not None for r in records)
        assert all(r.task == "aime24" and r.prompt.endswith("\\boxed{}.") for r in records)
        right = sum(f"\\boxed{{{r.answer}}}" in r.gen for r in records)
        assert 30 < right < 90  # accuracy 0.5 against the gold answers
        before = out.read_bytes()
        served = srv.stats["completions"]
        assert infer(srv.url, AIME24, out, "--n-samples", "4") == 0
        assert out.read_bytes() == before and srv.stats["completions"] == served
    rerun = capsys.readouterr().out.splitlines()[-1]
    assert rerun == f"infer: nothing to do: all 120 samples (30 problems x 4) are already in {out}"
    assert Path(f"{out}.spec.json").exists()


def test_a_resume_with_nothing_to_do_says_so_first_and_asks_no_server(
    small: Path, tmp_path: Path, capsys
) -> None:
    out = tmp_path / "o.jsonl"
    with serve() as srv:
        assert infer(srv.url, small, out, "--n-samples", "2") == 0
    capsys.readouterr()
    # the server is gone (a finished Slurm job run again): it said it cannot connect, exit 4
    assert infer(srv.url, small, out, "--n-samples", "2") == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("infer: nothing to do: all 10 samples (5 problems x 2)")
    assert "cannot" not in captured.err
    # other settings are refused as a resume's are, still without a server
    assert infer(srv.url, small, out, "--n-samples", "2", "--temperature", "1.0") == 2
    assert "made with other parameters (temperature: 0.6 -> 1.0)" in capsys.readouterr().err


def test_raising_n_adds_samples_without_redoing_any(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "o.jsonl"
    with serve() as srv:
        assert infer(srv.url, small, out, "--n-samples", "2") == 0
        first = out.read_bytes()
        assert infer(srv.url, small, out, "--n-samples", "4") == 0
        assert srv.stats["completions"] == 20
    assert out.read_bytes().startswith(first)
    assert set(counts(out).values()) == {4}


def test_changed_temperature_refuses_unless_forced(small: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "o.jsonl"
    with serve() as srv:
        assert infer(srv.url, small, out, "--n-samples", "1") == 0
        before = out.read_bytes()
        capsys.readouterr()
        assert infer(srv.url, small, out, "--n-samples", "2", "--temperature", "0.7") == 2
        err = capsys.readouterr().err
        assert "temperature: 0.6 -> 0.7" in err and "--force" in err
        assert [line for line in err.splitlines() if "error" in line] == [err_line(err)]
        assert out.read_bytes() == before
        assert (
            infer(srv.url, small, out, "--n-samples", "2", "--temperature", "0.7", "--force") == 0
        )
    assert set(counts(out).values()) == {2}


def test_streamed_and_whole_runs_write_the_same_samples(small: Path, tmp_path: Path) -> None:
    a, b, c = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    with serve() as srv:
        assert infer(srv.url, small, a, "--n-samples", "3") == 0
        assert infer(srv.url, small, b, "--n-samples", "3", "--no-stream") == 0
        assert infer(srv.url, small, c, "--n-samples", "3", "--seed", "1") == 0
        assert infer(srv.url, small, tmp_path / "d.jsonl", "--http", "fast") == 2  # removed

    def texts(path: Path) -> dict:
        return {(r["problem_id"], r["sample_idx"]): (r["gen"], r["seed"]) for r in rows(path)}

    # same seeds -> same samples, streamed or not
    assert texts(a) == texts(b)
    assert len({t for t, _ in texts(a).values()}) == 15  # every sample has its own seed
    assert all(texts(a)[k] != v for k, v in texts(c).items())  # another base seed differs
    assert "ttft_s" not in rows(b)[0] and "ttft_s" in rows(a)[0]


def test_faults_are_retried_and_the_run_completes(tmp_path: Path) -> None:
    clean, faulty = tmp_path / "clean.jsonl", tmp_path / "faulty.jsonl"
    faults = {k: 0.06 for k in ("429", "500", "503", "drop", "drop_mid", "malformed", "empty")}
    faults["close_after"] = 0.06
    with serve() as srv:
        assert infer(srv.url, AIME24, clean, "--n-samples", "2") == 0
    with serve(faults=faults, fault_seed=3) as srv:
        assert infer(srv.url, AIME24, faulty, "--n-samples", "2", "--max-workers", "8") == 0
        assert sum(v for k, v in srv.stats.items() if k.startswith("fault ")) >= 5

    def texts(path: Path) -> dict:
        return {(r["problem_id"], r["sample_idx"]): r["gen"] for r in rows(path)}

    assert texts(clean) == texts(faulty) and len(texts(faulty)) == 60


def test_failed_samples_are_not_written_and_exit_3(small: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "o.jsonl"
    with serve(faults={"503": 0.4}, fault_seed=1) as srv:
        code = infer(srv.url, small, out, "--n-samples", "8", "--max-retries", "0")
    assert code == 3
    assert "rerun to resume" in capsys.readouterr().err
    written = len(rows(out))
    assert 0 < written < 40
    with serve() as srv:
        assert infer(srv.url, small, out, "--n-samples", "8") == 0
        assert srv.stats["completions"] == 40 - written
    assert set(counts(out).values()) == {8}


def test_several_base_urls_are_all_used(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "o.jsonl"
    with serve(latency=0.01) as a, serve(latency=0.01) as b:
        assert infer(a.url, small, out, "--base-url", b.url, "--n-samples", "8") == 0
        assert a.stats["completions"] > 5 and b.stats["completions"] > 5
    assert {r["endpoint"] for r in rows(out)} == {a.url, b.url}


def test_upstream_flags_and_format(tmp_path: Path) -> None:
    inp = write_jsonl(tmp_path / "up.jsonl", [{"prompt": "P1 verbatim", "answer": "1"}])
    out = tmp_path / "o.jsonl"
    with serve() as srv:
        code = infer(
            None, inp, out, "--base_url", srv.url, "--model_name", "test-model",
            "--n_samples", "2", "--max_workers", "2", "--request_timeout", "30",
            "--system_prompt_type", "empty", "--enable_thinking", "--response_key", "response",
        )  # fmt: skip
        assert code == 0
        body = srv.server.bodies[0]
    assert body["messages"] == [{"role": "user", "content": "P1 verbatim"}]
    assert body["chat_template_kwargs"] == {"enable_thinking": True}
    assert all(r["response"] == r["gen"] for r in rows(out))


def test_system_prompt_and_sampling_reach_the_server(small: Path, tmp_path: Path) -> None:
    with serve() as srv:
        args = ["--system-prompt", "Be brief.", "--top-k", "20", "--min-p", "0.05"]
        assert infer(srv.url, small, tmp_path / "o.jsonl", *args, "--max-tokens", "64") == 0
        body = srv.server.bodies[0]
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert (body["top_k"], body["min_p"], body["max_tokens"], body["top_p"]) == (20, 0.05, 64, 0.95)
    assert body["stream"] is True and body["n"] == 1


def test_api_key_is_sent_but_written_nowhere(
    small: Path, tmp_path: Path, capsys, monkeypatch
) -> None:
    key = "sk-llmeval-SECRET-7f3a9"
    out = tmp_path / "o.jsonl"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    with serve(api_key=key) as srv:
        assert infer(srv.url, small, out, "--n-samples", "2") == 0
        monkeypatch.delenv("OPENAI_API_KEY")
        assert infer(srv.url, small, out, "--n-samples", "3", "--api-key", key) == 0
        assert srv.server.auth_seen == {f"Bearer {key}"}
    seen = capsys.readouterr()
    assert key not in seen.out + seen.err
    for path in tmp_path.iterdir():
        assert key.encode() not in path.read_bytes(), path


def test_model_is_asked_when_omitted_and_several_is_an_error(
    small: Path, tmp_path: Path, capsys
) -> None:
    with serve(models=("a", "b")) as srv:
        assert infer(srv.url, small, tmp_path / "o.jsonl") == 2
        assert "several models (a, b)" in capsys.readouterr().err
        assert infer(srv.url, small, tmp_path / "o.jsonl", "--model", "b") == 0
    assert {r["model"] for r in rows(tmp_path / "o.jsonl")} == {"b"}


def test_a_second_run_on_the_same_output_refuses(small: Path, tmp_path: Path, capsys) -> None:
    out, link = tmp_path / "o.jsonl", tmp_path / "link.jsonl"
    link.symlink_to(out)
    with JsonlAppender(link, exclusive=True), serve() as srv:  # one file, another name
        assert infer(srv.url, small, out) == 2
    assert "another llmeval infer is writing" in capsys.readouterr().err
    assert not out.exists()


def test_torn_tail_is_cut_and_foreign_ids_are_kept(small: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "o.jsonl"
    with serve() as srv:
        assert infer(srv.url, small, out, "--n-samples", "2") == 0
        foreign = rows(out)[0] | {"problem_id": "elsewhere"}
        data = out.read_bytes()
        whole = b"".join(out.read_bytes().splitlines(keepends=True)[:-1])  # drop one sample
        out.write_bytes(whole + json.dumps(foreign).encode() + b"\n" + data[-40:-1])
        assert infer(srv.url, small, out, "--n-samples", "2") == 0
    err = capsys.readouterr().err
    assert "torn" in err and "1 problem ids" in err
    assert counts(out) == {**{f"s{i}": 2 for i in range(5)}, "elsewhere": 1}


def test_split_out_reasoning_is_stored_apart(small: Path, tmp_path: Path) -> None:
    for field in ("reasoning_content", "reasoning"):
        for stream in ("--stream", "--no-stream"):
            out = tmp_path / f"{field}{stream}.jsonl"
            with serve(reasoning_field=field) as srv:
                assert infer(srv.url, small, out, stream) == 0
            for r in rows(out):
                assert (
                    r["gen"].startswith("So the answer is $\\boxed{") and "<think>" not in r["gen"]
                )
                assert r["reasoning"] and "</think>" not in r["reasoning"]


def test_deadline_cuts_a_trickling_answer_and_a_rerun_completes(tmp_path: Path, capsys) -> None:
    inp, out = write_jsonl(tmp_path / "in.jsonl", SMALL[:1]), tmp_path / "o.jsonl"
    with serve(token_rate=40) as srv:  # ~2.5 s for 100 tokens, a write every 50 ms
        flags = ["--max-tokens", "100", "--max-retries", "0", "--timeout", "1"]
        assert infer(srv.url, inp, out, *flags, "--deadline", "0.5") == 3
        assert "0.5 s deadline" in capsys.readouterr().err
        assert not out.exists() or rows(out) == []
        assert infer(srv.url, inp, out, *flags, "--deadline", "60") == 0
    assert len(rows(out)) == 1


def _infer_writing(inp: Path, out: Path, url: str, lines: int) -> subprocess.Popen[str]:
    """`llmeval infer` (n=4, one request at a time) as a process, once `out` holds `lines`."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "llmeval", "infer", "--input", str(inp), "--output", str(out),
         "--base-url", url, "--n-samples", "4", "--max-workers", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not (out.exists() and out.read_bytes().count(b"\n") >= lines):
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.02)
    return proc


@pytest.mark.parametrize("how", ["hard link", "lock file deleted"])
def test_no_name_game_gets_a_second_infer_past_the_lock(
    how: str, small: Path, tmp_path: Path, capsys
) -> None:
    out = tmp_path / "o.jsonl"
    with serve(latency=0.2) as srv:
        first = _infer_writing(small, out, srv.url, lines=1)
        name = out
        if how == "hard link":
            name = tmp_path / "same.jsonl"
            os.link(out, name)
        else:
            Path(f"{out}.lock").unlink(missing_ok=True)  # (older versions locked this file)
        assert infer(srv.url, small, name, "--n-samples", "4") == 2
        first.communicate(timeout=60)
        assert first.returncode == 0
    assert "another llmeval infer is writing" in capsys.readouterr().err
    assert set(counts(out).values()) == {4}  # and no pair twice


def test_an_output_linked_to_another_run_is_checked_against_that_run_s_spec(
    small: Path, tmp_path: Path, capsys
) -> None:
    """`--output` a symlink to another run's file: the samples go there, so the spec beside
    it (the one eval reads) is the one a resume must match; none is written beside the link."""
    other = tmp_path / "other" / "aime24.jsonl"
    link = tmp_path / "mine.jsonl"
    with serve() as srv:
        assert infer(srv.url, small, other, "--n-samples", "1") == 0
        link.symlink_to(other)
        before = other.read_bytes()
        capsys.readouterr()
        assert infer(srv.url, small, link, "--n-samples", "2", "--temperature", "0.9") == 2
        err = capsys.readouterr().err
        assert "temperature: 0.6 -> 0.9" in err and other.read_bytes() == before
        assert not Path(f"{link}.spec.json").exists()
        assert infer(srv.url, small, link, "--n-samples", "2") == 0  # same parameters: resumes
    assert set(counts(other).values()) == {2} and not Path(f"{link}.spec.json").exists()


@pytest.mark.parametrize("how", ["deleted", "folder deleted", "replaced"])
def test_an_output_deleted_while_infer_runs_is_made_again_and_a_replaced_one_stops_it(
    how: str, small: Path, tmp_path: Path
) -> None:
    """Deleted (a clean-up), infer makes the file again with every line it held and goes on;
    replaced by another file, it stops with exit 5 saying so. It said "wrote 20 of 20", exit 0,
    with every sample gone."""
    out = tmp_path / "run" / "o.jsonl"
    with serve(latency=0.1) as srv:
        proc = _infer_writing(small, out, srv.url, lines=3)
        if how == "replaced":
            out.rename(tmp_path / "moved.jsonl")
            out.write_text("")
        else:
            shutil.rmtree(out.parent) if how == "folder deleted" else out.unlink()
        stdout, stderr = proc.communicate(timeout=120)
    assert "Traceback" not in stderr
    if how == "replaced":
        assert proc.returncode == 5 and "was replaced by another file" in err_line(stderr)
        assert out.read_text() == "" and len(rows(tmp_path / "moved.jsonl")) >= 3
        return
    assert proc.returncode == 0, stderr
    assert "was deleted while this run wrote to it: made again" in stderr
    assert set(counts(out).values()) == {4} and "wrote 20 of 20" in stdout  # none twice
