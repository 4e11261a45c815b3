"""Runs of two models on three contests from the loopback server (seeded): the report's
leaderboard and grids are built from them (tests and docs/report.md's figures)."""

from __future__ import annotations

from pathlib import Path

from tests.infer_helpers import ROOT, infer
from tests.support.fake_model import load_answers
from tests.support.threaded_server import serve

TASKS = ("aime24", "aime25", "amc23")
MODELS = {"model-a": 0.7, "model-b": 0.3}  # each model's share of right answers


def two_models_three_tasks(folder: Path, n: int = 4) -> list[Path]:
    """`folder/<model>/<task>.jsonl` for both models and the three tasks, `n` samples each."""
    files = []
    for model, accuracy in MODELS.items():
        for task in TASKS:
            data = ROOT / "data" / f"{task}.jsonl"
            out = folder / model / f"{task}.jsonl"
            with serve(answers=load_answers(data), accuracy=accuracy, models=(model,),
                       wrong_longer=True, min_words=40, max_words=400) as srv:  # fmt: skip
                assert infer(srv.url, data, out, "--n-samples", str(n), "--seed", "3") == 0
            files.append(out)
    return files
