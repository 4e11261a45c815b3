"""The GPU scripts' argument handling and the engine command lines they build (DRY_RUN=1).

vLLM and SGLang cannot run here; what they would be started with is checked exactly.
"""

from __future__ import annotations

import ast
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.threaded_server import serve

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


def run(script: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if k not in ("MODEL", "ENGINE", "TASKS")}
    full_env.update(env)
    return subprocess.run(
        ["bash", str(SCRIPTS / script), *args],
        env=full_env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def lines(proc: subprocess.CompletedProcess[str]) -> list[list[str]]:
    assert proc.returncode == 0, proc.stderr
    return [shlex.split(line) for line in proc.stdout.splitlines()]


def flag(cmd: list[str], name: str) -> str:
    return cmd[cmd.index(name) + 1]


@pytest.mark.parametrize(
    "script", ["model_server.sh", "run_infer.sh", "get_scores.sh", "demo.sh", "slurm/submit.sh"]
)
def test_help(script: str) -> None:
    if script == "demo.sh":  # no --help: its header is its documentation
        assert "SmolLM2" in (SCRIPTS / script).read_text()
        return
    proc = run(script, "--help")
    assert proc.returncode == 0
    assert "Environment" in proc.stdout and "set -euo" not in proc.stdout


def test_vllm_command_line() -> None:
    proc = run(
        "model_server.sh", "command", ENGINE="vllm", MODEL="/models/Qwen3-8B", TP="2", DP="4",
        PORT="9000", MAX_MODEL_LEN="36000", GPU_MEM="0.85", EXTRA_ARGS="--reasoning-parser qwen3",
    )  # fmt: skip
    (cmd,) = lines(proc)
    assert cmd[1:3] == ["-m", "vllm.entrypoints.openai.api_server"]
    assert flag(cmd, "--model") == "/models/Qwen3-8B"
    assert flag(cmd, "--served-model-name") == "Qwen3-8B"
    assert flag(cmd, "--tensor-parallel-size") == "2"
    assert flag(cmd, "--data-parallel-size") == "4"
    assert flag(cmd, "--port") == "9000"
    assert flag(cmd, "--max-model-len") == "36000"
    assert flag(cmd, "--gpu-memory-utilization") == "0.85"
    assert cmd[-2:] == ["--reasoning-parser", "qwen3"]


def test_vllm_defaults_fit_32k_generations() -> None:
    (cmd,) = lines(run("model_server.sh", ENGINE="vllm", MODEL="org/m", DRY_RUN="1"))
    assert int(flag(cmd, "--max-model-len")) > 32768
    assert flag(cmd, "--data-parallel-size") == "1" and flag(cmd, "--host") == "127.0.0.1"


@pytest.mark.parametrize(
    ("dp", "router", "module"),
    [
        ("1", "", "sglang.launch_server"),
        ("8", "", "sglang_router.launch_server"),
        ("8", "0", "sglang.launch_server"),
    ],
)
def test_sglang_command_line(dp: str, router: str, module: str) -> None:
    env = {"ENGINE": "sglang", "MODEL": "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", "DP": dp}
    if router:
        env["SGLANG_ROUTER"] = router
    (cmd,) = lines(run("model_server.sh", "command", **env))
    assert flag(cmd, "-m") == module
    assert flag(cmd, "--model-path") == env["MODEL"]
    assert flag(cmd, "--served-model-name") == "DeepSeek-R1-Distill-Qwen-7B"
    assert flag(cmd, "--dp-size") == dp and flag(cmd, "--tp-size") == "1"
    assert flag(cmd, "--mem-fraction-static") == "0.90"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"ENGINE": "tgi", "MODEL": "m"}, "unknown ENGINE"),
        ({"ENGINE": "vllm"}, "set MODEL"),
        ({"ENGINE": "vllm", "MODEL": "m", "TP": "two"}, "TP must be a whole number"),
        ({"ENGINE": "llama.cpp", "DP": "2"}, "one CPU replica"),
    ],
)
def test_model_server_refuses_bad_settings(env: dict[str, str], message: str) -> None:
    proc = run("model_server.sh", "command", **env)
    assert proc.returncode == 2 and message in proc.stderr


