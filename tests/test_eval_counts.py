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
    assert "100.0 @4   0.0" in aime_row and "25.0 ± 0.0" in aime_row
    assert "100.0 @2 100.0" in math_row and "@4" not in math_row
    assert "pass@k" in out
