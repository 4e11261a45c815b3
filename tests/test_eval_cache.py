"""The verdict cache: a rerun verifies nothing, added samples verify only their new pairs, a
killed eval resumes, another verifier id misses; hard deadlines and payloads through the CLI."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from llmeval.cli.main import main
from llmeval.evaluate.options import EvalOptions
from llmeval.evaluate.run import run_eval
from llmeval.records import Verdict
from tests.support.procs import session_members, verifier_workers
from tests.support.synthetic import generation, write_jsonl

THINK = "<think>\nLet me compute this carefully, step by step.\n</think>\n\n"


def _rows(pid: str, gold: str, finals: list[str], start: int = 0) -> list[dict[str, Any]]:
    return [
        generation(pid, start + i, gold, THINK + f"So the answer is $\\boxed{{{f}}}$.")
        for i, f in enumerate(finals)
    ]


def _eval(path: Path, tmp_path: Path, *extra: str) -> dict[str, Any]:
    result = tmp_path / "result.json"
    argv = ["eval", str(path), "--result-json", str(result), "--no-progress", *extra]
    assert main(argv) == 0
    return json.loads(result.read_text())


# symbolic pairs (no exact fast path): each distinct one needs math-verify
FINALS = ["x+1", "1+x", "x+1", "x+2", "x+1", "2x", "x+1", "x+1", "x+2", "x-1"]


def test_second_run_verifies_nothing_and_added_samples_only_theirs(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "math500_a.jsonl", _rows("p", "x+1", FINALS))
    first = _eval(path, tmp_path)
    assert first["cache"] == first["cache"] | {"hits": 0, "new": 5}  # five distinct answers
    assert (tmp_path / "math500_a.jsonl.verdicts.jsonl").exists()
    second = _eval(path, tmp_path)
    assert second["cache"] == second["cache"] | {"hits": 5, "new": 0}
    assert second["tasks"] == first["tasks"]
    with path.open("a") as handle:  # 10% more samples: one known answer, one new
        for row in _rows("p", "x+1", ["x+1", "x+3"], start=10):
            handle.write(json.dumps(row) + "\n")
    third = _eval(path, tmp_path)
    assert third["cache"] == third["cache"] | {"hits": 5, "new": 1}
    assert third["tasks"][0]["n_samples"] == 12


def test_another_verifier_id_misses(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "math500_b.jsonl", _rows("p", "x+1", ["x+2"]))
    old_id = "math-verify==0.8.0 policy=some-older-policy"
    old_key = hashlib.sha256("\x1f".join((old_id, "math", "x+1", "x+2")).encode()).hexdigest()
    forged = Verdict(key=old_key[:32], status="correct", pred="x+2", gold="x+1")
    cache = tmp_path / "math500_b.jsonl.verdicts.jsonl"
    cache.write_text(forged.model_dump_json() + "\n")
    result = _eval(path, tmp_path)
    assert result["cache"]["new"] == 1 and result["tasks"][0]["n_correct"] == 0


def test_killed_eval_keeps_its_verdicts_and_resumes(tmp_path: Path) -> None:
    # ten quick pairs, then a power tower that blocks the only worker until we kill everything
    rows = _rows("p", "x+1", [f"x+{i}" for i in range(2, 12)])
    rows += _rows("q", "42", ["9^{9^{9^{9^{9}}}}"])
    path = write_jsonl(tmp_path / "math500_c.jsonl", rows)
    cache = tmp_path / "math500_c.jsonl.verdicts.jsonl"
    argv = [
        sys.executable,
        "-m",
        "llmeval",
        "eval",
        str(path),
        "--workers",
        "1",
        "--timeout",
        "600",
    ]
    proc = subprocess.Popen(argv, start_new_session=True, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if cache.exists() and cache.read_text().count("\n") >= 20:
                break
            time.sleep(0.2)
    finally:
        proc.kill()  # only the eval itself: its forkserver and worker must not outlive it
        proc.wait()
    assert cache.read_text().count("\n") == 20  # a verdict per policy for each pair
    assert _session_empties(proc.pid), "a verifier process outlived the killed eval"
    with cache.open("a") as handle:  # and a torn line, as a kill mid-write would leave
        handle.write('{"key": "abc", "sta')
    result = _eval(path, tmp_path, "--timeout", "1")
    assert result["cache"] == result["cache"] | {"hits": 10, "new": 1, "timeouts": 1}
    assert (
        result["tasks"][0]["n_timeout"] == 1 and result["tasks"][0]["problems"][1]["n_timeout"] == 1
    )
    # the timeout is cached for this deadline, retried under a longer one
    assert _eval(path, tmp_path, "--timeout", "1")["cache"]["new"] == 0
    assert _eval(path, tmp_path, "--timeout", "1.5")["cache"]["new"] == 1


def _session_empties(sid: int, wait_s: float = 20) -> bool:
    """Wait until no process of session `sid` is left; kill leftovers and say so if any."""
    deadline = time.monotonic() + wait_s
    while True:
        left = session_members(sid)
        if not left:
            return True
        if time.monotonic() > deadline:
            for pid in left:
                os.kill(pid, signal.SIGKILL)
            return False
        time.sleep(0.2)


def test_hostile_sample_times_out_without_stalling_the_rest(tmp_path: Path) -> None:
    target = tmp_path / "pwned"
    payload = f"__import__('os').system('touch {target}')"
    rows = _rows("tower", "42", ["9^{9^{9^{9^{9}}}}"])
    rows += _rows("payload", "42", [payload, f"\\text{{{payload}}}"])
    rows += _rows("fine", "x+1", ["1+x", "x+1"])
    path = write_jsonl(tmp_path / "math500_d.jsonl", rows)
    exported = tmp_path / "v.jsonl"
    result = _eval(path, tmp_path, "--timeout", "2", "--export-verdicts", str(exported))
    statuses = [json.loads(line)["status"] for line in exported.read_text().splitlines()]
    assert statuses == ["timeout", "incorrect", "incorrect", "correct", "correct"]
    assert result["tasks"][0]["n_timeout"] == 1
    assert not target.exists()


def test_no_cache_writes_nothing(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "math500_e.jsonl", _rows("p", "x+1", ["x+1"]))
    assert _eval(path, tmp_path, "--no-cache")["cache"]["new"] == 1
    assert not (tmp_path / "math500_e.jsonl.verdicts.jsonl").exists()


def test_a_torn_tail_another_eval_leaves_in_a_shared_cache_is_cut_before_the_next_append(
    tmp_path: Path,
) -> None:
    # ten quick pairs, then a power tower that holds the only worker until its 3 s deadline
    rows = _rows("p", "x+1", [f"x+{i}" for i in range(2, 12)])
    rows += _rows("q", "42", ["9^{9^{9^{9^{9}}}}"])
    path = write_jsonl(tmp_path / "math500_s.jsonl", rows)
    cache = tmp_path / "shared.verdicts.jsonl"
    argv = [sys.executable, "-m", "llmeval", "eval", str(path), "--cache", str(cache),
            "--workers", "1", "--timeout", "3", "--no-progress"]  # fmt: skip
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (cache.exists() and cache.read_text().count("\n") >= 20):
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    with cache.open("a") as handle:  # another eval sharing the cache, killed mid-append
        handle.write('{"key": "torn-by-another-eval", "sta')
    torn_at = cache.stat().st_size
    assert proc.wait(120) == 0, proc.stderr.read() if proc.stderr else ""
    data = cache.read_bytes()
    assert len(data) > torn_at and data.endswith(b"\n")  # the tower's verdicts came after
    verdicts = [Verdict.model_validate_json(line) for line in data.splitlines()]
    assert len(verdicts) == 22 and not any(v.key.startswith("torn") for v in verdicts)
    assert _eval(path, tmp_path, "--cache", str(cache), "--timeout", "3")["cache"]["new"] == 0


def test_a_timeout_the_machine_caused_is_not_cached_and_a_rerun_verifies_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The only worker is stopped (SIGSTOP: no CPU time passes, as for a worker that waits for
    a core) once the first pair is verified: the second pair hits the wall-clock backstop.
    That timeout counts in this run, is not cached, and a rerun verifies the pair."""
    path = write_jsonl(tmp_path / "math500_m.jsonl", _rows("p", "x+1", ["1+x", "x+1"]))
    options = EvalOptions(paths=[str(path)], workers=1, timeout=0.5)

    def stop_the_worker(verified: int, known: int, remaining: int) -> None:
        if verified == 1:
            (worker,) = verifier_workers()
            os.kill(worker, signal.SIGSTOP)

    first = run_eval(options, stop_the_worker).report.tasks[0]
    assert (first.n_correct, first.n_timeout) == (1, 1)
    assert "1 pairs got under 0.5 s of CPU in 2.5 s (the machine is busy)" in caplog.text
    cache = Path(f"{path}.verdicts.jsonl").read_text()
    assert '"timeout"' not in cache and cache.count("\n") == 2  # one pair, both policies
    again = run_eval(options).report
    assert (again.tasks[0].n_correct, again.cache.new) == (2, 1)


