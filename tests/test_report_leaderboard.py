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
from tests.support.model_runs import TASKS, many_models, right_run, two_models_three_tasks
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
    assert "paired sign-flip test" in board_html and "Holm" in board_html
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


def _notes(html: str) -> list[str]:
    return re.findall(r'<p class="note">(.*?)</p>', html)


def test_a_board_of_50_models_tells_the_strong_from_the_weak(tmp_path: Path) -> None:
    """Issue 40.1: a p-value of 5,000 random flips never went below 2.0e-4, Holm's first
    threshold over 1,225 pairs is 4.1e-5: every rank read 1–50. Exact p-values on 30 problems
    reach 2^-29."""
    page = _report(tmp_path, many_models(tmp_path / "runs", 50))
    board_html = _section(page, "leaderboard")
    rows = _rows(board_html)[1:51]
    assert [row[1] for row in rows[:2]] == ["model-49", "model-47"]
    best, worst = (tuple(map(int, row[0].split("–"))) for row in (rows[0], rows[-1]))
    assert best[0] == 1 and best[1] < 25 and worst[0] > 25 and worst[1] == 50
    assert re.fullmatch(r"\d+ of 1225 pairs differ significantly \(Holm, 5%\)\.",
                        _notes(board_html)[0])  # fmt: skip


def test_a_board_of_alike_models_says_the_data_cannot_separate_them(tmp_path: Path) -> None:
    page = _report(tmp_path, many_models(tmp_path / "runs", 12, spread=0.0))
    board_html = _section(page, "leaderboard")
    assert {row[0] for row in _rows(board_html)[1:13]} == {"1–12"}
    assert _notes(board_html)[0].startswith(
        "The data cannot separate these 12 rows: no two differ significantly (Holm, 5%), so "
        "every rank is 1–12."
    )


def test_a_run_in_progress_is_ranked_on_the_rounds_both_runs_have(tmp_path: Path) -> None:
    """Issue 42.5: a complete run and one in progress are compared on the rounds both have
    completed, and the page says the ranks are provisional and the test repeated. Here the
    two runs' first two rounds are the same samples and the complete run is right on every
    later one: compared on all its rounds against the other's two, it ranked first (p 0.0002)
    before the other run had drawn a single later sample."""
    base = right_run(tmp_path / "base", 8)
    lines = [json.loads(line) for line in base.read_text(encoding="utf-8").splitlines()]
    spec = json.loads(Path(f"{base}.spec.json").read_text(encoding="utf-8"))
    wrong = re.compile(r"\\boxed\{(\d+)\}")
    files = []
    for model, kept in (("done", 8), ("running", 2)):
        out = tmp_path / model / "aime24.jsonl"
        out.parent.mkdir()
        rows = []
        for row in lines:  # the first two rounds: odd problems wrong; later rounds all right
            if row["sample_idx"] < 2 and int(row["problem_id"].split("/")[-1]) % 2:
                row = {**row, "gen": wrong.sub(r"\\boxed{\g<1>7}", row["gen"])}
            if row["sample_idx"] < kept:
                rows.append(json.dumps({**row, "model": model}) + "\n")
        out.write_text("".join(rows), encoding="utf-8")
        Path(f"{out}.spec.json").write_text(json.dumps({**spec, "model": model}), "utf-8")
        files.append(out)
    board_html = _section(_report(tmp_path, files), "leaderboard")
    head, *rows = _rows(board_html)[:3]
    assert head[0] == "rank (provisional)"
    assert [row[0] for row in rows] == ["1–2", "1–2"]
    pair = _rows(board_html)[4]
    assert pair[2:] == ["30", "+0.0", "1", "exact", "no"]  # the same samples: no difference
    notes = _notes(board_html)
    assert notes[0].startswith("The data cannot separate these 2 rows")
    assert notes[1].startswith("Runs in progress: each pair is tested only on the rounds")
    assert "repeated at every refresh" in notes[1]


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


def test_small_costs_show_two_significant_digits(files: list[Path], tmp_path: Path) -> None:
    """Issue 42.8: at $0.01 per million tokens a sample costs about $0.0000025, which the
    table showed as `$0.0000`."""
    tokens = _section(_report(tmp_path, files, "--price-in", "0.01", "--price-out", "0.01"),
                      "tokens")  # fmt: skip
    per_sample = [row[-1] for row in _rows(tokens)[1:]]
    assert len(per_sample) == 6
    assert all(re.fullmatch(r"\$0\.00000[1-9]\d", cell) for cell in per_sample), per_sample


def _legend_ys(svg: str) -> list[float]:
    return [float(y) for y in re.findall(r'<text class="legend" text-anchor="\w+" x="[\d.]+" '
                                          r'y="([\d.]+)"', svg)]  # fmt: skip


def test_legends_of_the_cost_and_length_cap_pictures_lie_below_the_plot(
    files: list[Path], tmp_path: Path
) -> None:
    """Issue 42.8: the cost-vs-accuracy and length-cap legends sat inside the plot, over data;
    they lie under the plot and its x label now, inside the picture (the SVG grows)."""
    from llmeval.report.charts import BOTTOM, H

    page = _report(tmp_path, files, "--price-in", "1", "--price-out", "4")
    pictures = re.findall(r"<svg .*?</svg>", page, re.S)
    wanted = [svg for svg in pictures if "cost vs accuracy</title>" in svg
              or "accuracy under a length cap</title>" in svg]  # fmt: skip
    assert len(wanted) == 3 + 6  # a cost picture per contest, a length-cap one per run
    for svg in wanted:
        height = float(re.search(r'viewBox="0 0 \d+ ([\d.]+)"', svg).group(1))
        ys = _legend_ys(svg)
        assert ys and all(H - BOTTOM + 20 < y < height for y in ys), (ys, height)


def test_a_cost_too_small_for_float_steps_still_draws() -> None:
    """A price of 1e-321 dollars per million tokens makes costs of a few 1e-324 (subnormal):
    the axis keeps its two ends instead of failing to step (a traceback)."""
    from llmeval.report.charts import nice_ticks
    from llmeval.report.scatter import scatter

    assert nice_ticks(0.0, 5.5e-324) == [0.0, 5.5e-324]
    assert nice_ticks(0.0, 3.3e-5) == [0.0, 1e-05, 2e-05, 3e-05]  # small, still stepped
    assert "<circle" in scatter("aime24: cost vs accuracy", "$", "acc", [("m", 5e-324, 0.5, 0.1)])
