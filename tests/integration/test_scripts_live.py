"""The shell scripts against a real llama-server: start, sample, score, stop; nothing left over."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from scripts.local.llama_server import LlamaServer
from tests.integration.conftest import TINY, assert_complete, problems, records

pytestmark = pytest.mark.integration
SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def script_env(tmp_path: Path, **env: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if k not in ("MODEL", "ENGINE", "TASKS")}
    llmeval = f"{sys.executable} -m llmeval"
    return {**base, "PYTHON": sys.executable, "LLMEVAL": llmeval, **env}


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def served_models(base_url: str) -> list[str]:
    with urllib.request.urlopen(f"{base_url}/models", timeout=5) as resp:
        return [m["id"] for m in json.load(resp)["data"]]


def test_model_server_run_infer_get_scores(tiny_model: Path, tmp_path: Path) -> None:
    pid_file = tmp_path / "server.pid"
    env = script_env(
        tmp_path, ENGINE="llama.cpp", MODEL=str(tiny_model), SERVED_NAME=TINY, PORT="0",
        DETACH="1", PID_FILE=str(pid_file), LOG_FILE=str(tmp_path / "server.log"),
    )  # fmt: skip
    start = subprocess.run(
        ["bash", str(SCRIPTS / "model_server.sh")],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert start.returncode == 0, start.stderr
    pid = int(pid_file.read_text())
    try:
        base_url = start.stdout.strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        assert served_models(base_url) == [TINY]

        inputs = tmp_path / "in"
        aime, math = problems(inputs, "aime24", 3), problems(inputs, "math500", 2)
        infer_env = script_env(
            tmp_path, BASE_URLS=base_url, INPUT_DIR=str(inputs), TASKS="aime24 math500",
            N_SMALL="3", N_LARGE="2", MAX_TOKENS="24", MAX_WORKERS="4",
        )  # fmt: skip
        cmd = ["bash", str(SCRIPTS / "run_infer.sh")]
        first = subprocess.run(cmd, env=infer_env, cwd=tmp_path, capture_output=True, text=True)
        assert first.returncode == 0, first.stderr
        out = tmp_path / "output" / TINY  # MODEL asked from the server
        assert_complete(records(out / "aime24.jsonl"), [r["id"] for r in records(aime)], 3)
        assert_complete(records(out / "math500.jsonl"), [r["id"] for r in records(math)], 2)
        assert (out / "logs" / "aime24.log").is_file() and (out / "logs" / "math500.log").is_file()
        before = (out / "aime24.jsonl").read_bytes()
        again = subprocess.run(cmd, env=infer_env, cwd=tmp_path, capture_output=True, text=True)
        assert again.returncode == 0, again.stderr
        assert (out / "aime24.jsonl").read_bytes() == before  # resumed: nothing regenerated

        scores = subprocess.run(
            ["bash", str(SCRIPTS / "get_scores.sh"), str(out)],
            env=script_env(tmp_path), capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert scores.returncode == 0, scores.stderr
        result = json.loads((out / "scores.json").read_text())
        assert sorted(t["task"] for t in result["tasks"]) == ["aime24", "math500"]
        assert all(t["complete"] for t in result["tasks"])
    finally:
        stop = subprocess.run(
            ["bash", str(SCRIPTS / "model_server.sh"), "stop"], env=env, timeout=60, check=False
        )
    assert stop.returncode == 0 and not alive(pid) and not pid_file.exists()


def test_model_server_foreground_stops_on_sigterm(tiny_model: Path, tmp_path: Path) -> None:
    pid_file = tmp_path / "server.pid"
    env = script_env(
        tmp_path, ENGINE="llama.cpp", MODEL=str(tiny_model), PORT="0", PID_FILE=str(pid_file),
        LOG_FILE=str(tmp_path / "server.log"),
    )  # fmt: skip
    with subprocess.Popen(
        ["bash", str(SCRIPTS / "model_server.sh")], env=env, stdout=subprocess.PIPE, text=True
    ) as proc:
        assert proc.stdout is not None
        base_url = proc.stdout.readline().strip()
        pid = int(pid_file.read_text())
        assert served_models(base_url) == ["tiny"]  # default name: the file's stem
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 130
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(pid)


def test_model_server_reports_a_server_that_cannot_start(tmp_path: Path) -> None:
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"not a model")
    env = script_env(
        tmp_path, ENGINE="llama.cpp", MODEL=str(bad), PORT="0", DETACH="1",
        PID_FILE=str(tmp_path / "server.pid"), LOG_FILE=str(tmp_path / "server.log"),
    )  # fmt: skip
    proc = subprocess.run(
        ["bash", str(SCRIPTS / "model_server.sh")],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 4 and "exited before answering" in proc.stderr
    assert proc.stdout == "" and not (tmp_path / "server.pid").exists()


def test_llama_server_is_stopped_when_the_body_raises(llama_binary: Path, tiny_model: Path) -> None:
    server = LlamaServer(llama_binary, tiny_model, parallel=1)
    with pytest.raises(KeyError), server:
        pid = server.pid
        assert pid is not None and served_models(server.base_url) == ["tiny"]
        raise KeyError("the test body failed")
    assert server.pid is None and not alive(pid)


def test_demo_script_runs_resumes_and_stops_its_server(tiny_model: Path, tmp_path: Path) -> None:
    out = tmp_path / "demo"
    env = script_env(
        tmp_path, DEMO_MODEL=str(tiny_model), DEMO_PYTHON=sys.executable, DEMO_OUT=str(out),
        DEMO_N="2", DEMO_GPQA="3", DEMO_MAX_TOKENS="8",
    )  # fmt: skip
    cmd = ["bash", str(SCRIPTS / "demo.sh")]
    first = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert first.returncode == 0, first.stderr[-3000:]
    result = json.loads((out / "tiny" / "scores.json").read_text())
    assert {t["task"]: t["n_problems"] for t in result["tasks"]} == {
        "aime24": 30, "gpqa_diamond": 3,
    }  # fmt: skip
    assert all(t["complete"] for t in result["tasks"])
    assert not (out / "logs" / "server.pid").exists()  # the trap stopped the server
    report = out / "tiny" / "report.html"
    assert f"report       file://{report}" in first.stderr  # the summary names it
    assert "scripts/model_server.sh" in first.stderr and "resumes" in first.stderr
    files = [out / "tiny" / f"{task}.jsonl" for task in ("aime24", "gpqa_diamond")]
    before = [f.read_bytes() for f in files]
    report.unlink()
    again = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert again.returncode == 0, again.stderr[-3000:]
    assert [f.read_bytes() for f in files] == before  # resumed: nothing regenerated
    assert report.exists()  # the report is written again
