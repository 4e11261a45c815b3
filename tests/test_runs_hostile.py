"""A run's files against typos and races (issue 40, items 2, 8-11 and 14's mixed settings line):
infer and eval plan the same n, shard files follow a run's resolved output, a spec is written
before the first request and checked again before the first sample, Slurm's variables are read
by the --shard rule, a verdict cache inside the evaluated folder is told by its rows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from llmeval.cli.main import main
from llmeval.runs.layout import shard_file
from llmeval.runs.pairs import Shard
from llmeval.tasks import DATA_DIR
from tests.infer_helpers import ROOT, err_line, infer, rows, write_jsonl
from tests.support.threaded_server import serve

FLAGS = ["--workers", "1", "--no-progress"]


def _data(task: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA_DIR / f"{task}.jsonl").open()]


@pytest.fixture
def inp(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "aime24.jsonl", _data("aime24")[:4])


def _eval(tmp_path: Path, *args: str) -> dict[str, Any]:
    result = tmp_path / "result.json"
    assert main(["eval", *args, "--result-json", str(result), *FLAGS]) == 0
    (task,) = json.loads(result.read_text())["tasks"]
    return task


def test_a_run_resumed_at_a_smaller_n_plans_that_n_in_infer_and_eval(
    tmp_path: Path, inp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Drawn at n = 8 with samples 4-7 of some problems failed, resumed at n = 4: infer said
    'nothing to do' while eval planned 30x8 ('39 samples missing'). Both plan 4 now; the
    samples beyond are named and left out of the figures."""
    out = tmp_path / "m" / "aime24.jsonl"
    with serve() as srv:
        assert infer(srv.url, inp, out, "--n-samples", "8") == 0
        write_jsonl(out, [r for r in rows(out) if r["sample_idx"] < 4 or r["problem_id"]
                          == "aime24/60"])  # fmt: skip
        capsys.readouterr()
        assert infer(srv.url, inp, out, "--n-samples", "4") == 0
        assert "nothing to do" in capsys.readouterr().out
    task = _eval(tmp_path, str(out))
    assert (task["n_samples"], task["samples_missing"], task["complete"]) == (4, 0, True)
    assert (task["samples_scored"], task["n_beyond_n"]) == (16, 4)
    captured = capsys.readouterr()
    assert "4 samples at sample indices 4, 5, 6, 7, beyond the run spec's n = 4" in captured.err
    assert "left out: aime24 · test-model: 4 samples at a sample index beyond" in captured.out


def test_a_stray_row_beyond_n_in_a_sharded_run_is_named_not_planned(
    tmp_path: Path, inp: Path
) -> None:
    out = tmp_path / "m" / "aime24.jsonl"
    with serve() as srv:
        for k in range(3):
            assert infer(srv.url, inp, out, "--n-samples", "4", "--shard", f"{k}/3") == 0
    first = shard_file(out, Shard(0, 3))
    stray = dict(rows(first)[0], sample_idx=9)
    write_jsonl(first, [*rows(first), stray])
    task = _eval(tmp_path, str(out.parent))
    assert (task["complete"], task["samples_missing"], task["n_beyond_n"]) == (True, 0, 1)
    assert task["missing_by_shard"] == {}


