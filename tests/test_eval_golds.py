"""Golds and ids that files carry wrongly: a gold fixed between runs, a NaN gold, numeric problem
ids (text everywhere: eval, and infer resuming a file another tool wrote)."""

from __future__ import annotations

import hashlib
import json
import math
import random
from pathlib import Path
from typing import Any

import pytest

from llmeval.cli.main import main
from llmeval.tasks import DATA_DIR
from tests.infer_helpers import infer
from tests.support.synthetic import generation, output, write_jsonl
from tests.support.threaded_server import serve

RNG = random.Random(23)
FIRST = json.loads((DATA_DIR / "aime24.jsonl").open().readline())


def _eval(tmp_path: Path, path: Path) -> dict[str, Any]:
    result = tmp_path / "r.json"
    assert main(["eval", str(path), "--result-json", str(result), "--no-progress"]) == 0
    (task,) = json.loads(result.read_text())["tasks"]
    return task


def test_a_gold_fixed_between_runs_grades_every_row_against_the_current_gold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pid, gold = FIRST["id"], FIRST["answer"]
    rows = [generation(pid, i, "999", output("999", 100, RNG)) for i in range(2)]  # old gold
    rows += [generation(pid, i, gold, output(gold, 100, RNG)) for i in range(2, 4)]
    task = _eval(tmp_path, write_jsonl(tmp_path / "aime24.jsonl", rows))
    assert task["accuracy"] == 0.5  # each row against its own gold said 1.0
    err = capsys.readouterr().err
    assert f"{pid} ('999', {gold!r} -> {gold!r})" in err and "graded against the current" in err
    # every row holds the old gold: graded against the current one too, with the warning
    rows = [generation(pid, i, "999", output("999" if i else gold, 100, RNG)) for i in range(4)]
    for row in rows:
        row["prompt"] = FIRST["problem"] + "\nPlease reason step by step."
    task = _eval(tmp_path, write_jsonl(tmp_path / "aime24_old.jsonl", rows))
    assert task["accuracy"] == 0.25  # against the old gold in every row: 0.75, silently
    assert f"{pid} ('999' -> {gold!r})" in capsys.readouterr().err
    for row in rows:  # asked otherwise (a choice task's options in another order?): its own
        row["prompt"] = "Another wording of the problem."
    task = _eval(tmp_path, write_jsonl(tmp_path / "aime24_other.jsonl", rows))
    assert task["accuracy"] == 0.75 and f"{pid} ('999', not {gold!r})" in capsys.readouterr().err
    # a problem the task's data does not hold: the latest row's gold
    rows = [generation("own-1", 0, "5", output("5", 100, RNG))]
    rows += [generation("own-1", 1, "6", output("6", 100, RNG))]
    task = _eval(tmp_path, write_jsonl(tmp_path / "aime24_own.jsonl", rows))
    assert task["accuracy"] == 0.5 and "the latest row's gold '6'" in capsys.readouterr().err


def test_one_output_one_verdict_whatever_gold_its_row_held(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Answers are read for the gold a sample is graded against (issue 29.3): the same output
    boxing both roots was incorrect in a run whose rows held an old one-part gold (its last
    box alone was read) and correct in a run whose rows held the current `-2,1`."""
    problem = next(
        json.loads(line)
        for line in (DATA_DIR / "math500.jsonl").open()
        if '"test/intermediate_algebra/1102.json"' in line
    )
    gen = output(None, 500, RNG) + "The integer roots are $\\boxed{-2}$ and $\\boxed{1}$."
    scores = []
    for name, held in (("old", "1"), ("current", problem["answer"])):
        rows = [generation(problem["id"], i, held, gen) for i in range(2)]
        for row in rows:
            row["prompt"] = problem["problem"]
        (tmp_path / name).mkdir()
        scores.append(_eval(tmp_path, write_jsonl(tmp_path / name / "math500.jsonl", rows)))
    assert [score["accuracy"] for score in scores] == [1.0, 1.0]  # the old-gold run said 0.0
    assert "('1' -> '-2,1')" in capsys.readouterr().err


def test_a_score_names_the_sha256_of_the_problems_it_was_scored_against(tmp_path: Path) -> None:
    """The result JSON and the report tie a score to the exact data (issue 29.13)."""
    path = write_jsonl(tmp_path / "aime24.jsonl", [generation(FIRST["id"], 0, "5", "\\boxed{5}")])
    task = _eval(tmp_path, path)
    digest = hashlib.sha256((DATA_DIR / "aime24.jsonl").read_bytes()).hexdigest()
    assert (task["problems_file"], task["problems_sha256"]) == (
        str(DATA_DIR / "aime24.jsonl"),
        digest,
    )
    out = tmp_path / "report.html"
    assert main(["report", str(path), "--out", str(out), "--no-progress"]) == 0
    assert f"(SHA-256 {digest})" in out.read_text()


def test_a_nan_gold_is_ungraded_and_numeric_ids_are_text(tmp_path: Path) -> None:
    rows = [generation("a", 0, "5", output("5", 100, RNG)), generation("b", 0, "5", "\\boxed{5}")]
    rows[1]["answer"] = math.nan  # json writes NaN
    rows[0]["problem_id"] = 7  # another tool's integer id
    path = tmp_path / "aime24.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    task = _eval(tmp_path, path)
    assert (task["n_problems"], task["n_ungraded"], task["accuracy"]) == (1, 1, 1.0)
    assert task["problems"][0]["problem_id"] == "7"


def test_infer_resumes_a_file_whose_problem_ids_are_numbers(tmp_path: Path) -> None:
    problems = [{"id": i, "problem": f"{i}+{i}?", "answer": str(2 * i)} for i in range(3)]
    inp = write_jsonl(tmp_path / "in.jsonl", problems)
    out = tmp_path / "out.jsonl"
    done = [generation(i, 0, str(2 * i), "\\boxed{0}") for i in range(3)]  # written elsewhere
    write_jsonl(out, done)
    with serve() as srv:
        assert infer(srv.url, inp, out, "--n-samples", "2") == 0
        assert srv.stats["completions"] == 3  # only sample 1 of each problem was missing
    keys = [(str(r["problem_id"]), r["sample_idx"]) for r in map(json.loads, out.open())]
    assert sorted(keys) == [(str(i), k) for i in range(3) for k in range(2)]
