"""`llmeval infer --shard K/N` against the loopback server: the requests of any N are the
unsharded run's, every file of the run counts as done, specs and writers of one run agree."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from llmeval.cli.main import main
from llmeval.jsonl import JsonlAppender
from llmeval.runs.layout import shard_file
from llmeval.runs.pairs import Shard
from tests.infer_helpers import ROOT, err_line, infer, rows, write_jsonl
from tests.support.threaded_server import serve

PROBLEMS = [
    {"id": f"p{i}", "problem": f"Compute {i} times {i}.", "answer": str(i * i)} for i in range(6)
]
N = 5  # samples per problem: 30 pairs


@pytest.fixture
def inp(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "in.jsonl", PROBLEMS)


def pairs(*files: Path) -> Counter[tuple[str, int]]:
    """(problem, sample) pairs over files (absent files hold none), with repeats counted."""
    return Counter((r["problem_id"], r["sample_idx"]) for f in files if f.exists() for r in rows(f))


def texts(*files: Path) -> dict[tuple[str, int], Any]:
    """(text, seed) by (problem, sample) over files."""
    every = [r for f in files for r in rows(f)]
    return {(r["problem_id"], r["sample_idx"]): (r["gen"], r["seed"]) for r in every}


def shard_files(out: Path, count: int) -> list[Path]:
    return [shard_file(out, Shard(k, count)) for k in range(count)]


def go(srv: Any, inp: Path, out: Path, *flags: str) -> int:
    """`llmeval infer` of N samples per problem, in-process."""
    return infer(srv.url, inp, out, "--n-samples", str(N), *flags)


def chat_requests(srv: Any) -> int:
    return srv.stats["POST /v1/chat/completions"]


def test_shards_send_the_unsharded_runs_bytes_and_write_the_same_samples(
    inp: Path, tmp_path: Path, capsys
) -> None:
    whole, out = tmp_path / "whole" / "in.jsonl", tmp_path / "sharded" / "in.jsonl"
    with serve() as srv:
        flags = ["--n-samples", str(N), "--seed", "7"]
        assert infer(srv.url, inp, whole, *flags) == 0
        unsharded = Counter(srv.server.raw_bodies)
        srv.server.raw_bodies.clear()
        for k in range(3):
            assert infer(srv.url, inp, out, *flags, "--shard", f"{k}/3") == 0
        sharded = Counter(srv.server.raw_bodies)
    assert len(unsharded) == 30 and sharded == unsharded  # byte for byte, as a multiset
    files = shard_files(out, 3)
    assert not out.exists() and all(f.exists() for f in files)
    assert pairs(*files) == pairs(whole) and set(pairs(whole).values()) == {1}
    assert texts(*files) == texts(whole)
    for k, f in enumerate(files):  # each file holds its own shard's pairs only
        assert all(Shard(k, 3).owns(pid, idx) for pid, idx in pairs(f))
        spec = json.loads(Path(f"{f}.spec.json").read_text())
        assert spec["shard"] == f"{k}/3" and spec["n_samples"] == N
    printed = capsys.readouterr()
    assert "shard 2/3 (from --shard): " in printed.err
    last = printed.out.strip().splitlines()[-1]
    assert last.startswith("infer: shard 2/3 has ") and "30 of 30 samples in 3 files" in last
    assert last.endswith("(complete)")


def test_resharding_3_to_4_after_a_partial_run_asks_only_for_what_is_missing(
    inp: Path, tmp_path: Path, capsys
) -> None:
    out = tmp_path / "out" / "in.jsonl"
    with serve() as srv:
        assert go(srv, inp, out, "--shard", "0/3") == 0
        assert go(srv, inp, out, "--shard", "1/3") == 0
        before = pairs(*shard_files(out, 3))
        asked = chat_requests(srv)
        for k in range(4):
            assert go(srv, inp, out, "--shard", f"{k}/4") == 0
        assert chat_requests(srv) - asked == 30 - len(before)  # exactly the missing pairs
        assert go(srv, inp, out) == 0  # unsharded: nothing left
        assert go(srv, inp, out, "--shard", "2/3") == 0
        assert chat_requests(srv) - asked == 30 - len(before)
    union = pairs(*shard_files(out, 3), *shard_files(out, 4), out)
    assert len(union) == 30 and set(union.values()) == {1}
    assert not out.exists()  # the unsharded run had nothing to write
    assert "holds 30 of 30 samples in 6 files (complete)" in capsys.readouterr().out


def test_an_unsharded_run_counts_the_shards_samples_as_done(
    inp: Path, tmp_path: Path, capsys
) -> None:
    out = tmp_path / "out" / "in.jsonl"
    with serve() as srv:
        assert go(srv, inp, out, "--shard", "1/2") == 0
        done = pairs(shard_file(out, Shard(1, 2)))
        asked = chat_requests(srv)
        assert go(srv, inp, out) == 0
        assert chat_requests(srv) - asked == 30 - len(done)
    assert set(pairs(out)) == {(p["id"], k) for p in PROBLEMS for k in range(N)} - set(done)
    printed = capsys.readouterr()
    assert f"{30 - len(done)} samples to request ({len(done)} of 30 already in " in printed.err
    assert f"the run {out} holds 30 of 30 samples in 2 files (complete)" in printed.out


def test_a_shard_whose_spec_differs_from_the_runs_is_refused(
    inp: Path, tmp_path: Path, capsys
) -> None:
    out = tmp_path / "out" / "in.jsonl"
    with serve() as srv:
        assert go(srv, inp, out, "--shard", "0/3") == 0
        capsys.readouterr()
        flags = ["--n-samples", str(N), "--shard", "1/3", "--temperature", "0.7"]
        assert infer(srv.url, inp, out, *flags) == 2
        line = err_line(capsys.readouterr().err)
        assert f"{shard_file(out, Shard(0, 3))}, a file of the same run" in line
        assert "temperature: 0.6 -> 0.7" in line and "--force" in line
        assert not shard_file(out, Shard(1, 3)).exists()
        # n may grow, as on a resume; the unsharded file's spec is checked the same way
        assert infer(srv.url, inp, out, "--n-samples", str(N + 1), "--shard", "1/3") == 0
        assert go(srv, inp, out, "--reasoning-effort", "low") == 2
        assert "reasoning_effort: null -> " in err_line(capsys.readouterr().err)
        assert infer(srv.url, inp, out, *flags, "--force") == 0
    assert "--force: " in capsys.readouterr().err


def test_another_shards_torn_last_line_is_skipped_and_left_alone(
    inp: Path, tmp_path: Path, capsys
) -> None:
    out = tmp_path / "out" / "in.jsonl"
    with serve() as srv:
        assert go(srv, inp, out, "--shard", "0/2") == 0
        other = shard_file(out, Shard(0, 2))
        whole = other.read_bytes()
        other.write_bytes(whole + whole.splitlines(keepends=True)[0][:50])  # being written
        torn = other.read_bytes()
        assert go(srv, inp, out, "--shard", "1/2") == 0
        assert other.read_bytes() == torn
        assert "torn last line skipped" in capsys.readouterr().err
    assert len(whole.splitlines()) + sum(pairs(shard_file(out, Shard(1, 2))).values()) == 30


def test_a_writer_of_another_n_is_refused_while_one_of_the_same_n_runs_beside(
    inp: Path, tmp_path: Path, capsys
) -> None:
    out = tmp_path / "out" / "in.jsonl"
    busy = shard_file(out, Shard(0, 3))
    busy.parent.mkdir(parents=True)  # (out/in.shards)
    with JsonlAppender(busy, exclusive=True), serve() as srv:  # shard 0/3 is being written
        assert go(srv, inp, out, "--shard", "1/3") == 0
        for other in (["--shard", "0/4"], []):
            assert go(srv, inp, out, *other) == 2
            line = err_line(capsys.readouterr().err)
            assert f"another llmeval infer is writing {busy} (shard 0/3 of this run)" in line
        assert not shard_file(out, Shard(0, 4)).exists() and not out.exists()


def test_shard_flags_and_the_slurm_array(
    inp: Path, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out" / "in.jsonl"
    with serve() as srv:
        for flag, message in (
            ("3/3", "--shard: shard 3/3: K must be from 0 to N-1"),
            ("x", "--shard: 'x' is not K/N"),
            ("auto", "--shard auto: not in a Slurm array"),
        ):
            assert infer(srv.url, inp, out, "--shard", flag) == 2
            assert message in err_line(capsys.readouterr().err)
        assert infer(srv.url, inp, shard_file(out, Shard(0, 2))) == 2
        assert f"give the run's output ({out}) and --shard 0/2" in capsys.readouterr().err
        monkeypatch.setenv("SLURM_ARRAY_TASK_ID", "5")
        monkeypatch.setenv("SLURM_ARRAY_TASK_COUNT", "4")
        monkeypatch.setenv("SLURM_ARRAY_TASK_MIN", "2")
        assert infer(srv.url, inp, out) == 0  # inside an array, without the flag: 3/4
        assert "shard 3/4 (from Slurm array task 5 of 4)" in capsys.readouterr().err
        assert shard_file(out, Shard(3, 4)).exists() and not out.exists()
        assert infer(srv.url, inp, out, "--shard", "none") == 0
        assert out.exists()
        monkeypatch.setenv("SLURM_ARRAY_TASK_ID", "9")
        assert infer(srv.url, inp, out) == 2
        assert "give --shard K/N (or --shard none" in err_line(capsys.readouterr().err)


@pytest.mark.slow
def test_three_shard_processes_one_killed_and_rerun_make_the_unsharded_run(
    inp: Path, tmp_path: Path
) -> None:
    out, whole, n = tmp_path / "out" / "in.jsonl", tmp_path / "whole" / "in.jsonl", 8
    with serve(latency=0.15) as srv:

        def start(k: int) -> subprocess.Popen[bytes]:
            argv = [sys.executable, "-m", "llmeval", "infer", "--input", str(inp), "--output",
                    str(out), "--base-url", srv.url, "--n-samples", str(n), "--max-workers", "1",
                    "--shard", f"{k}/3"]  # fmt: skip
            env = {**os.environ, "PYTHONPATH": str(ROOT)}
            quiet = subprocess.DEVNULL
            return subprocess.Popen(argv, stdout=quiet, stderr=quiet, env=env)

        procs = [start(k) for k in range(3)]
        victim = shard_file(out, Shard(1, 3))
        deadline = time.monotonic() + 120
        while not (victim.exists() and victim.read_bytes().count(b"\n") >= 2):
            assert time.monotonic() < deadline and procs[1].poll() is None
            time.sleep(0.02)
        procs[1].send_signal(signal.SIGKILL)
        codes = [p.wait(120) for p in procs]
        assert codes[0] == codes[2] == 0 and codes[1] == -signal.SIGKILL
        assert 0 < sum(pairs(*shard_files(out, 3)).values()) < 6 * n  # the kill was mid-run
        assert start(1).wait(120) == 0
        assert infer(srv.url, inp, whole, "--n-samples", str(n)) == 0
    files = shard_files(out, 3)
    union = pairs(*files)
    assert len(union) == 6 * n and set(union.values()) == {1}  # every pair, once
    assert texts(*files) == texts(whole)
    # and eval over the shards folder scores the union as the unsharded run, figure for figure
    scored = [_scores(tmp_path, where) for where in (out.parent, whole)]
    assert scored[0]["complete"] and scored[0]["n_duplicates"] == 0
    assert scored[0] == scored[1]


def _scores(tmp_path: Path, where: Path) -> dict[str, Any]:
    """eval's figures of the one run at `where`, but the files they were read from."""
    result = tmp_path / "result.json"
    assert main(["eval", str(where), "--result-json", str(result), "--no-progress"]) == 0
    (task,) = json.loads(result.read_text())["tasks"]
    task["problems"].sort(key=lambda p: p["problem_id"])
    return {k: v for k, v in task.items() if k not in ("file", "files", "shards")}
