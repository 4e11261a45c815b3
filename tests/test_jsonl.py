"""JSONL I/O: torn lines, repair, appends, atomic writes, and errors that name file and line."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest

from llmeval.errors import InputError
from llmeval.files import open_regular, write_json_atomic
from llmeval.jsonl import JsonlAppender, read_dicts, read_models, repair_tail
from llmeval.records import Generation, SampleKey


def _gen(pid: str, idx: int) -> Generation:
    return Generation(problem_id=pid, sample_idx=idx, prompt="p", answer="1", gen="\\boxed{1}")


def test_append_and_read_back(tmp_path: Path) -> None:
    out = tmp_path / "o.jsonl"
    with JsonlAppender(out) as app:
        for i in range(3):
            app.write(_gen("a", i))
    got = [(n, (r.problem_id, r.sample_idx)) for n, r in read_models(out, Generation)]
    assert got == [(1, ("a", 0)), (2, ("a", 1)), (3, ("a", 2))]


def test_torn_last_line_is_skipped_with_warning(tmp_path: Path, caplog) -> None:
    out = tmp_path / "o.jsonl"
    whole = _gen("a", 0).model_dump_json() + "\n"
    out.write_text(whole + whole[: len(whole) // 2])
    with caplog.at_level(logging.WARNING, logger="llmeval"):
        got = list(read_models(out, SampleKey))
    assert len(got) == 1
    assert "o.jsonl:2: torn last line" in caplog.text


def test_broken_middle_line_names_file_and_line(tmp_path: Path) -> None:
    out = tmp_path / "o.jsonl"
    whole = _gen("a", 0).model_dump_json() + "\n"
    out.write_text(whole + "{not json\n" + whole)
    with pytest.raises(InputError, match=r"o\.jsonl:2: not valid JSON"):
        list(read_models(out, Generation))
    with pytest.raises(InputError, match=r"o\.jsonl:2: not valid JSON"):
        list(read_dicts(out))


def test_missing_field_and_wrong_type_are_named(tmp_path: Path) -> None:
    out = tmp_path / "o.jsonl"
    out.write_text('{"problem_id": "a", "sample_idx": "x"}\n')
    with pytest.raises(InputError, match=r"o\.jsonl:1: field 'sample_idx'"):
        list(read_models(out, SampleKey))
    out.write_text("[1, 2]\n")
    with pytest.raises(InputError, match=r"o\.jsonl:1: expected a JSON object"):
        list(read_dicts(out))


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        list(read_dicts(tmp_path / "nope.jsonl"))


def test_repair_tail_cuts_torn_line_and_keeps_the_rest(tmp_path: Path) -> None:
    out = tmp_path / "o.jsonl"
    whole = _gen("a", 0).model_dump_json() + "\n"
    out.write_text(whole + '{"problem_id": "a", "sam')
    fd = open_regular(out, os.O_RDWR | os.O_APPEND)
    assert repair_tail(fd, out) > 0
    assert out.read_text() == whole
    assert repair_tail(fd, out) == 0
    os.close(fd)


def test_repair_tail_terminates_a_whole_unterminated_line(tmp_path: Path) -> None:
    out = tmp_path / "o.jsonl"
    whole = _gen("a", 0).model_dump_json()
    out.write_text(whole)
    fd = open_regular(out, os.O_RDWR | os.O_APPEND)
    assert repair_tail(fd, out) == 0
    os.close(fd)
    assert out.read_text() == whole + "\n"
    with JsonlAppender(out) as app:
        app.write(_gen("a", 1))
    assert [r.sample_idx for _, r in read_models(out, SampleKey)] == [0, 1]


def test_write_json_atomic_replaces_whole_file(tmp_path: Path) -> None:
    target = tmp_path / "spec.json"
    write_json_atomic(target, {"a": 1})
    write_json_atomic(target, {"b": 2})
    assert json.loads(target.read_text()) == {"b": 2}
    assert [p.name for p in tmp_path.iterdir()] == ["spec.json"]