def test_shards_follow_a_symlinked_output_and_a_shard_output_must_be_jsonl(
    tmp_path: Path, inp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An --output symlink with --shard put the shards beside the link (its spec beside the
    target): samples asked twice, the run unassemblable. They follow the target now."""
    target = tmp_path / "real" / "aime24.jsonl"  # (not there yet: the link dangles)
    target.parent.mkdir()
    link = tmp_path / "links" / "aime24.jsonl"
    link.parent.mkdir()
    link.symlink_to(target)
    with serve() as srv:
        assert infer(srv.url, inp, link, "--n-samples", "2", "--shard", "0/2") == 0
        assert infer(srv.url, inp, target, "--n-samples", "2", "--shard", "1/2") == 0
        assert not (link.parent / "aime24.shards").exists()
        assert shard_file(target, Shard(0, 2)).exists()
        task = _eval(tmp_path, str(target.parent), "--task", "aime24")
        assert (task["samples_scored"], task["n_duplicates"]) == (8, 0)
        capsys.readouterr()
        assert infer(srv.url, inp, tmp_path / "run.out", "--shard", "0/2") == 2
        assert "with --shard: name it *.jsonl" in err_line(capsys.readouterr().err)


def _infer_process(url: str, inp: Path, out: Path, *flags: str) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "llmeval", "infer", "--input", str(inp), "--output", str(out),
            "--base-url", url, "--max-workers", "1", "--progress", "plain", *flags]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)  # fmt: skip


def _wait(condition: Any, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_shards_spec_is_written_before_its_first_request_and_checked_before_its_first_sample(
    tmp_path: Path, inp: Path
) -> None:
    """Shards of one N started together under other settings both ran (a spec was written
    with the first sample, minutes after the start): now a shard started later is refused at
    once, and one whose neighbour wrote other settings meanwhile stops before its first sample."""
    out = tmp_path / "m" / "aime24.jsonl"
    first, second = shard_file(out, Shard(0, 2)), shard_file(out, Shard(1, 2))
    with serve(latency=3.0) as srv:
        proc = _infer_process(srv.url, inp, out, "--n-samples", "2", "--shard", "0/2")
        try:
            _wait(lambda: Path(f"{first}.spec.json").exists())
            assert not first.exists() or not first.read_text()  # no sample yet: the spec first
            hot = ["--n-samples", "2", "--temperature", "1.0", "--shard", "1/2"]
            assert infer(srv.url, inp, out, *hot) == 2  # sees shard 0's settings
            # a neighbour started at the same moment under other settings: its spec appears
            second.parent.mkdir(exist_ok=True)
            second.write_text("")
            spec = json.loads(Path(f"{first}.spec.json").read_text())
            spec.update(temperature=1.0, shard="1/2")
            Path(f"{second}.spec.json").write_text(json.dumps(spec))
            _, err = proc.communicate(timeout=120)
        finally:
            proc.kill()
    assert proc.returncode == 2, err
    assert "are not one run" in err and "temperature" in err
    assert not first.exists() or not rows(first)  # nothing of shard 0 written


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "9" * 400}, "_COUNT='999"),
        ({"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "1" + "0" * 9}, "at most 9 digits"),
        ({"SLURM_ARRAY_TASK_ID": "x", "SLURM_ARRAY_TASK_COUNT": "4"}, "SLURM_ARRAY_TASK_ID="),
    ],
)
def test_hostile_slurm_values_are_one_line(
    tmp_path: Path, inp: Path, env: dict[str, str], message: str, capsys, monkeypatch
) -> None:
    """A 400-digit task count was a traceback (file name too long); 10 digits were taken and
    their files invisible to resume and eval. Both read by the --shard rule."""
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert infer(None, inp, tmp_path / "o" / "aime24.jsonl") == 2
    assert message in err_line(capsys.readouterr().err)
    assert not (tmp_path / "o").exists()


def test_a_jsonl_cache_inside_the_evaluated_folder_is_told_by_its_rows(tmp_path: Path) -> None:
    """`--cache out/verdicts.jsonl` broke every later eval of `out/` (read as a generation file,
    'cannot tell the task')."""
    with serve() as srv:
        out = tmp_path / "out" / "aime24.jsonl"
        inp = write_jsonl(tmp_path / "aime24.jsonl", _data("aime24")[:2])
        assert infer(srv.url, inp, out, "--n-samples", "2") == 0
    cache = out.parent / "verdicts.jsonl"  # as another eval left it: its verdict rows
    verdict = {"key": "0" * 32, "status": "correct", "pred": "1", "gold": "1", "verifier": "v"}
    cache.write_text(json.dumps(verdict) + "\n")
    first = _eval(tmp_path, str(out.parent), "--cache", str(cache))
    again = _eval(tmp_path, str(out.parent), "--cache", str(cache))
    assert again["accuracy"] == first["accuracy"]
    assert _eval(tmp_path, str(out.parent))["samples_scored"] == 4


def test_mixed_settings_count_the_samples_scored_and_know_the_runs_own_settings(
    tmp_path: Path, inp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The line counted rows left out of the figures, and called the run's own settings 'not
    in the run spec' when an older llmeval had written their id."""
    out = tmp_path / "m" / "aime24.jsonl"
    with serve() as srv:
        assert infer(srv.url, inp, out, "--n-samples", "2") == 0
        older = [dict(r, settings="0123456789ab") if r["sample_idx"] == 0 else r for r in rows(out)]
        write_jsonl(out, older)  # an older llmeval's id for the same settings
        assert infer(srv.url, inp, out, "--n-samples", "3") == 0
    task = _eval(tmp_path, str(out))
    assert task["mixed_settings"] is None
    assert "mixed settings" not in capsys.readouterr().out
    with serve() as srv:
        assert infer(srv.url, inp, out, "--n-samples", "4", "--temperature", "1.0", "--force") == 0
    foreign = dict(
        rows(out)[0],
        problem_id="elsewhere/1",
        prompt="Another problem.",
        sample_idx=7,
        settings="ffffffffffff",
    )  # left out: not in the task
    write_jsonl(out, [*rows(out), foreign])
    task = _eval(tmp_path, str(out))
    assert task["mixed_settings"] == "samples 0-2 at temperature 0.6; 3 at temperature 1.0"
    assert task["samples_scored"] == 16
