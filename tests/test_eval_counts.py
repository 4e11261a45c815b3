"""Every count means what it says (issue 30): exact copies of rows, problems matched by text
whatever their spacing, the table's pass@k of each row. Through the command line."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from llmeval.cli.main import main
from llmeval.tasks import DATA_DIR
from tests.support.synthetic import generation, output, upstream, write_jsonl

RNG = random.Random(30)
FLAGS = ["--workers", "1", "--no-progress"]


def _data(task: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA_DIR / f"{task}.jsonl").open()]


def _eval(tmp_path: Path, *args: str) -> dict[str, Any]:
    result = tmp_path / "result.json"
    assert main(["eval", *args, "--result-json", str(result), *FLAGS]) == 0
    return json.loads(result.read_text())


@pytest.mark.parametrize("spacing", [str.strip, lambda text: " ".join(text.split())])
def test_problems_match_by_text_whatever_their_spacing(tmp_path: Path, spacing: Any) -> None:
    """A complete OlympiadBench file from a harness that strips the problem text (one shipped
    problem starts with a newline: 'incomplete: 1' before) or joins its lines is complete."""
    problems = _data("olympiadbench")
    assert any(p["problem"] != p["problem"].strip() for p in problems)  # what this is about
    rows = [
        {
            "doc_id": i,
            "prompt": "Question: " + spacing(p["problem"]) + "\nAnswer:",
            "answer": p["answer"],
            "gen": ["I cannot tell."],  # no answer: nothing to verify, the count is the point
        }
        for i, p in enumerate(problems)
    ]
    path = write_jsonl(tmp_path / "olympiadbench_other.jsonl", rows)
    (task,) = _eval(tmp_path, str(path))["tasks"]
    assert (task["n_problems"], task["n_problems_missing"]) == (len(problems), 0)
    assert task["complete"]


def _rows(problems: list[dict[str, Any]], n: int, right: int) -> list[dict[str, Any]]:
    """n samples per problem, the first `right` of them answering the gold."""
    return [
        generation(p["id"], i, p["answer"], output(p["answer"] if i < right else "1000", 200, RNG))
        for p in problems
        for i in range(n)
    ]


def test_the_table_shows_each_runs_own_pass_at_n(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """AIME at n = 4 beside MATH-500 at n = 2: each row's pass@n and maj@n at its own n, labelled
    (the column was pass@2 for both, the smallest n of all rows)."""
    aime = write_jsonl(tmp_path / "aime24.jsonl", _rows(_data("aime24")[:2], 4, 1))
    math = write_jsonl(tmp_path / "math500.jsonl", _rows(_data("math500")[:2], 2, 1))
    assert main(["eval", str(aime), str(math), *FLAGS]) == 0
    out = capsys.readouterr().out
    aime_row = next(line for line in out.splitlines() if line.startswith("aime24"))
    math_row = next(line for line in out.splitlines() if line.startswith("math500"))
    # pass@4, pass^4 (never all four right), maj@4
    assert "100.0 @4    0.0   0.0" in aime_row and "25.0 ± 0.0" in aime_row
    assert "100.0 @2    0.0 100.0" in math_row and "@4" not in math_row
    assert "pass@k" in out


def test_a_file_of_ones_own_problems_is_the_generic_math_task(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """infer takes it and says what eval will do; eval scores infer's output as `math` (it
    refused: no task), complete against the run's own input."""
    from tests.infer_helpers import infer
    from tests.support.threaded_server import serve

    mine = write_jsonl(
        tmp_path / "my_problems.jsonl",
        [{"id": f"q{i}", "problem": f"What is {i} + {i}?", "answer": str(2 * i)} for i in range(4)],
    )
    out = tmp_path / "out" / "mine.jsonl"
    with serve() as srv:
        assert infer(srv.url, mine, out, "--n-samples", "2") == 0
    err = capsys.readouterr().err
    assert "names no task llmeval knows" in err and "generic task 'math'" in err
    (task,) = _eval(tmp_path, str(out))["tasks"]
    assert (task["task"], task["n_problems"], task["samples_scored"]) == ("math", 4, 8)
    assert task["complete"] and task["n_problems_missing"] == 0
    assert "scored as the generic task 'math'" in capsys.readouterr().err
    part = write_jsonl(tmp_path / "own.jsonl", [r for r in _read(out) if r["problem_id"] != "q0"])
    (task,) = _eval(tmp_path, str(part), "--task", "math")["tasks"]
    assert task["complete"] and task["n_problems"] == 3  # no data, no spec: its own problems


def test_a_math_subset_under_the_generic_task_is_complete(tmp_path: Path) -> None:
    """100 MATH-500 problems: `--task math500` says 400 missing (it is a slice of MATH-500),
    `--task math` scores them as what they are."""
    path = write_jsonl(tmp_path / "subset.jsonl", _rows(_data("math500")[:100], 1, 1))
    (task,) = _eval(tmp_path, str(path), "--task", "math500")["tasks"]
    assert task["n_problems_missing"] == 400
    (task,) = _eval(tmp_path, str(path), "--task", "math")["tasks"]
    assert task["complete"] and task["accuracy"] == 1.0


