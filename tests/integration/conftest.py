"""Real llama-server fixtures: the binary (built once, cached), the tiny random model, SmolLM2.

Every test here is marked `integration`; servers are stopped on every exit path and the session
ends by checking that no server it started is still running.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scripts.local.llama_build import ensure_llama_server
from scripts.local.llama_server import LlamaServer
from scripts.local.server_process import running_servers
from scripts.local.smollm import SMOLLM2_NAME, ensure_smollm2
from scripts.local.tiny_model import write_tiny_model

DATA = Path(__file__).resolve().parents[2] / "data"
TINY = "tiny-random"


@pytest.fixture(scope="session", autouse=True)
def no_server_left(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """After the session: no LlamaServer running and no process using this session's files."""
    base = str(tmp_path_factory.getbasetemp())
    yield
    assert not running_servers(), "a server was not stopped"
    time.sleep(0.2)
    left = subprocess.run(["pgrep", "-af", base], capture_output=True, text=True, check=False)
    assert "llama-server" not in left.stdout, f"servers left running:\n{left.stdout}"


@pytest.fixture(scope="session")
def llama_binary() -> Path:
    return ensure_llama_server()


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_model(tmp_path_factory.mktemp("models") / "tiny.gguf")


@pytest.fixture(scope="session")
def tiny_server(
    llama_binary: Path, tiny_model: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LlamaServer]:
    log = tmp_path_factory.mktemp("logs") / "tiny-server.log"
    with LlamaServer(
        llama_binary, tiny_model, alias=TINY, parallel=4, ctx_per_slot=2048, log_path=log
    ) as server:
        yield server


@pytest.fixture(scope="session")
def smollm_server(
    llama_binary: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LlamaServer]:
    log = tmp_path_factory.mktemp("logs") / "smollm-server.log"
    model = ensure_smollm2()
    with LlamaServer(
        llama_binary, model, alias=SMOLLM2_NAME, parallel=2, ctx_per_slot=1024, log_path=log
    ) as server:
        yield server


def problems(folder: Path, task: str, count: int) -> Path:
    """The first `count` problems of a shipped benchmark, as `folder/<task>.jsonl`."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = (DATA / f"{task}.jsonl").read_text().splitlines()[:count]
    path = folder / f"{task}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def infer_cmd(
    inp: Path, out: Path, base_url: str, *, n: int, max_tokens: int, model: str = TINY, **flags: Any
) -> list[str]:
    """`python -m llmeval infer ...`; more flags as keywords (`seed=3`, `stream=False`)."""
    cmd = [sys.executable, "-m", "llmeval", "infer", "--input", str(inp), "--output", str(out)]
    cmd += ["--base-url", base_url, "--model", model, "--n-samples", str(n)]
    cmd += ["--max-tokens", str(max_tokens), "--max-workers", str(flags.pop("workers", 4))]
    if flags.pop("stream", True) is False:
        cmd.append("--no-stream")
    for name, value in flags.items():
        cmd += [f"--{name.replace('_', '-')}", str(value)]
    return cmd


def run(cmd: list[str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)


def run_ok(cmd: list[str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    proc = run(cmd, timeout)
    assert proc.returncode == 0, f"{cmd[3]} exited {proc.returncode}:\n{proc.stderr[-3000:]}"
    return proc


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def eval_result(*files: Path, result: Path) -> dict[str, Any]:
    """Run `llmeval eval` on the files and return its JSON result."""
    cmd = [sys.executable, "-m", "llmeval", "eval", *map(str, files)]
    run_ok([*cmd, "--result-json", str(result)])
    return json.loads(result.read_text())


def task_result(result: dict[str, Any], task: str) -> dict[str, Any]:
    (found,) = [t for t in result["tasks"] if t["task"] == task]
    return found


def assert_complete(recs: list[dict[str, Any]], problem_ids: list[str], n: int) -> None:
    """Exactly n samples per problem, sample_idx 0..n-1, no duplicates."""
    keys = [(r["problem_id"], r["sample_idx"]) for r in recs]
    assert len(keys) == len(set(keys)), "duplicate (problem_id, sample_idx)"
    assert sorted(keys) == sorted((p, i) for p in problem_ids for i in range(n))
