"""Shared helpers of the infer and client tests: run the real CLI, read outputs, fresh logging."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from llmeval.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
AIME24 = ROOT / "data" / "aime24.jsonl"
# Quick retries and no progress lines: tests never wait on a real backoff.
FAST = ["--retry-delay", "0.01", "--retry-max-delay", "0.05", "--progress", "plain",
        "--progress-interval", "60"]  # fmt: skip


def infer(url: str | None, inp: Path | str, out: Path | str, *extra: str) -> int:
    """Run `llmeval infer` in-process."""
    argv = ["infer", "--input", str(inp), "--output", str(out), *FAST, *extra]
    if url:
        argv += ["--base-url", url]
    return main(argv)


def rows(path: Path) -> list[dict[str, Any]]:
    """Every line of a JSONL file, parsed."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def counts(path: Path) -> Counter[str]:
    """Samples per problem id, asserting no (problem, sample) pair repeats."""
    keys = [(r["problem_id"], r["sample_idx"]) for r in rows(path)]
    assert len(keys) == len(set(keys)), "duplicate (problem, sample) pairs"
    return Counter(pid for pid, _ in keys)


def write_jsonl(path: Path, items: list[dict[str, Any]]) -> Path:
    """Write dicts as JSONL."""
    path.write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    return path


def err_line(stderr: str) -> str:
    """The one `llmeval infer: error: ...` line of a run's stderr (and no traceback)."""
    assert "Traceback" not in stderr
    found = [line for line in stderr.splitlines() if line.startswith("llmeval infer: error: ")]
    assert len(found) == 1, stderr
    return found[0]