def test_run_infer_recommended_settings() -> None:
    proc = run(
        "run_infer.sh", DRY_RUN="1", MODEL="org/Qwen3-8B", LLMEVAL="llmeval",
        BASE_URLS="http://gpu1:8000/v1, http://gpu2:8000/v1",
    )  # fmt: skip
    cmds = lines(proc)
    assert [flag(c, "--output") for c in cmds] == [
        f"output/Qwen3-8B/{t}.jsonl" for t in ("aime24", "aime25", "math500")
    ]
    assert [flag(c, "--n-samples") for c in cmds] == ["64", "64", "8"]
    for cmd in cmds:
        assert cmd[cmd.index("infer") - 1] == "llmeval"
        assert flag(cmd, "--temperature") == "0.6" and flag(cmd, "--top-p") == "0.95"
        assert flag(cmd, "--max-tokens") == "32768" and flag(cmd, "--model") == "org/Qwen3-8B"
        urls = [cmd[i + 1] for i, a in enumerate(cmd) if a == "--base-url"]
        assert urls == ["http://gpu1:8000/v1", "http://gpu2:8000/v1"]
        assert "--no-stream" not in cmd
        assert Path(flag(cmd, "--input")).name == Path(flag(cmd, "--output")).name
        assert Path(flag(cmd, "--input")).parent.name == "data"


def test_run_infer_overrides() -> None:
    proc = run(
        "run_infer.sh", "gpqa_diamond", DRY_RUN="1", N_SAMPLES="4", STREAM="0",
        OUTPUT_DIR="/runs/x", EXTRA_ARGS="--top-k 20", SYSTEM_PROMPT="Think hard.",
    )  # fmt: skip
    (cmd,) = lines(proc)
    assert flag(cmd, "--output") == "/runs/x/gpqa_diamond.jsonl"
    assert flag(cmd, "--n-samples") == "4" and "--no-stream" in cmd
    assert flag(cmd, "--system-prompt") == "Think hard." and cmd[-2:] == ["--top-k", "20"]


def test_run_infer_shard_effort_and_budget() -> None:
    env = {"DRY_RUN": "1", "MODEL": "m", "LLMEVAL": "llmeval"}
    (cmd,) = lines(run("run_infer.sh", "aime25", SHARD="2/8", REASONING_EFFORT="high",
                       THINKING_BUDGET="8192", **env))  # fmt: skip
    assert flag(cmd, "--shard") == "2/8" and flag(cmd, "--reasoning-effort") == "high"
    assert (
        flag(cmd, "--thinking-budget") == "8192"
        and flag(cmd, "--output") == "output/m/aime25.jsonl"
    )
    (cmd,) = lines(run("run_infer.sh", "aime25", **env))
    assert not {"--shard", "--reasoning-effort", "--thinking-budget"} & set(cmd)
    proc = run("run_infer.sh", THINKING_BUDGET="lots", **env)
    assert proc.returncode == 2 and "THINKING_BUDGET must be a whole number" in proc.stderr


def test_run_infer_tools() -> None:
    env = {"DRY_RUN": "1", "MODEL": "m", "LLMEVAL": "llmeval"}
    (cmd,) = lines(run("run_infer.sh", "aime25", TOOLS="python", MAX_TOOL_CALLS="4",
                       TOOL_TIMEOUT="5", TOOL_PROTOCOL="inline", **env))  # fmt: skip
    assert flag(cmd, "--tools") == "python" and flag(cmd, "--tool-protocol") == "inline"
    assert flag(cmd, "--max-tool-calls") == "4" and flag(cmd, "--tool-timeout") == "5"
    assert flag(cmd, "--output") == "output/m/tools-python/aime25.jsonl"
    (cmd,) = lines(run("run_infer.sh", "aime25", **env))
    assert "--tools" not in cmd and flag(cmd, "--output") == "output/m/aime25.jsonl"


def test_run_infer_refuses_bad_settings(tmp_path: Path) -> None:
    proc = run("run_infer.sh", N_SAMPLES="many", MODEL="m", DRY_RUN="1")
    assert proc.returncode == 2 and "N_SAMPLES must be a whole number" in proc.stderr
    proc = run("run_infer.sh", "nosuchtask", MODEL="m", INPUT_DIR=str(tmp_path))
    assert proc.returncode == 2 and "no problem file" in proc.stderr


