"""The report over several runs (issue 31.4-31.7): the leaderboard with rank ranges from
paired tests, rows per setting, the per-sample grid's data, tokens and cost; `report
--follow` over a growing file. Runs of two models on three contests come from the loopback
server (tests/support/model_runs.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from llmeval.cli.main import main
from llmeval.evaluate.reading import InputRun
from llmeval.evaluate.scoring import task_score
from llmeval.records import TaskScore
from llmeval.report.data import Run
from llmeval.report.grid import GLYPHS
from llmeval.report.leaderboard import board, leaderboard
from tests.infer_helpers import AIME24, ROOT, infer
from tests.support.fake_model import load_answers
from tests.support.model_runs import TASKS, two_models_three_tasks
from tests.support.report_fixtures import make_file
from tests.support.threaded_server import serve

FLAGS = ["--workers", "1", "--no-progress"]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return two_models_three_tasks(tmp_path_factory.mktemp("runs"))


def _section(page: str, name: str) -> str:
    found = re.search(f'<section id="{name}">(.*?)</section>', page, re.S)
    return found.group(1) if found else ""


def _rows(html: str) -> list[list[str]]:
    """The cells of a table's rows (head included), tags stripped."""
    return [
        [re.sub("<[^>]+>", "", cell) for cell in re.findall(r"<t[hd]>(.*?)</t[hd]>", row)]
        for row in re.findall(r"<tr>(.*?)</tr>", html)
    ]


def _report(tmp_path: Path, files: list[Path], *extra: str) -> str:
    out = tmp_path / "report.html"
    assert main(["report", *map(str, files), "-o", str(out), *FLAGS, *extra]) == 0
    return out.read_text(encoding="utf-8")


def _data(page: str) -> dict[str, Any]:
    found = re.search(r'<script type="application/json" id="llmeval-data">(.*?)</script>', page)
    assert found
    return json.loads(found.group(1))


def test_two_models_on_three_contests_get_a_leaderboard_and_grids(
    files: list[Path], tmp_path: Path
) -> None:
    page = _report(tmp_path, files, "--price-in", "1", "--price-out", "4")
    board_html = _section(page, "leaderboard")
    head, first, second = _rows(board_html)[:3]
    assert head == ["rank", "model", *(f"{t} %" for t in TASKS), "average %"]
    assert first[:2] == ["1", "model-a"] and second[:2] == ["2", "model-b"]  # 0.7 vs 0.3: apart
    assert "paired sign-flip permutation test" in board_html and "Holm" in board_html
    pairs = _rows(board_html)[3:]
    assert pairs[1][:3] == ["model-a", "model-b", "100"] and pairs[1][-1] == "yes"
    # each cell is eval's own avg@n ± stderr of that run
    result = tmp_path / "a.json"
    assert main(["eval", str(files[0]), "--result-json", str(result), *FLAGS]) == 0
    score = json.loads(result.read_text())["tasks"][0]
    assert first[2] == f"{100 * score['accuracy']:.1f} ± {100 * score['stderr']:.1f}"
    # the grid: a table per run drawn by the script from the problems, a kind per sample
    assert '<div id="grids">' in _section(page, "grid")
    problems = _data(page)["problems"]
    assert len(problems) == 2 * (30 + 30 + 40) and _data(page)["glyphs"] == GLYPHS
    kinds = {s[6] for p in problems for s in p["s"]}
    assert kinds == {"correct", "incorrect"}
    # tokens and cost: a cost per run, a cost-versus-accuracy picture per contest
    tokens = _section(page, "tokens")
    assert "cost per sample" in tokens and tokens.count("cost vs accuracy</title>") == 3
    runs = _rows(tokens)[1:]
    assert len(runs) == 6 and all(row[-2].startswith("$") and row[2] != "–" for row in runs)


def test_without_prices_no_cost_and_one_model_no_leaderboard(
    files: list[Path], tmp_path: Path
) -> None:
    page = _report(tmp_path, files[:3])  # model-a alone
    assert _section(page, "leaderboard") == "" and 'href="#leaderboard"' not in page
    tokens = _section(page, "tokens")
    assert "prompt tokens" in tokens and "cost" not in tokens and "<svg" not in tokens


def _scored(label: str, model: str, task: str, **settings: Any) -> tuple[InputRun, TaskScore]:
    source = make_file(task=task, n_problems=12, n=4, seed=len(label))
    score = task_score(source, "strict")
    update = {"model": model, "file": f"{label}/{task}.jsonl", "settings": settings}
    return source, score.model_copy(update=update)


def test_rows_split_by_a_setting_that_differs_on_one_task_only() -> None:
    runs = {
        "a-high": _scored("a-high", "A", "aime24", reasoning_effort="high", max_tokens=32768),
        "a-low": _scored("a-low", "A", "aime24", reasoning_effort="low", max_tokens=32768),
        # the cap differs across tasks only: no row of its own
        "a-high-25": _scored("a-high-25", "A", "aime25", reasoning_effort="high", max_tokens=8192),
        "b": _scored("b", "B", "aime24", reasoning_effort="high", max_tokens=32768),
    }
    run = Run("x", "strict", {k: v[0] for k, v in runs.items()}, {k: v[1] for k, v in runs.items()})
    layout = board(run)
    assert layout.rows == ["A · effort=high", "A · effort=low", "B"]
    assert layout.cells[("A · effort=high", "aime25")] == "a-high-25"
    section = leaderboard(run)
    assert "not run" in section and "– (not every task)" in section  # B has no aime25


def test_report_follow_marks_the_page_provisional_until_the_run_is_complete(
    tmp_path: Path,
) -> None:
    out = tmp_path / "m" / "aime24.jsonl"
    with serve(answers=load_answers(AIME24), accuracy=0.5) as srv:
        assert infer(srv.url, AIME24, out, "--n-samples", "2") == 0
    lines = out.read_text(encoding="utf-8").splitlines(keepends=True)
    out.write_text("".join(lines[:40]), encoding="utf-8")
    page = tmp_path / "report.html"
    argv = [sys.executable, "-m", "llmeval", "report", str(out), "-o", str(page), "--follow",
            "0.2", *FLAGS]  # fmt: skip
    proc = subprocess.Popen(argv, cwd=ROOT, env=dict(os.environ), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    try:
        deadline = time.monotonic() + 180
        while not (page.exists() and "Provisional" in page.read_text(encoding="utf-8")):
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        text = page.read_text(encoding="utf-8")
        assert "1 of 1 runs are incomplete" in text and "rewrites it every 0.2 s" in text
        with out.open("a", encoding="utf-8") as handle:
            handle.write("".join(lines[40:]))
        _, err = proc.communicate(timeout=180)  # ends by itself
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert "Provisional" not in page.read_text(encoding="utf-8")
