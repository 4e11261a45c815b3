"""scripts/slurm/: what submit.sh would submit and each array task run (DRY_RUN=1, no sbatch
here), and an array task run for real with the loopback server as its engine: its server
starts, its shard is written, and the server stops however the task ends."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from llmeval.runs.layout import shard_file
from llmeval.runs.pairs import Shard
from tests.test_scripts import ROOT, SCRIPTS, flag, run

DRY = {"DRY_RUN": "1", "LLMEVAL": "llmeval", "PATH": "/usr/bin:/bin"}  # no sbatch on this PATH


def test_submit_dry_run_shows_the_jobs_and_what_each_task_runs() -> None:
    proc = run(
        "slurm/submit.sh", MODEL="/models/Qwen3-8B", SHARDS="3", TASKS="aime24 math500",
        OUTPUT_DIR="/shared/q8", SBATCH_ARGS="--partition gpu", DP="8",
        SERVER_ARGS="--reasoning-parser qwen3", INFER_ARGS="--top-k 20", REASONING_EFFORT="high",
        **DRY,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    array, score = shlex.split(out[0]), shlex.split(out[1])
    assert array[:3] == ["sbatch", "--parsable", "--array=0-2"] and "--partition" in array
    assert array[-1] == str(SCRIPTS / "slurm" / "infer_array.sbatch")
    assert "--dependency=afterany:ARRAY_JOB_ID" in score and score[-1].endswith("score.sbatch")
    tasks = [i for i, line in enumerate(out) if line.startswith("# array task")]
    assert [out[i] for i in tasks] == [
        f"# array task {k} of 3 = shard {k}/3: its server, then its shard of each task"
        for k in range(3)
    ]
    for i in tasks:
        server, *infers = (shlex.split(line) for line in out[i + 1 : i + 4])
        assert flag(server, "-m") == "vllm.entrypoints.openai.api_server"
        assert flag(server, "--data-parallel-size") == "8"
        assert server[-2:] == ["--reasoning-parser", "qwen3"]
        outputs = [flag(c, "--output") for c in infers]
        assert outputs == ["/shared/q8/aime24.jsonl", "/shared/q8/math500.jsonl"]
        for cmd in infers:
            assert flag(cmd, "--shard") == "auto" and flag(cmd, "--model") == "Qwen3-8B"
            assert flag(cmd, "--base-url") == f"http://127.0.0.1:{flag(server, '--port')}/v1"
            assert flag(cmd, "--reasoning-effort") == "high" and cmd[-2:] == ["--top-k", "20"]
    assert out[-2:] == [
        f"{SCRIPTS}/get_scores.sh /shared/q8",
        "llmeval report /shared/q8 --out /shared/q8/report.html",
    ]


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({}, "set MODEL"),
        ({"MODEL": "m", "SHARDS": "0"}, "SHARDS must be a whole number from 1"),
        ({"MODEL": "m", "SHARDS": "1e3"}, "SHARDS must be a whole number from 1"),
        ({"MODEL": "m", "SHARDS": "1234567890"}, "SHARDS must be a whole number from 1"),
        ({"MODEL": "m"}, "no sbatch on PATH"),
    ],
)
def test_submit_refuses(env: dict[str, str], message: str) -> None:
    proc = run("slurm/submit.sh", PATH="/usr/bin:/bin", **env)
    assert proc.returncode == 2 and message in proc.stderr


@pytest.mark.parametrize(("shards", "array"), [("08", "0-7"), ("010", "0-9"), ("3", "0-2")])
def test_submit_reads_shards_in_decimal_as_the_shard_flag_does(shards: str, array: str) -> None:
    """SHARDS=08 was a bash error (octal) and SHARDS=010 submitted --array=0-7."""
    proc = run("slurm/submit.sh", MODEL="m", SHARDS=shards, **DRY)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert f"--array={array}" in proc.stdout.splitlines()[0]
    count = int(array.split("-")[1]) + 1
    assert proc.stdout.count("# array task ") == count and f" of {count} = shard" in proc.stdout


@pytest.mark.parametrize(("model", "folder"), [("..", "_."), ("a/../..", "_."), ("/", "model"),
                                               ("org/Qwen3-8B", "Qwen3-8B")])  # fmt: skip
def test_submit_keeps_the_output_folder_inside_output(model: str, folder: str) -> None:
    """MODEL=.. wrote into the current folder (output/..): the folder is named as run_infer.sh
    names it."""
    proc = run("slurm/submit.sh", MODEL=model, SHARDS="1", **DRY)
    outputs = {flag(shlex.split(line), "--output") for line in proc.stdout.splitlines()
               if " infer " in line}  # fmt: skip
    assert proc.returncode == 0 and outputs, proc.stderr
    assert {str(Path(o).parent) for o in outputs} == {f"{Path.cwd()}/output/{folder}"}


def test_an_array_task_outside_an_array_refuses(tmp_path: Path) -> None:
    proc = run("slurm/infer_array.sbatch", OUTPUT_DIR=str(tmp_path), LLMEVAL_ROOT=str(ROOT))
    assert proc.returncode != 0 and "not a Slurm array task" in proc.stderr


def _fake_engine(tmp_path: Path) -> Path:
    """A Python that runs the loopback test server where model_server.sh starts llama.cpp."""
    fake = tmp_path / "python"
    fake.write_text(
        f"#!{sys.executable}\n"
        "import os, sys\n"
        "args = sys.argv[1:]\n"
        "if args[:2] == ['-m', 'scripts.local.llama_server']:\n"
        "    port = args[args.index('--port') + 1]\n"
        "    model = args[args.index('--alias') + 1]\n"
        "    slow = args[args.index('--latency') :][:2] if '--latency' in args else []\n"
        "    args = ['-m', 'tests.support.openai_server', '--port', port, '--model', model]\n"
        "    args += slow\n"
        f"os.execv({sys.executable!r}, [{sys.executable!r}, *args])\n"
    )
    fake.chmod(0o755)
    return fake


def _alive(marker: str) -> list[int]:
    """Processes whose command line holds `marker` (the test's own model name)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.mark.slow
@pytest.mark.parametrize("ending", ["done", "failed", "SIGTERM"])
def test_an_array_task_stops_its_server_however_it_ends(ending: str, tmp_path: Path) -> None:
    data, out = tmp_path / "data", tmp_path / "out"
    data.mkdir()
    (data / "aime24.jsonl").write_text((ROOT / "data" / "aime24.jsonl").read_text())
    marker = f"m-{os.getpid()}-{tmp_path.name}"
    env = {
        **os.environ, "LLMEVAL_ROOT": str(ROOT), "OUTPUT_DIR": str(out), "INPUT_DIR": str(data),
        "SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "2", "SLURM_ARRAY_JOB_ID": "77",
        "ENGINE": "llama.cpp", "PYTHON": str(_fake_engine(tmp_path)), "SERVED_NAME": marker,
        "TASKS": "nosuchtask" if ending == "failed" else "aime24", "N_SAMPLES": "2",
        "LLMEVAL": f"{sys.executable} -m llmeval", "PYTHONPATH": str(ROOT),
        "SERVER_ARGS": "--latency 0.3" if ending == "SIGTERM" else "", "MAX_WORKERS": "1",
    }  # fmt: skip
    script = SCRIPTS / "slurm" / "infer_array.sbatch"
    task = subprocess.Popen(
        ["bash", str(script)], env=env, cwd=ROOT, stderr=subprocess.PIPE, text=True
    )
    shard = shard_file(out / "aime24.jsonl", Shard(1, 2))
    try:
        if ending == "SIGTERM":  # as scancel signals the batch shell
            deadline = time.monotonic() + 120
            while not (shard.exists() and shard.read_bytes().count(b"\n") >= 2):
                assert time.monotonic() < deadline and task.poll() is None
                time.sleep(0.05)
            task.send_signal(signal.SIGTERM)
        _, err = task.communicate(timeout=180)
    finally:
        for pid in _alive(marker):  # (only if the script failed to)
            os.kill(pid, signal.SIGKILL)
    assert {"done": 0, "failed": 2, "SIGTERM": 143}[ending] == task.returncode, err
    assert "server http://127.0.0.1:" in err
    assert not _alive(marker), "the server (or the shard) outlived its array task"
    assert not (out / "logs" / "server-77-1.pid").exists()
    if ending != "failed":
        ids = [json.loads(line)["id"] for line in (data / "aime24.jsonl").read_text().splitlines()]
        owned = {(i, k) for i in ids for k in range(2) if Shard(1, 2).owns(i, k)}
        written = [json.loads(line) for line in shard.read_bytes().splitlines()]
        keys = {(r["problem_id"], r["sample_idx"]) for r in written}
        assert len(keys) == len(written) and keys <= owned and keys
        assert (keys == owned) == (ending == "done")
