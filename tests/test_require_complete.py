"""Partial figures that must not pass for final ones (issue 42.9): `eval --require-complete`,
and `REQUIRE_COMPLETE=1` for scripts/get_scores.sh and the Slurm scoring job, exit 6 when any
run is incomplete, once the table is printed and the results are written; 0 when every run
is complete, and without it."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from llmeval.cli.main import main
from llmeval.errors import EXIT_PARTIAL
from tests.support.docs_world import problems
from tests.support.synthetic import generation, output, write_jsonl
from tests.test_scripts import run

AIME = problems("aime24")
FLAGS = ["--workers", "1", "--no-progress"]
LLMEVAL = f"{sys.executable} -m llmeval"


def _run_of(folder: Path, task_problems: list[dict[str, str]]) -> Path:
    """`folder/aime24.jsonl`: two samples of each problem given, one of them right."""
    rng = random.Random(3)
    rows = [
        generation(p["id"], k, p["answer"], output(p["answer"] if k == 0 else "1000", 200, rng))
        for p in task_problems
        for k in range(2)
    ]
    folder.mkdir(parents=True, exist_ok=True)
    return write_jsonl(folder / "aime24.jsonl", rows)


def test_eval_exits_6_after_writing_when_a_run_is_incomplete(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _run_of(tmp_path / "m", AIME[:10])
    result = tmp_path / "scores.json"
    args = ["eval", str(path), "--result-json", str(result), *FLAGS]
    assert main([*args, "--require-complete"]) == EXIT_PARTIAL == 6
    said = capsys.readouterr()
    (task,) = json.loads(result.read_text())["tasks"]
    assert not task["complete"] and task["n_problems_missing"] == 20
    assert "incomplete: aime24" in said.out  # the table and its notes came first
    assert said.err.strip().splitlines()[-1] == (
        "llmeval eval: error: --require-complete: 1 of 1 runs are incomplete (named under the "
        "table), so these figures are not final"
    )
    assert main(args) == 0  # without the flag an incomplete run is no error


def test_eval_exits_0_when_every_run_is_complete(tmp_path: Path) -> None:
    path = _run_of(tmp_path / "m", AIME)
    assert main(["eval", str(path), "--require-complete", *FLAGS]) == 0


def test_eval_follow_ends_with_6_when_stopped_while_incomplete(tmp_path: Path) -> None:
    """--follow ends by itself only once every run is complete; stopped (Ctrl-C) after a
    refresh while one is not, --require-complete still says so."""
    path = _run_of(tmp_path / "m", AIME[:10])
    result = tmp_path / "live.json"
    argv = [*LLMEVAL.split(), "eval", str(path), "--follow", "60", "--result-json", str(result)]
    proc = subprocess.Popen([*argv, "--require-complete", *FLAGS], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    try:
        for _ in range(600):  # the first refresh has written its result
            if result.is_file() or proc.poll() is not None:
                break
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 6, err
    assert "incomplete: aime24" in out and "--require-complete: 1 of 1 runs" in err


def test_get_scores_passes_require_complete_on(tmp_path: Path) -> None:
    _run_of(tmp_path / "part", AIME[:10])
    _run_of(tmp_path / "whole", AIME)
    proc = run("get_scores.sh", str(tmp_path / "part"), REQUIRE_COMPLETE="1", LLMEVAL=LLMEVAL)
    assert proc.returncode == 6, proc.stderr
    assert (
        json.loads((tmp_path / "part" / "scores.json").read_text())["tasks"][0]["complete"] is False
    )
    assert "incomplete: aime24" in proc.stdout and "get_scores.sh: wrote" in proc.stderr
    assert "--require-complete: 1 of 1 runs are incomplete" in proc.stderr
    for folder, env in (("part", {}), ("whole", {"REQUIRE_COMPLETE": "1"})):
        proc = run("get_scores.sh", str(tmp_path / folder), LLMEVAL=LLMEVAL, **env)
        assert proc.returncode == 0, proc.stderr
    dry = run("get_scores.sh", str(tmp_path / "part"), REQUIRE_COMPLETE="1", DRY_RUN="1")
    assert dry.stdout.split()[-1] == "--require-complete"


def test_the_slurm_scoring_job_exits_6_with_its_report_written(tmp_path: Path) -> None:
    root = str(Path(__file__).resolve().parents[1])
    folder = tmp_path / "run"
    _run_of(folder, AIME[:10])
    env = {"LLMEVAL_ROOT": root, "OUTPUT_DIR": str(folder), "LLMEVAL": LLMEVAL}
    dry = run("slurm/score.sbatch", REQUIRE_COMPLETE="1", DRY_RUN="1", **env)
    assert dry.stdout.splitlines()[0].startswith(f"REQUIRE_COMPLETE=1 {root}/scripts/get_scores.sh")
    proc = run("slurm/score.sbatch", REQUIRE_COMPLETE="1", **env)
    assert proc.returncode == 6, proc.stderr
    assert (folder / "scores.json").is_file() and (folder / "report.html").is_file()
    assert run("slurm/score.sbatch", **env).returncode == 0