def test_get_scores_picks_generation_files_only(tmp_path: Path) -> None:
    side = ("aime24.jsonl.verdicts.jsonl", "m.verdicts.export.jsonl")
    for name in ("aime24.jsonl", "math500.jsonl", *side):
        (tmp_path / name).write_text("")
    (cmd,) = lines(run("get_scores.sh", str(tmp_path), DRY_RUN="1", WORKERS="2"))
    i = cmd.index("eval")
    assert cmd[i + 1 : i + 3] == [str(tmp_path / "aime24.jsonl"), str(tmp_path / "math500.jsonl")]
    assert flag(cmd, "--result-json") == str(tmp_path / "scores.json")
    assert flag(cmd, "--workers") == "2"


def test_get_scores_takes_a_runs_shards_as_well(tmp_path: Path) -> None:
    (tmp_path / "aime24.jsonl").write_text("")
    for name in ("aime24.shards", "math500.shards"):
        (tmp_path / name).mkdir()
    (cmd,) = lines(run("get_scores.sh", str(tmp_path), DRY_RUN="1"))
    i = cmd.index("eval")
    names = ("aime24.jsonl", "aime24.shards", "math500.shards")
    assert cmd[i + 1 : i + 4] == [str(tmp_path / n) for n in names]
    (cmd,) = lines(run("get_scores.sh", str(tmp_path), DRY_RUN="1", TASKS="math500"))
    assert cmd[cmd.index("eval") + 1] == str(tmp_path / "math500.shards")


def test_get_scores_refuses_empty_or_missing(tmp_path: Path) -> None:
    assert "no generation files" in run("get_scores.sh", str(tmp_path)).stderr
    assert "no folder" in run("get_scores.sh", str(tmp_path / "nope")).stderr
    assert run("get_scores.sh").returncode == 2


ROOT = SCRIPTS.parent
BARE_PATH = "/usr/bin:/bin"  # no llmeval, a python3 without it (Debian's)


def test_run_infer_writes_no_password_into_its_log_or_messages(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "aime24.jsonl").write_text('{"id": "1", "problem": "1+1?", "answer": "2"}\n')
    env = {"TASKS": "aime24", "INPUT_DIR": str(data), "OUTPUT_DIR": str(tmp_path / "out"),
           "N_SAMPLES": "2", "LLMEVAL": f"{sys.executable} -m llmeval"}  # fmt: skip
    with serve() as srv:
        url = srv.url.replace("http://", "http://alice:s3cret-pw@")
        done = run("run_infer.sh", BASE_URLS=url, **env)
    assert done.returncode == 0, done.stderr
    log = (tmp_path / "out" / "logs" / "aime24.log").read_text()
    assert "--base-url http://***@127.0.0.1:" in log and "wrote 2 of 2 samples" in done.stdout
    refused = run("run_infer.sh", BASE_URLS="http://alice:s3cret-pw@127.0.0.1:9/v1", **env)
    assert refused.returncode == 4
    assert "no server answers at BASE_URLS (http://***@127.0.0.1:9/v1)" in refused.stderr
    dry = run("run_infer.sh", BASE_URLS=url, DRY_RUN="1", MODEL="m")
    scores = run("get_scores.sh", str(data), DRY_RUN="1",
                 EXTRA_ARGS=f"--judge-url {url} --judge-model j")  # fmt: skip
    assert "--base-url http://***@127.0.0.1:" in dry.stdout
    assert "--judge-url http://***@127.0.0.1:" in scores.stdout
    for text in (done.stdout, done.stderr, log, refused.stderr, dry.stdout, scores.stdout):
        assert "s3cret-pw" not in text


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _infer_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    (data / "aime24.jsonl").write_text('{"id": "1", "problem": "1+1?", "answer": "2"}\n')
    return {"TASKS": "aime24", "INPUT_DIR": str(data), "OUTPUT_DIR": str(tmp_path / "out"),
            "N_SAMPLES": "2", "LLMEVAL": f"{sys.executable} -m llmeval", **extra}  # fmt: skip


@pytest.mark.parametrize("model", ["", "m"])
def test_run_infer_before_the_server_is_up_says_so(tmp_path: Path, model: str) -> None:
    """It printed a Python traceback and 'set MODEL' (with MODEL set, one error per task)."""
    url = f"http://127.0.0.1:{_free_port()}/v1"
    done = run("run_infer.sh", **_infer_env(tmp_path, BASE_URLS=url, MODEL=model))
    assert done.returncode == 4, done.stderr
    assert f"no server answers at BASE_URLS ({url}): start one" in done.stderr
    assert "WAIT=SECONDS" in done.stderr
    assert "Traceback" not in done.stderr and "set MODEL" not in done.stderr
    assert not (tmp_path / "out").exists()


