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
from tests.stress.bad_files import ROOT, Case, Env, run_case
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


def test_the_first_broken_file_of_each_command_is_one_line_and_its_exit_code(
    env: Env, tmp_path: Path
) -> None:
    """The stress set covers infer, eval and report (20 cases or more, FAST among them), and
    the first case of each command, run here through the real command line, gives its exit
    code, one error line naming the file, and leaves the file as it was (`run_case`)."""
    firsts: dict[str, Case] = {}
    for case in CASES:
        firsts.setdefault(case.name.split(":")[0], case)
    assert len(CASES) >= 20 and set(firsts) == {"infer", "eval", "report"}
    assert set(FAST) <= {c.name for c in CASES}
    for command, case in firsts.items():
        (tmp_path / command).mkdir()
        outcome = run_case(case, tmp_path / command, env)
        assert case.exit_code != 0 and not outcome.problems, outcome


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


ROW = {"problem_id": "1", "sample_idx": 0, "answer": "3", "gen": "\\boxed{3}"}
SPEC = {"model": "m", "task": "aime24", "n_samples": 1, "temperature": 0.6, "top_p": 0.95,
        "max_tokens": 9, "seed": 0, "prompt_template": "{problem}"}  # fmt: skip


def test_a_utf8_byte_order_mark_is_read_and_a_wider_encoding_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Files saved by an editor that adds a BOM are read (they were 'not valid JSON'); UTF-16
    and UTF-32 files are one line naming their encoding."""
    from llmeval.cli.main import main

    path, spec = tmp_path / "run.jsonl", tmp_path / "run.jsonl.spec.json"
    result = tmp_path / "r.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(ROW | {"task": "aime24"}).encode() + b"\n")
    assert main(["eval", str(path), "--no-progress"]) == 0  # the task from its row
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(ROW).encode() + b"\n")
    spec.write_bytes(b"\xef\xbb\xbf" + json.dumps(SPEC).encode())
    assert main(["eval", str(path), "--no-progress", "--result-json", str(result)]) == 0
    assert json.loads(result.read_text())["tasks"][0]["task"] == "aime24"  # from the spec
    for codec, name in (("utf-16", "UTF-16"), ("utf-16-le", "UTF-16"), ("utf-32", "UTF-32")):
        for broken in (path, spec):
            broken.write_bytes(json.dumps(ROW if broken is path else SPEC).encode(codec))
            assert main(["eval", str(path), "--no-progress"]) == 2
            err = capsys.readouterr().err.strip()
            assert err.endswith(f"{broken}:1: is {name} text, not UTF-8: save it as UTF-8"), err
            broken.write_text(json.dumps(ROW if broken is path else SPEC) + "\n")


def test_a_cache_named_like_a_run_spec_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--cache run.jsonl.spec.json` (a missing spec) made eval write verdicts there, and the
    run unreadable afterwards."""
    from llmeval.cli.main import main

    path = tmp_path / "aime24.jsonl"
    path.write_text(json.dumps(ROW | {"gen": "\\boxed{x+1}"}) + "\n")
    spec = tmp_path / "aime24.jsonl.spec.json"
    assert main(["eval", str(path), "--no-progress", "--cache", str(spec)]) == 2
    assert "--cache" in capsys.readouterr().err and not spec.exists()
    assert main(["eval", str(path), "--no-progress"]) == 0
