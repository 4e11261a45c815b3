"""A wheel installed (not editable) into a fresh venv scores a file exactly as this checkout
does, the MATH-500 subject and level tables included: the data files ship in the package."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

from llmeval.cli.main import main
from llmeval.tasks import DATA_DIR
from tests.support.synthetic import math500_run, write_jsonl

ROOT = Path(__file__).resolve().parent.parent


def _comparable(result: dict) -> dict:
    """The scores without what differs by install (file paths, the cache file list)."""
    for task in result["tasks"]:
        task.pop("file")
        task.pop("problems_file")  # the wheel's own data file (its SHA-256 stays compared)
    result.pop("cache")
    return result


@pytest.mark.slow
def test_a_wheel_in_a_fresh_venv_scores_like_the_checkout(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    build = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation"]
    subprocess.run([*build, "-w", str(dist), str(ROOT)], check=True, capture_output=True)
    (wheel,) = dist.glob("llmeval-*.whl")
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    site = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True, capture_output=True, text=True,
        ).stdout.strip()
    )  # fmt: skip
    # The wheel's files unpacked into the new venv (what pip does for a pure wheel); the
    # dependencies come from this venv, added after it (its editable-install hook is not run).
    subprocess.run([sys.executable, "-m", "zipfile", "-e", str(wheel), str(site)], check=True)
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")

    rows = math500_run(12, 2, 600, seed=5)
    for row in rows:  # subject and level must come from the shipped data file
        row.pop("meta", None)
    data = write_jsonl(tmp_path / "math500.jsonl", rows)
    here, there = tmp_path / "here.json", tmp_path / "there.json"
    assert main(["-q", "eval", str(data), "--no-progress", "--result-json", str(here)]) == 0
    cmd = [python, "-m", "llmeval", "-q", "eval", str(data), "--no-progress", "--no-cache"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [*cmd, "--result-json", str(there)], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    origin = subprocess.run(
        [python, "-c", "import llmeval; print(llmeval.__file__)"],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert origin.startswith(str(site)), origin  # the wheel's copy ran, not this checkout
    mine, theirs = (_comparable(json.loads(p.read_text())) for p in (here, there))
    assert mine == theirs
    assert mine["tasks"][0]["by_subject"] and mine["tasks"][0]["by_level"]
    assert (DATA_DIR / "math500.jsonl").exists()