def test_run_infer_waits_for_the_server_and_passes_extra_body_whole(tmp_path: Path) -> None:
    """WAIT=SECONDS waits for /health while the server loads; EXTRA_BODY reaches the server as
    the JSON it is (EXTRA_ARGS split it at its spaces)."""
    import threading
    import time

    port = _free_port()
    extra = '{"chat_template_kwargs": {"enable_thinking": false}, "repetition_penalty": 1.05}'
    served: list[Any] = []

    def late_server() -> None:
        time.sleep(3)  # a server still loading its weights
        with serve(port=port) as srv:
            served.append(srv)
            while len(served) < 2:
                time.sleep(0.1)

    thread = threading.Thread(target=late_server, daemon=True)
    thread.start()
    env = _infer_env(tmp_path, BASE_URLS=f"http://127.0.0.1:{port}/v1", WAIT="60", EXTRA_BODY=extra)
    try:
        done = run("run_infer.sh", **env)
        assert done.returncode == 0, done.stderr
        assert "waiting for http://127.0.0.1:" in done.stderr and "wrote 2 of 2" in done.stdout
        bodies = served[0].server.bodies
        assert bodies and all(b["repetition_penalty"] == 1.05 for b in bodies)
        assert bodies[0]["chat_template_kwargs"] == {"enable_thinking": False}
    finally:
        served.append(None)
        thread.join(30)
    cmd = lines(run("run_infer.sh", DRY_RUN="1", MODEL="m", EXTRA_BODY=extra))[0]
    assert flag(cmd, "--extra-body") == extra


def test_the_scripts_say_which_llmeval_they_run_and_stop_without_one(tmp_path: Path) -> None:
    alone = tmp_path / "scripts"  # the scripts without the repository's .venv beside them
    alone.mkdir()
    for name in ("run_infer.sh", "get_scores.sh", "lib.sh"):
        shutil.copy(SCRIPTS / name, alone / name)
    for script, args in (("run_infer.sh", ["aime24"]), ("get_scores.sh", [str(tmp_path)])):
        env = {"PATH": BARE_PATH, "MODEL": "m"}
        done = subprocess.run(["bash", str(alone / script), *args], capture_output=True, text=True,
                              env=env, cwd=tmp_path, timeout=60)  # fmt: skip
        assert done.returncode == 2 and "error: no llmeval" in done.stderr, done.stderr
        assert "python3 (/usr/bin/python3) cannot import it" in done.stderr
    done = run("get_scores.sh", str(tmp_path), PATH=BARE_PATH)
    assert f"using {ROOT}/.venv/bin/python -m llmeval (llmeval " in done.stderr, done.stderr


def test_model_server_refuses_a_python_without_the_engine(tmp_path: Path) -> None:
    done = run("model_server.sh", ENGINE="vllm", MODEL="m", PYTHON="/usr/bin/python3", PORT="0",
               LOG_FILE=str(tmp_path / "s.log"), PID_FILE=str(tmp_path / "s.pid"))  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "PYTHON=/usr/bin/python3 (/usr/bin/python3 3." in done.stderr
    assert "cannot import vllm" in done.stderr and not (tmp_path / "s.pid").exists()


@pytest.mark.parametrize("traceback", [True, False])
def test_model_server_shows_the_whole_traceback_of_an_engine_that_dies(
    traceback: bool, tmp_path: Path
) -> None:
    fake = tmp_path / "python"  # a Python whose engine dies at start (with a long traceback)
    frames = "".join(f'  File "engine.py", line {i}, in frame{i}\\n' for i in range(40))
    head = "Traceback (most recent call last):" if traceback else "no traceback here"
    fake.write_text(
        '#!/bin/bash\n[[ "$1" == -c ]] && exec /usr/bin/python3 "$@"\n'
        f'printf "loading\\n%.0s" {{1..30}}\n'
        f'printf "{head}\\n{frames}"\n'
        'echo "RuntimeError: engine boom"; exit 1\n'
    )
    fake.chmod(0o755)
    done = subprocess.run(
        ["bash", str(SCRIPTS / "model_server.sh")], capture_output=True, text=True, cwd=ROOT,
        env={**os.environ, "ENGINE": "llama.cpp", "PYTHON": str(fake), "PORT": "0",
             "LOG_FILE": str(tmp_path / "s.log"), "PID_FILE": str(tmp_path / "s.pid")},
        timeout=60,
    )  # fmt: skip
    assert done.returncode == 4, done.stderr
    assert "starting llama.cpp with Python /usr/bin/python3 3." in done.stderr
    assert done.stderr.rstrip().endswith("RuntimeError: engine boom")
    assert ("in frame0" in done.stderr) == traceback  # else the log's last 20 lines
    assert ("Traceback (most recent call last):" in done.stderr) == traceback


