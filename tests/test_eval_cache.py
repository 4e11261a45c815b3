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


def test_verdicts_of_other_verifier_versions_are_kept_for_them_and_not_used(
    tmp_path: Path, capsys: Any
) -> None:
    """One cache shared by this version and others, older (v3, v4: recorded or not) and newer
    (v99): their verdicts are not used here, and stay in the cache for them at every eval (each
    version deleted the other's: run together, the cache ended empty); only a line a later
    line of its key replaced is dropped."""
    path = write_jsonl(tmp_path / "math500_v.jsonl", _rows("p", "x+1", FINALS))
    first = _eval(path, tmp_path, "--workers", "1")
    cache = tmp_path / "math500_v.jsonl.verdicts.jsonl"
    current = cache.read_text().splitlines()
    verdicts = [Verdict.model_validate_json(line) for line in current]
    assert len(verdicts) == 10 and all(v.verifier for v in verdicts)  # 5 pairs x 2 policies
    strict = verdicts[::2]
    others = [_made_by(v, "strict-last-box-v4", recorded=False) for v in strict]
    others += [_made_by(v, "strict-last-box-v3", recorded=True) for v in strict[:3]]
    others += [_made_by(v, "strict-last-box-v99", recorded=True) for v in strict[:2]]
    unknown = Verdict(key="f" * 32, status="correct", pred="x", gold="y")  # maker untold: kept
    with cache.open("a") as handle:
        handle.writelines([*others, unknown.model_dump_json() + "\n", current[0] + "\n"])
    kept = [*current[1:], *(line.rstrip("\n") for line in others), unknown.model_dump_json(),
            current[0]]  # fmt: skip
    for _ in range(2):
        capsys.readouterr()
        again = _eval(path, tmp_path, "--workers", "1")
        assert again["tasks"] == first["tasks"] and again["cache"]["new"] == 0
        assert ("also holds 10 verdicts of other verifier versions (5 of strict-last-box-v4, 3 "
                "of strict-last-box-v3, 2 of strict-last-box-v99): kept in it for them, not used "
                "here") in capsys.readouterr().err  # fmt: skip
        assert cache.read_text().splitlines() == kept


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


def _forged(pairs: list[tuple[str, str]], **fields: Any) -> str:
    """Cache lines anyone can write for (gold, answer) pairs: keys are public functions."""
    from llmeval.verify.verifier import POLICIES, verdict_key, verifier_id

    lines = []
    for gold, answer in pairs:
        for policy in POLICIES:
            key, made = verdict_key("math", gold, answer, policy), verifier_id("math", policy)
            verdict = {
                "key": key,
                "status": "correct",
                "pred": answer,
                "gold": gold,
                "verifier": made,
            }
            lines.append(json.dumps(verdict | fields) + "\n")
    return "".join(lines)


