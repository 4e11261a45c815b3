"""`eval --follow` over a file that grows (issue 31.1-31.3). The run comes from the loopback
server with wrong answers longer than right ones (seeded); the test appends its rows as a
running infer would: four whole rounds first, then the rest shortest first (short answers
finish first), a torn last line between two refreshes. The complete-rounds estimate stays
within its stderr of the final score where the mean over finished samples does not, and the
follow ends by itself when the run is complete."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from llmeval.jsonl import JsonlAppender
from tests.infer_helpers import AIME24, ROOT, infer
from tests.support.fake_model import load_answers
from tests.support.threaded_server import serve

ROUNDS, EARLY = 4, 0.3  # whole rounds written first; then this share of the rest, shortest first


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """aime24 x 8 from the loopback server: half right, right answers the shorter ones."""
    out = tmp_path_factory.mktemp("run") / "m" / "aime24.jsonl"
    config = {"accuracy": 0.5, "wrong_longer": True, "min_words": 50, "max_words": 2000}
    with serve(answers=load_answers(AIME24), **config) as srv:
        assert infer(srv.url, AIME24, out, "--n-samples", "8", "--seed", "1") == 0
    return out


def _finish_order(whole: Path) -> list[str]:
    """The lines of the run in the order a running infer would finish them."""
    lines = whole.read_text(encoding="utf-8").splitlines(keepends=True)
    first = [line for line in lines if json.loads(line)["sample_idx"] < ROUNDS]
    rest = [line for line in lines if json.loads(line)["sample_idx"] >= ROUNDS]
    rest.sort(key=lambda line: json.loads(line)["usage"]["completion_tokens"])
    return first + rest


def _start(tmp_path: Path, whole: Path, lines: list[str]) -> tuple[Path, Path]:
    """The growing file (its run spec beside it) holding `lines`, and the result to watch."""
    grow = tmp_path / "m" / "aime24.jsonl"
    grow.parent.mkdir()
    shutil.copy(f"{whole}.spec.json", f"{grow}.spec.json")
    grow.write_text("".join(lines), encoding="utf-8")
    return grow, tmp_path / "result.json"


def _follow(grow: Path, result: Path, seconds: str = "0.2") -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "llmeval", "eval", str(grow), "--follow", seconds,
            "--result-json", str(result), "--workers", "1"]  # fmt: skip
    env = {**os.environ, "COLUMNS": "150"}
    return subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)  # fmt: skip


def _wait_for(result: Path, ready: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """The run's figures once a refresh wrote what `ready` wants (a generous deadline)."""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if result.exists():
            task = json.loads(result.read_text())["tasks"][0]  # written whole: never half a file
            if ready(task):
                return task
        time.sleep(0.05)
    raise AssertionError(f"no refresh wrote the figures wanted: {result}")


def test_follow_scores_a_growing_file_honestly_and_ends_when_complete(
    whole: Path, tmp_path: Path
) -> None:
    order = _finish_order(whole)
    early = len(order) * ROUNDS // 8 + int(len(order) * (8 - ROUNDS) // 8 * EARLY)
    grow, result = _start(tmp_path, whole, order[:early])
    proc = _follow(grow, result)
    try:
        partial = _wait_for(result, lambda t: t["samples_scored"] == early)
        assert not partial["complete"] and partial["rounds_complete"] == ROUNDS
        with grow.open("a", encoding="utf-8") as handle:  # more samples and a torn last line
            handle.write("".join(order[early : early + 20]) + order[early + 20][:40])
        later = _wait_for(result, lambda t: t["samples_scored"] == early + 20)  # torn: skipped
        with grow.open("a", encoding="utf-8") as handle:
            handle.write(order[early + 20][40:] + "".join(order[early + 21 :]))
        out, err = proc.communicate(timeout=180)  # it ends by itself: the run is complete
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    final = json.loads(result.read_text())["tasks"][0]
    assert final["complete"] and final["samples_scored"] == len(order) == 240
    assert final["rounds_accuracy"] == final["finished_mean"] == final["accuracy"]
    for task in (partial, later):
        # unbiased by the finish order: within its stderr of the final avg@8 ...
        off = abs(task["rounds_accuracy"] - final["accuracy"])
        assert off <= task["rounds_stderr"], (task["rounds_accuracy"], final["accuracy"])
        # ... where the running mean reads high, by more than that
        assert task["finished_mean"] - final["accuracy"] > task["rounds_stderr"]
    lines = [line for line in out.splitlines() if " samples, " in line]
    assert len(lines) >= 3 and "finished mean" in lines[0] and "(provisional)" in lines[0]
    assert lines[-1].endswith("; complete") and "rounds 8/8" in lines[-1]
    assert "llmeval eval: percent" in out  # the last table
    assert err.count("torn last line") <= 1 and "Traceback" not in err