@pytest.mark.parametrize("path", sorted((ROOT / "bench").glob("[bs]*_*.py")), ids=lambda p: p.stem)
def test_bench_and_stress_scripts_show_the_command_that_runs_them(path: Path) -> None:
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    assert f"python -m bench.{path.stem}" in doc and f"bench/{path.name}" not in doc
    if path.stem == "stress_faults":  # and that command does run (`python bench/x.py` did not)
        done = subprocess.run([sys.executable, "-m", f"bench.{path.stem}", "--help"], cwd=ROOT,
                              capture_output=True, text=True, timeout=60)  # fmt: skip
        assert done.returncode == 0, done.stderr


def test_run_infer_keeps_a_server_chosen_model_name_inside_output_and_hides_the_api_key(
    tmp_path: Path,
) -> None:
    """The folder is named after the model the server lists: `..` made it output/.. (the
    current folder); an --api-key in EXTRA_ARGS was printed into the log."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "aime24.jsonl").write_text('{"id": "1", "problem": "1+1?", "answer": "2"}\n')
    key = "sk-scr1pt-k3y"
    env = {**os.environ, "TASKS": "aime24", "INPUT_DIR": str(data), "N_SAMPLES": "1",
           "LLMEVAL": f"{sys.executable} -m llmeval", "EXTRA_ARGS": f"--api-key {key}",
           "PYTHONPATH": str(ROOT)}  # fmt: skip
    for name, folder in (("..", "_."), ("a/../..", "_."), ("/", "model"), ("x y", "x_y")):
        with serve(models=(name,)) as srv:
            script, here = ["bash", str(SCRIPTS / "run_infer.sh")], env | {"BASE_URLS": srv.url}
            done = subprocess.run(script, env=here, cwd=tmp_path, capture_output=True, text=True,
                                  timeout=120)  # fmt: skip
        assert done.returncode == 0, done.stderr
        out = tmp_path / "output" / folder
        assert (out / "aime24.jsonl").is_file(), (name, done.stderr)
        log = (out / "logs" / "aime24.log").read_text()
        assert "--api-key ***" in log
        assert key not in log + done.stdout + done.stderr
        shutil.rmtree(tmp_path / "output")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data"]  # nothing outside output/
    dry = run("run_infer.sh", DRY_RUN="1", MODEL="m", EXTRA_ARGS=f"--api-key={key}")
    assert "--api-key=***" in dry.stdout and key not in dry.stdout


def test_the_scripts_redact_hides_every_known_key_and_bearer_token_literally() -> None:
    """lib.sh's `redact` (run_infer.sh's messages and logs, get_scores.sh's and submit.sh's):
    the keys of $OPENAI_API_KEY, $LLMEVAL_JUDGE_API_KEY and of --api-key flags in EXTRA_ARGS,
    pattern characters and all, and any `Bearer <token>`; a line without a newline keeps none."""
    keys = {"OPENAI_API_KEY": "sk-o.p*e[n]1", "LLMEVAL_JUDGE_API_KEY": "jk-#&|(9)"}
    text = ("401: Authorization: Bearer abc-123, key sk-o.p*e[n]1 unknown; judge jk-#&|(9); "
            "flag ek-x/y+z; skXoXpXeXnX1 stays")  # fmt: skip
    done = subprocess.run(
        ["bash", "-c", f'source {SCRIPTS}/lib.sh; hide_key_flags --top-k 2 --api-key "$0"; '
         'printf %s "$1" | redact', "ek-x/y+z", text],
        env={**os.environ, **keys}, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert done.stdout == (
        "401: Authorization: Bearer ***, key *** unknown; judge ***; flag ***; skXoXpXeXnX1 stays"
    )