def test_task_names_and_golds_that_do_not_fit_the_task(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_jsonl(tmp_path / "subset.jsonl", _rows(_data("math500")[:3], 1, 1))
    assert main(["eval", str(path), "--task", "aime2024", *FLAGS]) == 2
    error = capsys.readouterr().err
    assert "unknown task 'aime2024' (nearest: aime24" in error and "gpqa_diamond" in error
    assert "math (any problems with a boxed answer)" in error
    _eval(tmp_path, str(path), "--task", "gpqa_diamond")
    err = capsys.readouterr().err
    assert "--task gpqa_diamond grades option letters, but 3 of 3 problems have a gold" in err
    from tests.infer_helpers import infer

    assert infer(None, path, tmp_path / "o.jsonl", "--task", "math5000") == 2
    assert "--task: unknown task 'math5000' (nearest: math500" in capsys.readouterr().err


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _concat(path: Path, *parts: list[dict[str, Any]]) -> Path:
    return write_jsonl(path, [row for part in parts for row in part])


def test_a_file_appended_to_itself_counts_each_sample_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An upstream file (rows without a sample index) appended twice was 'aime24 · 30×2' with
    every figure over doubled samples; copies are dropped and counted (footer and JSON)."""
    rows = [upstream(r, with_ids=False) for r in _rows(_data("aime24"), 1, 1)]
    path = _concat(tmp_path / "aime24.jsonl", rows, rows)
    result = tmp_path / "result.json"
    assert main(["eval", str(path), "--result-json", str(result), *FLAGS]) == 0
    (task,) = json.loads(result.read_text())["tasks"]
    assert (task["n_samples"], task["samples_scored"]) == (1, 30)  # (2, 60) before
    assert task["n_copies"] == 30
    assert task["complete"] and task["n_duplicates"] == 0 and task["sample_stderr"] == 0.0
    captured = capsys.readouterr()
    assert f"{path}: lines 31-60 repeat lines 1-30 whole, in order" in captured.err
    assert "copies: aime24 · " in captured.out and "30 rows repeat earlier rows" in captured.out


def test_our_file_appended_to_itself_and_other_samples_under_a_taken_index(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = _rows(_data("aime24")[:2], 2, 1)
    other = dict(rows[0], gen=rows[0]["gen"] + " Let me restate it.", seed=7)  # not a copy
    path = _concat(tmp_path / "aime24.jsonl", rows, rows, [other])
    (task,) = _eval(tmp_path, str(path))["tasks"]
    assert (task["samples_scored"], task["n_duplicates"]) == (4, 1)  # (4, 5): 'repeated'
    assert task["n_copies"] == 4
    err = capsys.readouterr().err
    assert "4 rows repeat an earlier row's (problem, sample index) with the same text" in err
    assert f"{path}:5 (problem aime24/60, sample 0, as line 1)" in err
    assert "1 rows reuse an earlier row's (problem, sample index) with another text" in err


def test_rows_alike_without_an_index_are_two_samples(tmp_path: Path) -> None:
    """Same problem and text drawn twice with other seeds (a short answer): two samples; the
    same text and no seed, written twice: two as well (issue 37: it was one, 'an exact copy';
    identical texts are distinct samples, and one row repeated proves no copy)."""
    rows = [upstream(r, with_ids=False) for r in _rows(_data("aime24")[:1], 1, 1)]
    seeded = [dict(rows[0], seed=1), dict(rows[0], seed=2)]
    (task,) = _eval(tmp_path, str(_concat(tmp_path / "aime24.jsonl", seeded)))["tasks"]
    assert (task["samples_scored"], task["n_copies"]) == (2, 0)
    (task,) = _eval(tmp_path, str(_concat(tmp_path / "aime24.jsonl", rows, rows)))["tasks"]
    assert (task["samples_scored"], task["n_copies"]) == (2, 0)


def test_force_keeps_each_segments_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run continued with --force at another temperature: the spec kept only the new one, as
    if every sample had been drawn at 1.0; now it keeps both, each row names its settings, and
    eval and the report say which samples were drawn under which."""
    from tests.infer_helpers import infer
    from tests.support.threaded_server import serve

    inp = write_jsonl(tmp_path / "aime24.jsonl", _data("aime24")[:3])
    out = tmp_path / "m" / "aime24.jsonl"
    with serve() as srv:
        assert infer(srv.url, inp, out, "--n-samples", "2") == 0
        # rows as an llmeval before this one wrote them: no settings id
        out.write_text("".join(json.dumps({k: v for k, v in row.items() if k != "settings"}) + "\n"
                               for row in _read(out)))  # fmt: skip
        assert infer(srv.url, inp, out, "--n-samples", "3", "--temperature", "1.0") == 2
        assert infer(srv.url, inp, out, "--n-samples", "3", "--temperature", "1.0", "--force") == 0
        assert infer(srv.url, inp, out, "--n-samples", "4", "--temperature", "1.0") == 0
    spec = json.loads(Path(f"{out}.spec.json").read_text())
    assert spec["temperature"] == 1.0
    assert [s["fields"]["temperature"] for s in spec["segments"]] == [0.6, 1.0]
    assert {r["settings"] for r in _read(out) if r["sample_idx"] >= 2} == {
        spec["segments"][1]["id"]
    }
    capsys.readouterr()
    (task,) = _eval(tmp_path, str(out))["tasks"]
    said = "samples 0-1 at temperature 0.6; 2-3 at temperature 1.0"
    assert task["mixed_settings"] == said and task["complete"]
    captured = capsys.readouterr()
    assert f"mixed settings: {said}" in captured.err
    name = "aime24 · test-model · temp=mixed (0.6, 1.0)"  # named by its mixed settings
    assert f"mixed settings: {name}: {said}" in captured.out
    page = tmp_path / "r.html"
    assert main(["report", str(out), "--out", str(page), *FLAGS]) == 0
    assert f"mixed settings: {name}: {said}" in page.read_text()


def test_index_ranges() -> None:
    from llmeval.runs.spec import index_ranges

    assert index_ranges([3, 0, 1, 2, 8, 10, 11, 11]) == "0-3, 8, 10-11"
    assert index_ranges([5]) == "5" and index_ranges([]) == ""