def test_a_forged_cache_beside_someone_elses_results_is_named_in_the_footer(
    tmp_path: Path, capsys: Any
) -> None:
    """A cache of `correct` verdicts shipped with a results file turned 1 of 3 into 3 of 3 with
    nothing said. Its verdicts bear no seal of this machine's key: still used (rescoring
    someone's results with their cache is legitimate), but the line under the table names the
    cache and how many verdicts it supplied, and --no-cache scores without it."""
    path = write_jsonl(tmp_path / "math500_f.jsonl", _rows("p", "x+1", ["x+2", "x-1", "x+1"]))
    cache = tmp_path / "math500_f.jsonl.verdicts.jsonl"
    cache.write_text(_forged([("x+1", "x+2"), ("x+1", "x-1")]))
    capsys.readouterr()
    forged = _eval(path, tmp_path)
    printed = capsys.readouterr().out
    assert forged["tasks"][0]["accuracy"] == 1.0 and forged["cache"]["foreign"] == {str(cache): 4}
    assert (f"verdict cache {cache}: 4 verdicts used that llmeval did not write on this machine"
            in " ".join(printed.split()))  # fmt: skip
    assert "--no-cache verifies every pair here" in " ".join(printed.split())
    clean = _eval(path, tmp_path, "--no-cache")
    assert clean["tasks"][0]["n_correct"] == 1 and clean["cache"]["foreign"] == {}
    own = write_jsonl(tmp_path / "math500_o.jsonl", _rows("p", "x+1", ["x+2", "x-1", "x+1"]))
    _eval(own, tmp_path)
    moved = tmp_path / "elsewhere" / "math500_o.jsonl"
    moved.parent.mkdir()
    os.rename(own, moved)  # a run moved with its cache on this machine: still its own verdicts
    os.rename(f"{own}.verdicts.jsonl", f"{moved}.verdicts.jsonl")
    capsys.readouterr()
    again = _eval(moved, tmp_path)
    assert again["cache"] == again["cache"] | {"new": 0, "foreign": {}}
    assert "did not write" not in capsys.readouterr().out
    sealed = Path(f"{moved}.verdicts.jsonl")  # one sealed line, its status changed
    lines = sealed.read_text().splitlines()
    wrong = next(i for i, line in enumerate(lines) if '"incorrect"' in line)
    lines[wrong] = lines[wrong].replace('"incorrect"', '"correct"')
    sealed.write_text("\n".join(lines) + "\n")
    tampered = _eval(moved, tmp_path)
    assert tampered["cache"]["foreign"] == {str(sealed): 1}


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"status": "timeout", "timeout_s": float("nan")}, "finite number"),
        ({"status": "timeout", "timeout_s": 1e400}, "finite number"),
        ({"status": "timeout", "timeout_s": -5}, "greater than 0"),
        ({"status": "timeout", "timeout_s": "600"}, "valid number"),
        ({"pred": 7}, "valid string"),
        ({"status": "CORRECT"}, "Input should be"),
    ],
)
def test_every_cached_verdict_is_checked_as_hostile_input(
    fields: dict[str, Any], message: str, tmp_path: Path, capsys: Any
) -> None:
    """A forged `timeout` with timeout_s NaN was reused under any --timeout (NaN compares
    false): a line that is no sane verdict is one error naming the cache, its line and
    --no-cache (exit 2)."""
    path = write_jsonl(tmp_path / "math500_h.jsonl", _rows("p", "x+1", ["x+2"]))
    cache = tmp_path / "math500_h.jsonl.verdicts.jsonl"
    cache.write_text(_forged([("x+1", "x+2")], **fields))
    assert main(["eval", str(path), "--no-progress"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()[-1:]
    assert line.startswith(f"llmeval eval: error: {cache}:1: field ") and message in line
    assert line.endswith("(a verdict cache: --no-cache scores without it)")
    assert main(["eval", str(path), "--no-progress", "--no-cache"]) == 0


def test_the_verdict_key_is_this_users_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    """The key is made once (mode 0600) and read back; one others may read, or a link, is not
    trusted (said): then nothing is told apart, and a cache sealed under another user's key (a
    copied results folder) counts as not written here."""
    from llmeval.evaluate import signing

    path = write_jsonl(tmp_path / "math500_k.jsonl", _rows("p", "x+1", ["x+2", "x+1"]))
    try:
        _eval(path, tmp_path)  # sealed under the session's key
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
        signing.machine_key.cache_clear()
        key, stored = signing.machine_key(), tmp_path / "config" / "llmeval" / "verdict-key"
        assert key is not None and stored.stat().st_mode & 0o777 == 0o600
        signing.machine_key.cache_clear()
        assert signing.machine_key() == key
        other = _eval(path, tmp_path)
        assert other["cache"]["foreign"] == {f"{path}.verdicts.jsonl": 4}
        for spoil, why in ((lambda: stored.chmod(0o644), "others may read it (mode 644)"),
                           (lambda: stored.unlink() or stored.symlink_to(path), "")):  # fmt: skip
            spoil()
            signing.machine_key.cache_clear()
            capsys.readouterr()
            assert signing.machine_key() is None
            assert f"no verdict key at {stored} ({why}" in capsys.readouterr().err
    finally:
        signing.machine_key.cache_clear()
