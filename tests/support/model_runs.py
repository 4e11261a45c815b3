"""Runs of two models on three contests from the loopback server (seeded): the report's
leaderboard and grids are built from them (tests and docs/report.md's figures)."""

from __future__ import annotations

import json
import random
import re
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


def right_run(folder: Path, n: int) -> Path:
    """`folder/aime24.jsonl`: `n` samples of every aime24 problem from the loopback server,
    every answer right (short outputs, seeded)."""
    data, out = ROOT / "data" / "aime24.jsonl", folder / "aime24.jsonl"
    with serve(answers=load_answers(data), accuracy=1.0, min_words=10, max_words=30) as srv:
        assert infer(srv.url, data, out, "--n-samples", str(n), "--seed", "3") == 0
    return out


def many_models(folder: Path, count: int, n: int = 4, spread: float = 1.0) -> list[Path]:
    """`folder/model-KK/aime24.jsonl` for `count` models, from one loopback run whose answers
    are all right: model K keeps a sample's answer with chance K / (count − 1) scaled by
    `spread` around 1/2, a problem's difficulty added, else boxes a wrong one (real rows,
    seeded; spread 0: every model alike)."""
    base = right_run(folder / "base", n)
    lines = [json.loads(line) for line in base.read_text(encoding="utf-8").splitlines()]
    spec = json.loads(Path(f"{base}.spec.json").read_text(encoding="utf-8"))
    problems = sorted({row["problem_id"] for row in lines})
    files = []
    for k in range(count):
        model = f"model-{k:02d}"
        skill = 0.5 + spread * (k / max(1, count - 1) - 0.5)
        rng = random.Random(k)
        out = folder / model / "aime24.jsonl"
        out.parent.mkdir(parents=True)
        rows = []
        for row in lines:
            ease = problems.index(row["problem_id"]) / len(problems) - 0.5  # -0.5 .. 0.5
            if rng.random() >= skill + 0.3 * ease:
                row = {**row, "gen": re.sub(r"\\boxed\{(\d+)\}", r"\\boxed{\g<1>7}", row["gen"])}
            rows.append(json.dumps({**row, "model": model}) + "\n")
        out.write_text("".join(rows), encoding="utf-8")
        Path(f"{out}.spec.json").write_text(json.dumps({**spec, "model": model}), encoding="utf-8")
        files.append(out)
    return files
