"""Broken files give one error line naming file and line, the right exit code (2 input,
5 output) and leave existing outputs unchanged: a fast subset of `bench/stress_bad_inputs.py`
(which runs all of `tests.stress.bad_cases.CASES`), plus the fixes it led to."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from llmeval.errors import InputError
from llmeval.files import open_regular
from llmeval.jsonl import JsonlAppender, read_dicts, read_models, repair_tail
from llmeval.records import Generation
from tests.stress.bad_cases import CASES
from tests.stress.bad_files import ROOT, Env, run_case
from tests.stress.scratch_fs import Mounts
from tests.support.threaded_server import serve

FAST = (
    "eval: read-only folder for --export-verdicts",
    "infer: duplicate ids",
    "infer: torn last line of the output",
    "infer: read-only output folder",
    "infer: disk full (64 KB tmpfs)",
    "infer: file-size limit (EFBIG)",
    "eval: empty file",
    "eval: wrong type (gen an object)",
    "eval: verdict cache hits the file-size limit",
    "report: read-only folder for --out",
    # issue 23, item 11
    "infer: output folder under a file",
    "infer: output not writable (another user's)",
    "infer: full disk, last line without its newline",
    "infer: the spec is a folder",
    "infer: the input is a FIFO",
    "infer: file names that are not UTF-8",
    "eval: the verdict cache is a FIFO",
    "eval: a file name that is not UTF-8",
)


@pytest.fixture(scope="module")
def env() -> Iterator[Env]:
    with serve() as srv, Mounts() as mounts:
        yield Env(srv.url, mounts)


def test_there_are_at_least_twenty_cases_over_all_three_commands() -> None:
    assert len(CASES) >= 20
    assert {c.name.split(":")[0] for c in CASES} == {"infer", "eval", "report"}
    assert set(FAST) <= {c.name for c in CASES}


@pytest.mark.parametrize("name", FAST)
def test_broken_file(name: str, env: Env, tmp_path: Path) -> None:
    case = next(c for c in CASES if c.name == name)
    outcome = run_case(case, tmp_path, env)
    if outcome.skipped:
        pytest.skip(outcome.skipped)
    assert not outcome.problems, outcome


def test_a_failed_write_leaves_no_part_of_its_line(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'{"a": 1}\n')
    with JsonlAppender(path) as out:
        os.write(out._fd, b'{"b":')  # as when os.write took 5 bytes of a line, then ENOSPC
        out._cut_partial(5)
        out.write_raw(b'{"c": 3}\n')
    assert path.read_bytes() == b'{"a": 1}\n{"c": 3}\n'


def test_lone_surrogate_escapes_are_read_as_replacement_characters(tmp_path: Path) -> None:
    row = {"problem_id": "1", "sample_idx": 0, "prompt": "q", "answer": "42"}
    row["gen"] = "a \ud800 \\boxed{42}"
    path = tmp_path / "g.jsonl"
    path.write_text(json.dumps(row) + "\n")  # Python's json writes the escape `\ud800`
    [(_, gen)] = list(read_models(path, Generation))
    assert gen.gen == "a \ufffd \\boxed{42}"
    gen.model_dump_json()  # writable again
    [(_, raw)] = list(read_dicts(path))
    assert raw["gen"] == "a \ufffd \\boxed{42}"


def test_lone_surrogates_in_problems_are_sent_and_stored_as_replacement_characters(
    tmp_path: Path,
) -> None:
    rows = [{"id": "a\ud800", "problem": "What is \ud800 1+1? \x00\x1b[31m", "answer": "\udfff2"}]
    inp = tmp_path / "aime24.jsonl"
    inp.write_text(json.dumps(rows[0]) + "\n")  # escapes: `\ud800`
    out = tmp_path / "o.jsonl"
    with serve() as srv:
        done = subprocess.run(
            [sys.executable, "-m", "llmeval", "infer", "--input", str(inp), "--output", str(out),
             "--base-url", srv.url, "--n-samples", "2"],
            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    got = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert {(g["problem_id"], g["answer"]) for g in got} == {("a\ufffd", "\ufffd2")}
    assert "What is \ufffd 1+1? \x00" in got[0]["prompt"]


DEEP = b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"


def test_json_nested_too_deeply_is_a_bad_line_not_a_crash(tmp_path: Path) -> None:
    from llmeval.client.protocol import MalformedResponse, error_message, parse_completion
    from llmeval.problems import load_problems

    path = tmp_path / "p.jsonl"
    path.write_bytes(b'{"id": "1", "problem": "x", "answer": "1"}\n' + DEEP + b"\n")
    with pytest.raises(InputError, match=r"p.jsonl:2: not valid JSON \(recursion limit exceeded"):
        load_problems(path)
    with pytest.raises(InputError, match=r"p\.jsonl:2"):
        list(read_dicts(path))
    path.write_bytes(b'{"id": "1", "problem": "x", "answer": "1"}\n' + DEEP[:-10_000])
    assert [r["id"] for _, r in read_dicts(path)] == ["1"]  # a torn deep tail is skipped
    fd = open_regular(path, os.O_RDWR | os.O_APPEND)
    assert repair_tail(fd, path) > 0
    os.close(fd)
    with pytest.raises(MalformedResponse):
        parse_completion(DEEP)  # from a hostile server: retried, never a crash
    assert error_message(DEEP)
