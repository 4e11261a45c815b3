"""Killed mid-run against a real llama-server (the server, then the client); resume completes."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest

from scripts.local.llama_server import LlamaServer
from tests.integration.conftest import assert_complete, infer_cmd, problems, records, run, run_ok

pytestmark = pytest.mark.integration

N = 4


def line_count(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def wait_for_lines(path: Path, count: int, proc: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while line_count(path) < count:
        assert proc.poll() is None, f"infer ended early ({proc.returncode})"
        assert time.monotonic() < deadline, f"fewer than {count} lines after {timeout} s"
        time.sleep(0.05)


@pytest.fixture
def own_server(llama_binary: Path, tiny_model: Path, tmp_path: Path):
    """A server this test may kill and restart (same port)."""
    server = LlamaServer(
        llama_binary, tiny_model, alias="tiny-random", parallel=2, ctx_per_slot=1024,
        log_path=tmp_path / "server.log",
    )  # fmt: skip
    try:
        yield server.start()
    finally:
        server.stop()


def test_server_killed_mid_run_then_resume(own_server: LlamaServer, tmp_path: Path) -> None:
    inp = problems(tmp_path / "in", "math500", 12)
    out = tmp_path / "math500.jsonl"
    cmd = infer_cmd(inp, out, own_server.base_url, n=N, max_tokens=96, workers=2, max_retries=1)
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        wait_for_lines(out, 6, proc)
        own_server.kill()  # SIGKILL: requests in flight die with it
        _, err = proc.communicate(timeout=300)
    # 3: samples failed, 4: every server unreachable. Either way: incomplete, rerun to resume.
    assert proc.returncode in (3, 4), err[-2000:]
    done = line_count(out)
    assert 6 <= done < 12 * N

    own_server.start()
    run_ok(infer_cmd(inp, out, own_server.base_url, n=N, max_tokens=96, workers=2))
    assert_complete(records(out), [r["id"] for r in records(inp)], N)


def test_client_killed_mid_run_then_resume(own_server: LlamaServer, tmp_path: Path) -> None:
    inp = problems(tmp_path / "in", "aime24", 10)
    out = tmp_path / "aime24.jsonl"
    cmd = infer_cmd(inp, out, own_server.base_url, n=N, max_tokens=96, workers=2)
    for sig, lines in ((signal.SIGKILL, 5), (signal.SIGTERM, 15)):
        with subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) as proc:
            wait_for_lines(out, lines, proc)
            proc.send_signal(sig)
            proc.wait(timeout=60)
        assert proc.returncode == (-signal.SIGKILL if sig == signal.SIGKILL else 130)
    assert line_count(out) < 10 * N
    result = run(cmd)
    assert result.returncode == 0, result.stderr[-2000:]
    assert_complete(records(out), [r["id"] for r in records(inp)], N)
    # Raising n adds samples and redoes none.
    before = records(out)
    run_ok(infer_cmd(inp, out, own_server.base_url, n=N + 2, max_tokens=96, workers=2))
    after = records(out)
    assert after[: len(before)] == before
    assert_complete(after, [r["id"] for r in records(inp)], N + 2)
