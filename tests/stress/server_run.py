"""Server-side stress: `infer` as real processes against a loopback server that sends garbage
token counts, replies ignoring max_tokens, context-length rejections, choices out of order and
text after [DONE] (`tests/support/bad_replies.py`), streamed and whole; then `eval` on what was
written. Figures from the outputs and the processes' stderr.

Used by `bench/stress_server.py` and `tests/test_server_run.py`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from tests.stress.kill_storm import problems_file
from tests.support.threaded_server import serve

ROOT = Path(__file__).resolve().parents[2]
MODES = ("--stream", "--no-stream")


@dataclass
class Figures:
    """What one scenario did, over both modes."""

    name: str
    expected: int = 0
    samples: int = 0
    duplicated: int = 0
    tracebacks: int = 0
    exits: list[int] = field(default_factory=list)
    wrong_exits: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Every sample once, no traceback, every exit code the expected one."""
        clean = not (self.duplicated or self.tracebacks or self.wrong_exits)
        return clean and self.samples == self.expected


def _llmeval(figures: Figures, *argv: str, expect: int = 0) -> subprocess.CompletedProcess[str]:
    """`llmeval argv` as its own process; its exit code and tracebacks go into `figures`."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "llmeval", *argv], capture_output=True,
                          text=True, errors="replace", env=env, timeout=900)  # fmt: skip
    figures.tracebacks += done.stderr.count("Traceback")
    figures.exits.append(done.returncode)
    figures.wrong_exits += done.returncode != expect
    return done


def _infer(figures: Figures, url: str, inp: Path, out: Path, *flags: str, expect: int = 0) -> str:
    argv = ["infer", "--input", str(inp), "--output", str(out), "--base-url", url,
            "--max-workers", "16", "--retry-delay", "0.05", "--progress", "plain",
            "--progress-interval", "600", *flags]  # fmt: skip
    return _llmeval(figures, *argv, expect=expect).stderr


def _rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_bytes().splitlines()] if path.exists() else []


def _count(figures: Figures, path: Path, expected: int) -> list[dict[str, object]]:
    """Add the output's samples (and repeated pairs) to `figures`; its rows."""
    rows = _rows(path)
    keys = [(r["problem_id"], r["sample_idx"]) for r in rows]
    figures.expected += expected
    figures.samples += len(set(keys))
    figures.duplicated += len(keys) - len(set(keys))
    return rows


def _eval(figures: Figures, path: Path) -> None:
    code = _llmeval(figures, "eval", str(path), "--no-progress", "--workers", "1").returncode
    figures.notes.append(f"eval {path.stem}: exit {code}")


def usage_garbage(workdir: Path, n: int, problems: int) -> Figures:
    """Every reply's token counts are garbage: written without them, one warning, eval reads it."""
    fig, inp = Figures("usage garbage"), problems_file(workdir / "aime24.jsonl", problems)
    with serve(faults={"bad_usage": 1.0}) as srv:
        for mode in MODES:
            out = workdir / f"usage{mode}.jsonl"
            err = _infer(fig, srv.url, inp, out, "--n-samples", str(n), mode)
            rows = _count(fig, out, n * problems)
            kept = sum("usage" in r for r in rows)
            warned = f"{n * problems} replies carried token counts" in err
            fig.notes.append(f"{mode[2:]}: rows with a count {kept}, warned {warned}")
            _eval(fig, out)
    return fig


def oversized(workdir: Path, n: int, problems: int, huge_bytes: int = 64 << 20) -> Figures:
    """A quarter of the replies ignore max_tokens (64 MB each): cut at the default cap (1 MiB
    for --max-tokens 1024), marked, the largest line bounded; eval reads them as truncated."""
    fig, inp = Figures("oversized replies"), problems_file(workdir / "aime24.jsonl", problems)
    with serve(faults={"huge": 0.25}, huge_bytes=huge_bytes, fault_seed=1) as srv:
        for mode in MODES:
            out = workdir / f"huge{mode}.jsonl"
            _infer(fig, srv.url, inp, out, "--n-samples", str(n), "--max-tokens", "1024", mode)
            rows = _count(fig, out, n * problems)
            cut = sum(r.get("cut_by") == "max_reply_bytes" for r in rows)
            largest = max(map(len, out.read_bytes().splitlines()), default=0)
            fig.notes.append(f"{mode[2:]}: {cut} cut, largest line {largest / 2**20:.2f} MB")
            _eval(fig, out)
    return fig


def context(workdir: Path, n: int, problems: int) -> Figures:
    """A context too small for the longer prompts: exit 3 with one line, nothing written for
    them; a rerun asks again; with a long enough context the run completes."""
    fig, inp = Figures("context rejections"), problems_file(workdir / "aime24.jsonl", problems)
    for mode in MODES:
        out = workdir / f"context{mode}.jsonl"
        args = ["--n-samples", str(n), "--max-tokens", "1024", mode]
        with serve(max_context=1024 + 95) as srv:
            err = _infer(fig, srv.url, inp, out, *args, expect=3)
            lines = [ln for ln in err.splitlines() if "refused them for context length" in ln]
            refused = n * problems - len(_rows(out))
            _infer(fig, srv.url, inp, out, *args, expect=3)
            again = srv.stats["POST /v1/chat/completions"] - n * problems
        with serve() as srv:
            _infer(fig, srv.url, inp, out, *args)
            asked = srv.stats["completions"]
        _count(fig, out, n * problems)
        fig.notes.append(f"{mode[2:]}: {refused} refused ({len(lines)} error line), "
                         f"asked again {again}, then {asked} with a longer context")  # fmt: skip
    return fig


def disorder(workdir: Path, n: int, problems: int) -> Figures:
    """Choices out of index order and text after [DONE] (a third of replies each): every sample
    the same as against a clean server."""
    fig, inp = (
        Figures("choices out of order, text after [DONE]"),
        problems_file(workdir / "aime24.jsonl", problems),
    )
    faults = {"disorder": 0.34, "after_done": 0.5}
    for mode in MODES:
        texts = []
        for rates in ({}, faults):
            out = workdir / f"order{mode}{bool(rates)}.jsonl"
            with serve(faults=rates) as srv:
                _infer(fig, srv.url, inp, out, "--n-samples", str(n), mode)
            rows = _count(fig, out, n * problems)
            texts.append({(r["problem_id"], r["sample_idx"]): r["gen"] for r in rows})
        differ = sum(texts[0].get(k) != v for k, v in texts[1].items())
        fig.notes.append(f"{mode[2:]}: {differ} samples differ from the clean run")
        fig.duplicated += differ  # a wrong text counts against the run like a duplicate
    return fig


SCENARIOS = (usage_garbage, oversized, context, disorder)


def describe(fig: Figures) -> str:
    """A scenario's figures in a few lines."""
    return "\n".join([
        f"{fig.name}: {fig.samples}/{fig.expected} samples, duplicated or wrong {fig.duplicated}, "
        f"tracebacks {fig.tracebacks}, exits {fig.exits}",
        *(f"  {note}" for note in fig.notes),
    ])  # fmt: skip
