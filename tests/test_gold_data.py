"""Every math file in `data/`, through the real `eval`: each gold boxed verbatim is correct (a
perfect model scores 100%), a standard rewriting of it is correct, another problem's gold is
not, and every gold parses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llmeval.evaluate.options import EvalOptions
from llmeval.evaluate.run import run_eval
from llmeval.tasks import DATA_DIR, TASKS
from llmeval.verify.verifier import parse_gold
from tests.support.gold_rewrite import SAME_VALUE, rewrite
from tests.support.synthetic import generation, write_jsonl

MATH = sorted(name for name, task in TASKS.items() if task.kind == "math")


def _other(rows: list[dict], i: int) -> str:
    """The gold of the next problem whose gold differs (in spelling and in value)."""
    mine = rows[i]["answer"]
    for step in range(1, len(rows)):
        other = rows[(i + step) % len(rows)]["answer"]
        if "".join(other.split()) != "".join(mine.split()) and (mine, other) not in SAME_VALUE:
            return other
    raise AssertionError("a file of one gold")


@pytest.mark.slow
@pytest.mark.parametrize("task", MATH)
def test_every_gold_verifies_against_itself_and_not_another(task: str, tmp_path: Path) -> None:
    rows = [json.loads(line) for line in (DATA_DIR / f"{task}.jsonl").open()]
    for row in rows:
        assert parse_gold(row["answer"]), (row["id"], row["answer"])
    out = []
    for i, row in enumerate(rows):
        for idx, final in enumerate((row["answer"], rewrite(row["answer"]), _other(rows, i))):
            gen = f"<think>\nworking\n</think>\n\nSo the final answer is $\\boxed{{{final}}}$."
            out.append(generation(row["id"], idx, row["answer"], gen))
    path = write_jsonl(tmp_path / f"{task}.jsonl", out)
    options = EvalOptions(paths=[str(path)], use_cache=False, workers=2, timeout=60)
    result = run_eval(options)
    wrong = []
    for sample in result.runs[0].samples:
        status = sample.status["strict"]
        expected = "correct" if sample.sample_idx < 2 else "not correct"
        if (status == "correct") != (expected == "correct"):
            wrong.append((sample.problem_id, sample.sample_idx, sample.pred, status))
    assert wrong == []
    (score,) = result.report.tasks
    assert score.n_gold_unparsed == 0 and score.n_ungraded == 0