def test_ctrl_c_ends_a_follow_with_the_last_table(whole: Path, tmp_path: Path) -> None:
    order = _finish_order(whole)
    grow, result = _start(tmp_path, whole, order[:100])
    writer = JsonlAppender(grow, exclusive=True)  # as infer holds its file while it runs
    proc = _follow(grow, result, "60")
    try:
        _wait_for(result, lambda t: t["samples_scored"] == 100)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        writer.close()
        proc.kill()
    assert proc.returncode == 0, err
    assert "runs in progress" in out and "100/240" in out and "Traceback" not in err


@pytest.mark.parametrize(
    ("flag", "message"), [("0", "--follow 0:"), ("nan", "--follow nan:"), ("-5", "--follow -5:")]
)
def test_bad_follow_seconds_are_refused(
    flag: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from llmeval.cli.main import main

    assert main(["eval", str(tmp_path / "x.jsonl"), f"--follow={flag}"]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("command", ["eval", "report"])
def test_a_follow_started_with_infer_waits_for_the_run_to_appear(
    command: str, whole: Path, tmp_path: Path
) -> None:
    """Issue 42.4: started before infer has created its file, then while the file is empty
    (infer writes its first line when a sample is done), the follow waits, says so once, and
    scores the run once it appears (it exited 2 at once: no such file, then no samples)."""
    grow, out = tmp_path / "m" / "aime24.jsonl", tmp_path / "out"
    argv = [sys.executable, "-m", "llmeval", command, str(grow), "--follow", "0.2",
            "--workers", "1", *(["-o", str(out)] if command == "report" else [])]  # fmt: skip
    proc = subprocess.Popen(argv, cwd=ROOT, env=dict(os.environ), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        time.sleep(1.5)  # no such file: eval looks for it every 0.2 s
        assert proc.poll() is None
        grow.parent.mkdir()
        shutil.copy(f"{whole}.spec.json", f"{grow}.spec.json")
        grow.touch()
        time.sleep(1.0)  # an empty file: still waiting
        assert proc.poll() is None
        grow.write_text(whole.read_text(encoding="utf-8"), encoding="utf-8")
        stdout, err = proc.communicate(timeout=180)  # ends by itself: the run is complete
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert err.count(f"waiting for {grow} to appear (up to 3600 s: --wait)") == 1, err
    assert "Traceback" not in err
    if command == "eval":
        assert "rounds 8/8" in stdout
    else:
        assert "Provisional" not in out.read_text(encoding="utf-8")


def test_a_run_that_never_appears_is_an_error_after_the_wait(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from llmeval.cli.main import main

    missing = tmp_path / "m" / "aime24.jsonl"
    assert main(["eval", str(missing), "--follow", "0.1", "--wait", "0.3"]) == 2
    assert f"{missing}: not there after 0.3 s of waiting (--wait)" in capsys.readouterr().err
    assert main(["eval", str(missing), "--wait", "5"]) == 2  # --wait without --follow
    assert "--wait goes with --follow" in capsys.readouterr().err
