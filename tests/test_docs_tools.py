"""Every command docs/tools.md shows is run here, as written: `llmeval ...` in-process against
the loopback server playing a model that runs Python (its URL in place of the page's), the
script with its DRY_RUN, and `docker` by a stand-in that runs what follows the image
(tests/test_docs.py runs the page's bash blocks too, against a server that calls no tool)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

from llmeval.cli.main import main
from tests.infer_helpers import ROOT, rows
from tests.support.fake_model import load_answers
from tests.support.threaded_server import serve

PAGE = ROOT / "docs" / "tools.md"
PAGE_URL = "http://127.0.0.1:8000/v1"


def commands() -> list[str]:
    """The commands of the page's bash blocks, continuation lines joined."""
    found, block = [], None
    for line in PAGE.read_text().splitlines():
        if line.startswith("```"):
            block = [] if line in ("```bash", "```shell") and block is None else None
            continue
        if block is not None:
            block.append(line)
            if not line.endswith("\\"):
                found.append(" ".join(part.rstrip("\\").strip() for part in block))
                block = []
    return found


def _stand_in_docker(folder: Path) -> None:
    """`docker run [options] IMAGE COMMAND...`: runs COMMAND here (python3 on its PATH)."""
    python_bin = Path(sys.executable).resolve().parent
    script = folder / "docker"
    script.write_text(
        "#!/bin/sh\nshift\nwhile [ $# -gt 0 ]; do case $1 in\n"
        "  --memory|--network) shift 2;;\n  -*) shift;;\n  *) shift; break;;\nesac; done\n"
        f'PATH={python_bin}:$PATH exec "$@"\n'
    )
    script.chmod(0o755)


def test_every_command_of_the_page_runs(tmp_path, monkeypatch):
    listed = commands()
    assert len(listed) == 4, listed
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").symlink_to(ROOT / "data")
    (tmp_path / "scripts").symlink_to(ROOT / "scripts")
    _stand_in_docker(tmp_path)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    with serve(tools=True, answers=load_answers(ROOT / "data" / "aime24.jsonl")) as srv:
        for command in listed:
            argv = shlex.split(command.replace(PAGE_URL, srv.url))
            if argv[0] == "llmeval":
                assert main(argv[1:]) == 0, command
            else:  # the script, DRY_RUN=1 as shown
                env_words = [w for w in argv if "=" in w and w.split("=")[0].isupper()]
                env = dict(w.split("=", 1) for w in env_words)
                args = argv[len(env_words) :]
                done = subprocess.run(args, env={**os.environ, **env, "LLMEVAL": "llmeval"},
                                      capture_output=True, text=True)  # fmt: skip
                assert done.returncode == 0, done.stderr
                assert "--tools python --tool-protocol inline --max-tool-calls 4" in done.stdout
    native = rows(tmp_path / "output" / "m" / "tools-python" / "aime24.jsonl")
    assert len(native) == 30 and all(r["tool_calls"][0]["status"] == "ok" for r in native)
    docker = rows(tmp_path / "output" / "m" / "tools-docker" / "aime24.jsonl")
    assert len(docker) == 30 and all(r["tool_calls"][0]["status"] == "ok" for r in docker)
    spec = json.loads((tmp_path / "output/m/tools-docker/aime24.jsonl.spec.json").read_text())
    assert spec["sandbox"]["isolation"] == "command"
    assert spec["tools"]["sandbox_cmd"].startswith("docker run --rm -i --network none")
