"""The samples cache: a reread reuses the lines read before and reads only what was appended,
with results equal to a full read; any change to those lines, the keys or a broken cache
means a full read; a torn or unterminated last line is never cached."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from llmeval.cli.main import main
from llmeval.evaluate import sample_cache
from llmeval.evaluate.inputs import InputFile, read_input
from tests.support.synthetic import generation, write_jsonl

THINK = "<think>\nLet me think this through.\n</think>\n\n"


def _rows(pid: str, gold: str, finals: list[str | None], start: int = 0) -> list[dict[str, Any]]:
    return [
        generation(pid, start + i, gold, THINK + (f"$\\boxed{{{f}}}$" if f else "no idea"))
        for i, f in enumerate(finals)
    ]


def _append(path: Path, rows: list[dict[str, Any]], raw: bytes = b"") -> None:
    with path.open("ab") as handle:
        handle.write(b"".join(json.dumps(r).encode() + b"\n" for r in rows) + raw)


def _view(source: InputFile) -> list[tuple[Any, ...]]:
    return [
        (s.problem_id, s.sample_idx, s.gold, s.pred, s.truncated, s.completion_tokens, s.meta)
        for s in source.samples
    ]


def _cached_offset(path: Path) -> int:
    return json.loads(sample_cache.cache_path_for(path).read_text())["offset"]


def test_reread_uses_the_cache_and_appended_lines_are_read(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "aime24.jsonl", _rows("1", "42", ["42", "41", None, "42"]))
    first = read_input(path, None, use_cache=True)
    assert _cached_offset(path) == path.stat().st_size
    again = read_input(path, None, use_cache=True)
    assert _view(again) == _view(first)
    _append(path, _rows("1", "42", ["7", "42"], start=4) + _rows("2", "5", ["5"]))
    grown = read_input(path, None, use_cache=True)
    assert _view(grown) == _view(read_input(path, None))  # the same as reading it all
    assert len(grown.samples) == 7
    assert _cached_offset(path) == path.stat().st_size


def test_a_line_changed_in_place_is_noticed(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "aime24.jsonl", _rows("1", "42", ["42", "41"]))
    assert [s.pred for s in read_input(path, None, use_cache=True).samples] == ["42", "41"]
    text = path.read_bytes()
    path.write_bytes(text.replace(b"boxed{41}", b"boxed{43}"))  # same size, same line count
    assert [s.pred for s in read_input(path, None, use_cache=True).samples] == ["42", "43"]


def test_a_shorter_or_rewritten_file_is_read_whole(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "aime24.jsonl", _rows("1", "42", ["1", "2", "3"]))
    read_input(path, None, use_cache=True)
    write_jsonl(path, _rows("1", "42", ["9"]))
    assert [s.pred for s in read_input(path, None, use_cache=True).samples] == ["9"]


def test_unterminated_and_torn_last_lines_are_not_cached(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "aime24.jsonl", _rows("1", "42", ["1"]))
    whole = path.stat().st_size
    row = json.dumps(_rows("1", "42", ["2"], start=1)[0]).encode()
    _append(path, [], raw=row)  # complete JSON, no newline yet
    assert [s.pred for s in read_input(path, None, use_cache=True).samples] == ["1", "2"]
    assert _cached_offset(path) == whole
    _append(path, [], raw=b"\n" + row[:-10])  # the line ends; then a torn one
    assert [s.pred for s in read_input(path, None, use_cache=True).samples] == ["1", "2"]
    assert _cached_offset(path) == whole + len(row) + 1
    with path.open("r+b") as handle:  # the torn line is cut and written again, whole
        handle.truncate(whole + len(row) + 1)
    _append(path, _rows("1", "42", ["3"], start=2))
    assert [s.pred for s in read_input(path, None, use_cache=True).samples] == ["1", "2", "3"]


def test_repeats_and_numbering_carry_over(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    upstream = [{"prompt": "P", "answer": "4", "gen": f"$\\boxed{{{a}}}$"} for a in (4, 5)]
    path = write_jsonl(tmp_path / "aime24.jsonl", [*upstream, upstream[0] | {"sample_index": 0}])
    first = read_input(path, None, use_cache=True)
    assert [(s.sample_idx, s.pred) for s in first.samples] == [(0, "4"), (1, "5")]
    assert first.duplicates == 1
    _append(path, [{"prompt": "P", "answer": "4", "gen": "$\\boxed{6}$"}, upstream[1]])
    caplog.clear()
    grown = read_input(path, None, use_cache=True)
    assert [(s.sample_idx, s.pred) for s in grown.samples] == [
        (0, "4"),
        (1, "5"),
        (2, "6"),
        (3, "5"),
    ]
    assert grown.duplicates == 1
    assert "aime24.jsonl:3" in caplog.text  # the first repeat, remembered from the cache
    assert _view(grown) == _view(read_input(path, None))


def test_other_keys_or_a_broken_cache_mean_a_full_read(tmp_path: Path) -> None:
    rows = [r | {"final": "$\\boxed{7}$"} for r in _rows("1", "7", ["3"])]
    path = write_jsonl(tmp_path / "aime24.jsonl", rows)
    assert read_input(path, None, use_cache=True).samples[0].pred == "3"
    assert read_input(path, None, response_key="final", use_cache=True).samples[0].pred == "7"
    read_input(path, None, use_cache=True)  # the cache of the default keys again
    good = json.loads(sample_cache.cache_path_for(path).read_text())
    damaged = [good | {"rows": [good["rows"][0][:7]]}, good | {"rows": [[1] * 8]}]
    for junk in (
        b"",
        b"{",
        b"[]",
        b'{"key": 1}',
        b"\xff" * 10,
        *map(str.encode, map(json.dumps, damaged)),
    ):
        sample_cache.cache_path_for(path).write_bytes(junk)
        assert read_input(path, None, use_cache=True).samples[0].pred == "3"


def test_eval_writes_it_unless_no_cache_and_goes_on_when_it_cannot(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "aime24.jsonl", _rows("1", "42", ["42", "41"]))
    cache = sample_cache.cache_path_for(path)
    assert main(["eval", str(path), "--no-progress", "--no-cache"]) == 0
    assert not cache.exists()
    cache.mkdir()  # in the way: the cache cannot be written
    result = tmp_path / "r.json"
    assert main(["eval", str(path), "--no-progress", "--result-json", str(result)]) == 0
    assert json.loads(result.read_text())["tasks"][0]["n_correct"] == 1
    assert cache.is_dir() and not any(cache.iterdir())
    cache.rmdir()
    assert main(["eval", str(path), "--no-progress"]) == 0
    assert oct(cache.stat().st_mode & 0o777) == "0o644"
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