def test_links_out_of_the_results_folder_are_never_followed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Someone else's results folder whose verdict cache and run spec are dangling links out
    of it: eval scores the file and creates nothing outside (it created the cache there);
    infer refuses to write a spec through such a link."""
    folder, outside = tmp_path / "theirs", tmp_path / "outside"
    folder.mkdir()
    outside.mkdir()
    path = write_jsonl(folder / "math500_l.jsonl", _rows("p", "x+1", FINALS))
    Path(f"{path}.verdicts.jsonl").symlink_to(outside / "cache.jsonl")
    Path(f"{path}.spec.json").symlink_to(outside / "spec.json")
    assert _eval(path, tmp_path)["tasks"][0]["n_correct"] == 6
    assert "is a link out of its folder" in caplog.text and not any(outside.iterdir())
    problems = write_jsonl(tmp_path / "in.jsonl", [{"id": "a", "problem": "q", "answer": "1"}])
    argv = ["infer", "--input", str(problems), "--output", str(path), "--base-url", "http://h"]
    assert main(argv) == 2 and not any(outside.iterdir())


def _made_by(verdict: Verdict, policy_id: str, *, recorded: bool) -> str:
    """The verdict's pair as another policy version would have cached it: its key (and, when
    `recorded`, its verifier id; llmeval before 0.2 recorded none) with an opposite status."""
    from llmeval.records import cache_key
    from llmeval.verify.verifier import POLICY_IDS, verifier_id

    made = verifier_id("math", "strict").replace(POLICY_IDS["strict"], policy_id)
    key = cache_key(made, "math", verdict.gold or "", verdict.pred or "")
    other = "incorrect" if verdict.status == "correct" else "correct"
    old = Verdict(key=key, status=other, pred=verdict.pred, gold=verdict.gold,
                  verifier=made if recorded else None)  # fmt: skip
    return old.model_dump_json(exclude_none=True) + "\n"


def test_verdicts_of_another_verifier_version_are_said_and_cleared(
    tmp_path: Path, capsys: Any
) -> None:
    """A cache grown under strict-last-box-v3/v4: those verdicts are named, recomputed where
    needed, and the cache rewritten without them (it grew forever; nothing was said)."""
    path = write_jsonl(tmp_path / "math500_v.jsonl", _rows("p", "x+1", FINALS))
    first = _eval(path, tmp_path, "--workers", "1")
    cache = tmp_path / "math500_v.jsonl.verdicts.jsonl"
    current = cache.read_text()
    verdicts = [Verdict.model_validate_json(line) for line in current.splitlines()]
    assert len(verdicts) == 10 and all(v.verifier for v in verdicts)  # 5 pairs x 2 policies
    unknown = Verdict(key="f" * 32, status="correct", pred="x", gold="y")  # maker untold: kept
    with cache.open("a") as handle:
        handle.writelines(_made_by(v, "strict-last-box-v4", recorded=False) for v in verdicts)
        handle.writelines(_made_by(v, "strict-last-box-v3", recorded=True) for v in verdicts[:3])
        handle.write(unknown.model_dump_json() + "\n" + current.splitlines()[0] + "\n")
    capsys.readouterr()
    second = _eval(path, tmp_path, "--workers", "1")
    assert second["tasks"] == first["tasks"] and second["cache"]["new"] == 0
    err = capsys.readouterr().err
    assert "13 verdicts of another verifier version (10 of strict-last-box-v4, 3 of " in err
    assert "strict-last-box-v3) were not reused (their pairs are verified again); removed" in err
    kept = cache.read_text()
    assert kept.splitlines() == [*current.splitlines()[1:], unknown.model_dump_json(),
                                 current.splitlines()[0]]  # fmt: skip
    _eval(path, tmp_path, "--workers", "1")
    assert "another verifier version" not in capsys.readouterr().err


def test_a_cache_rewritten_under_another_evals_appender_loses_nothing(tmp_path: Path) -> None:
    """Evals sharing a cache append under its flock; a rewrite replaces the file under that lock,
    and an appender waiting on it (or arriving later) appends to the new file, not the old."""
    import threading

    from llmeval.files import atomic_file
    from llmeval.jsonl import JsonlAppender, locked

    cache = tmp_path / "shared.verdicts.jsonl"
    first, second, third = (Verdict(key=k * 32, status="correct") for k in "abc")
    with JsonlAppender(cache) as other_eval:
        other_eval.write(first)
        with locked(cache):
            waiting = threading.Thread(target=other_eval.write, args=(second,))
            waiting.start()
            time.sleep(0.2)  # (it waits on the lock whether or not it got there yet)
            with atomic_file(cache) as out:
                out.write(cache.read_bytes())
        waiting.join(30)
        other_eval.write(third)
    keys = [Verdict.model_validate_json(line).key for line in cache.read_text().splitlines()]
    assert keys == [first.key, second.key, third.key]
