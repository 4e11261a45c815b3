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
