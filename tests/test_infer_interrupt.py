"""Interrupted runs as real processes: SIGTERM flushes, exits 130; SIGKILL loses no whole line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.infer_helpers import AIME24, FAST, ROOT, counts, infer, rows
from tests.support.threaded_server import serve


def _start(url: str, out: Path, *extra: str) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "llmeval", "infer", "--input", str(AIME24), "--output", str(out),
            "--base-url", url, "--n-samples", "4", "--max-workers", "4", *FAST, *extra]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )


def _wait_for_lines(out: Path, k: int, proc: subprocess.Popen[str], limit: float = 30) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and proc.poll() is None:
        if out.exists() and out.read_bytes().count(b"\n") >= k:
            return
        time.sleep(0.02)
    raise AssertionError(f"never saw {k} lines (exit {proc.poll()})")


def test_sigterm_flushes_exits_130_and_a_rerun_completes(tmp_path: Path) -> None:
    out = tmp_path / "o.jsonl"
    with serve(latency=0.05) as srv:
        proc = _start(srv.url, out)
        _wait_for_lines(out, 8, proc)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 130, err
        assert "interrupted" in err and "Traceback" not in err
        kept = rows(out)  # every line whole
        assert 8 <= len(kept) < 120
        assert infer(srv.url, AIME24, out, "--n-samples", "4") == 0
    assert set(counts(out).values()) == {4} and len(counts(out)) == 30


def test_killed_run_with_a_torn_line_resumes_to_exactly_n(tmp_path: Path) -> None:
    out = tmp_path / "o.jsonl"
    with serve(latency=0.05) as srv:
        proc = _start(srv.url, out)
        _wait_for_lines(out, 6, proc)
        proc.kill()
        proc.communicate(timeout=30)
        data = out.read_bytes()
        whole = data[: data.rstrip(b"\n").rfind(b"\n") + 1]
        out.write_bytes(whole + data[len(whole) : len(whole) + 50])  # tear the last line
        assert infer(srv.url, AIME24, out, "--n-samples", "4") == 0
    per = counts(out)
    assert len(per) == 30 and set(per.values()) == {4}
    for pid in per:
        assert sorted(r["sample_idx"] for r in rows(out) if r["problem_id"] == pid) == [0, 1, 2, 3]


def test_server_command_line_prints_its_url_first(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "tests.support.openai_server", "--port", "0",
            "--answers", str(AIME24), "--accuracy", "1.0"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    server = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        out = tmp_path / "o.jsonl"
        assert infer(url, AIME24, out, "--n-samples", "1") == 0
        assert all(f"\\boxed{{{r['answer']}}}" in r["gen"] for r in rows(out))
    finally:
        server.terminate()
        server.wait(10)


def test_upstream_entry_point_runs_infer(tmp_path: Path) -> None:
    out = tmp_path / "o.jsonl"
    with serve() as srv:
        argv = [sys.executable, "-m", "llmeval.inference.online", "--input_file", str(AIME24),
                "--output_file", str(out), "--base_url", srv.url, "--model_name", "test-model",
                "--n_samples", "1", "--max_workers", "8", "--progress-interval", "60"]  # fmt: skip
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "wrote 30 of 30 samples" in done.stdout and len(rows(out)) == 30
