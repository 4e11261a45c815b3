"""A model's date (issue 41.4): `--model-date` on infer is kept in the run spec without making a
resume differ; eval and report show, per model, the score over the contests held after it beside
the score over all, and the leaderboard marks the cells held before it; without a date every
output is as it was."""

from __future__ import annotations

import html
import json
import random
import re
from pathlib import Path

import pytest

from llmeval.cli.main import main
from llmeval.evaluate.cutoff import cutoff_lines, held_before
from llmeval.records import TaskScore
from tests.infer_helpers import AIME24, infer, rows
from tests.support.fake_model import load_answers
from tests.support.model_runs import two_models_three_tasks
from tests.support.synthetic import generation, output, write_jsonl
from tests.support.threaded_server import serve

FLAGS = ["--workers", "1", "--no-progress"]


def test_infer_records_the_date_and_a_resume_without_or_with_another_is_not_refused(
    tmp_path: Path,
) -> None:
    out = tmp_path / "m" / "aime24.jsonl"
    spec = Path(f"{out}.spec.json")
    with serve(answers=load_answers(AIME24), accuracy=0.5) as srv:
        assert infer(srv.url, AIME24, out, "--n-samples", "1", "--model-date", "2024-06-30") == 0
        assert json.loads(spec.read_text())["model_date"] == "2024-06-30"
        settings = {r["settings"] for r in rows(out)}
        assert infer(srv.url, AIME24, out, "--n-samples", "2") == 0  # no date: kept
        assert json.loads(spec.read_text())["model_date"] == "2024-06-30"
        assert infer(srv.url, AIME24, out, "--n-samples", "3", "--model-date", "2024-07-01") == 0
    stored = json.loads(spec.read_text())
    assert stored["model_date"] == "2024-07-01" and stored["segments"] == []
    assert {r["settings"] for r in rows(out)} == settings  # the same settings throughout
    assert infer(None, AIME24, out, "--model-date", "2024-7-1") == 2


def _run(folder: Path, task: str, right: list[int], n: int = 2, **spec: object) -> Path:
    """A run of `task`'s first problems: problem i has `right[i]` of `n` samples right."""
    rng = random.Random(7)
    problems = [json.loads(line) for line in (AIME24.parent / f"{task}.jsonl").open()]
    out = []
    for problem, good in zip(problems, right, strict=False):
        for idx in range(n):
            final = problem["answer"] if idx < good else "1000"
            out.append(generation(problem["id"], idx, problem["answer"], output(final, 300, rng)))
    path = write_jsonl(folder / f"{task}.jsonl", out)
    if spec:
        body = {"model": "m", "n_samples": n, "task": task, **spec}
        Path(f"{path}.spec.json").write_text(json.dumps(body))
    return path


def _eval(tmp_path: Path, capsys, *args: str) -> tuple[str, dict]:
    result = tmp_path / "result.json"
    assert main(["eval", *args, "--result-json", str(result), *FLAGS]) == 0
    return capsys.readouterr().out, json.loads(result.read_text())


def test_eval_shows_the_score_after_the_date_beside_all_and_nothing_without_one(
    tmp_path: Path, capsys
) -> None:
    folder = tmp_path / "m"
    folder.mkdir()
    _run(folder, "aime24", [2, 0, 0, 0])  # 25%: held 2024-02-01
    _run(folder, "hmmt25", [2, 2, 1, 0])  # 62.5%: held 2025-02-15
    _run(folder, "aime25", [2, 2, 2, 2])  # 100%: held 2025-02-06
    plain, result = _eval(tmp_path, capsys, str(folder))
    assert {t["model_date"] for t in result["tasks"]} == {None}
    dated, result = _eval(tmp_path, capsys, str(folder), "--model-date", "2025-02-06")
    assert {t["model_date"] for t in result["tasks"]} == {"2025-02-06"}
    line = ("after the model's date: m (2025-02-06): 62.5 over the contest held after it "
            "(hmmt25); 62.5 over all 3; held on or before it: aime24, aime25")  # fmt: skip
    # (the 25.0, 62.5 and 100.0 of the three runs average to 62.5 over all)
    assert line in dated.splitlines()
    assert dated.replace(line + "\n", "") == plain  # the date only adds its line
    assert "model's date" not in plain


def test_a_run_spec_date_wins_over_the_flag(tmp_path: Path, capsys) -> None:
    folder = tmp_path / "m"
    folder.mkdir()
    _run(folder, "aime24", [2, 1], model_date="2023-01-01")  # its own date: aime24 after it
    _run(folder, "hmmt25", [0, 0], model="m")
    out, result = _eval(tmp_path, capsys, str(folder), "--model-date", "2025-12-31")
    dates = {t["task"]: t["model_date"] for t in result["tasks"]}
    assert dates == {"aime24": "2023-01-01", "hmmt25": "2025-12-31"}
    assert "m (2023-01-01, 2025-12-31): 75.0 over the contest held after it (aime24); 37.5 " in out


def test_undated_tasks_and_no_contest_after_the_date_are_said() -> None:
    base = dict(model="m", file="f", n_problems=1, n_samples=1, samples_expected=1,
                samples_scored=1, samples_missing=0, stderr=None, sample_stderr=None,
                complete=True)  # fmt: skip
    scores = [TaskScore(task="math", accuracy=0.5, model_date="2024-01-01", **base),
              TaskScore(task="aime24", accuracy=1.0, model_date="2024-02-01", **base)]  # fmt: skip
    assert [held_before(s) for s in scores] == [None, True]  # held on the date: before it
    assert cutoff_lines(scores) == [
        "after the model's date: m (2024-01-01, 2024-02-01): no contest held after it; 75.0 over "
        "all 2; held on or before it: aime24; undated: math"
    ]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return two_models_three_tasks(tmp_path_factory.mktemp("runs"), n=2)


def _leaderboard(tmp_path: Path, files: list[Path], *extra: str) -> list[list[str]]:
    out = tmp_path / "report.html"
    assert main(["report", *map(str, files), "-o", str(out), *FLAGS, *extra]) == 0
    page = out.read_text(encoding="utf-8")
    section = re.search('<section id="leaderboard">.*?(<table.*?</table>)', page, re.S)
    assert section  # (its first table)
    return [
        [
            html.unescape(re.sub("<[^>]+>", "", cell))
            for cell in re.findall(r"<t[hd]>(.*?)</t[hd]>", row)
        ]
        for row in re.findall(r"<tr>(.*?)</tr>", section.group(1))
    ]


def test_the_leaderboard_marks_cells_before_the_models_date(
    files: list[Path], tmp_path: Path
) -> None:
    plain = _leaderboard(tmp_path, files)
    assert plain[0] == ["rank", "model", "aime24 %", "aime25 %", "amc23 %", "average %"]
    assert not any("†" in cell for row in plain for cell in row)
    dated = _leaderboard(tmp_path, files, "--model-date", "2024-06-30")
    head, *body = dated
    assert head == [*plain[0], "after the model's date %"]
    for row, before in zip(body, plain[1:], strict=True):
        # aime24 (2024-02-01) and amc23 (2023-11-08) precede the date: marked; aime25 not
        assert row[2:5] == [before[2] + " †", before[3], before[4] + " †"]
        assert row[5] == before[5] and row[6] == before[3]  # after the date: aime25 alone
