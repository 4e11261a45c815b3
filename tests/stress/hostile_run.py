"""Run hostile generations through extraction, the verifier pool and the real `eval` and
`report` commands; measure time per sample, verifier memory, crashes and payload files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from llmeval.evaluate.extract import extract_math
from llmeval.evaluate.policy_answers import extract_choice
from llmeval.verify.pool import VerifyPool
from llmeval.verify.queue import VerifyResult, VerifyTask
from llmeval.verify.verifier import exact_status, verdict_key
from tests.stress.hostile import HTML, choice_rows, math_rows

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class HostileRun:
    """Figures of one hostile run."""

    samples: int = 0
    verified: int = 0  # distinct pairs that went to the verifier pool
    deadline_s: float = 0.0
    max_extract_s: float = 0.0
    max_verify_s: float = 0.0
    statuses: dict[str, int] = field(default_factory=dict)
    max_worker_mb: float = 0.0
    crashes: list[str] = field(default_factory=list)
    payload_files: list[str] = field(default_factory=list)
    eval_s: float = 0.0
    report_s: float = 0.0


def write_files(folder: Path, marker: Path, per_kind: int | None) -> tuple[Path, Path]:
    """The math and GPQA files (json.dumps escapes lone surrogates as `\\ud800`)."""
    math_file, choice_file = folder / "aime24_hostile.jsonl", folder / "gpqa_diamond_hostile.jsonl"
    for path, rows in (
        (math_file, math_rows(marker, per_kind)),
        (choice_file, choice_rows(marker, per_kind)),
    ):
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return math_file, choice_file


class PeakMemory:
    """Samples the peak RSS (VmHWM) of every descendant process every 50 ms."""

    def __init__(self) -> None:
        self.peak_kb = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        me = os.getpid()
        while not self._stop.wait(0.05):
            parents: dict[int, int] = {}
            hwm: dict[int, int] = {}
            for entry in Path("/proc").iterdir():
                if not entry.name.isdigit():
                    continue
                try:
                    status = (entry / "status").read_text()
                except OSError:
                    continue
                fields = dict(ln.split(":", 1) for ln in status.splitlines() if ":" in ln)
                parents[int(entry.name)] = int(fields.get("PPid", "0").strip())
                if "VmHWM" in fields:
                    hwm[int(entry.name)] = int(fields["VmHWM"].split()[0])
            for pid, kb in hwm.items():
                p, hops = parents.get(pid, 0), 0
                while p and p != me and hops < 8:
                    p, hops = parents.get(p, 0), hops + 1
                if p == me:
                    self.peak_kb = max(self.peak_kb, kb)


def run_hostile(
    folder: Path, per_kind: int | None = None, timeout_s: float = 5.0, workers: int = 2,
    commands: tuple[str, ...] = ("eval", "report"),
) -> HostileRun:  # fmt: skip
    """Everything, in order: extraction in-process, the pool, then eval and report as processes."""
    marker = folder / "marker"
    marker.mkdir()
    math_file, choice_file = write_files(folder, marker, per_kind)
    run = HostileRun(deadline_s=timeout_s)
    tasks: dict[str, VerifyTask] = {}
    for path, extract, kind in (
        (math_file, extract_math, "math"),
        (choice_file, extract_choice, "choice"),
    ):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            start = time.perf_counter()
            pred = extract(row["gen"], row.get("reasoning"))
            run.max_extract_s = max(run.max_extract_s, time.perf_counter() - start)
            run.samples += 1
            gold = row["answer"].encode("utf-8", "replace").decode()
            pred = None if pred is None else pred.encode("utf-8", "replace").decode()
            if kind == "math" and pred is not None and exact_status(gold, pred) is None:
                key = verdict_key("math", gold, pred)
                tasks[key] = VerifyTask(key, "math", gold, pred)
    results: list[VerifyResult] = []
    with PeakMemory() as memory:
        VerifyPool(workers, timeout_s).run(tasks.values(), results.append)
    run.max_worker_mb = memory.peak_kb / 1024
    run.verified = len(results)
    run.max_verify_s = max((r.seconds for r in results), default=0.0)
    for r in results:
        run.statuses[r.status] = run.statuses.get(r.status, 0) + 1
    files = [str(math_file), str(choice_file), "--no-progress", "--timeout", str(timeout_s)]
    if "eval" in commands:
        run.eval_s = _command(run, ["eval", *files, "--export-verdicts", str(folder / "v.jsonl")])
    html = folder / "report.html"
    if "report" in commands:  # plain JSON blocks: model markup would show up raw if unescaped
        run.report_s = _command(run, ["report", *files, "--out", str(html), "--no-compress"])
        page = html.read_text(encoding="utf-8") if html.exists() else ""
        run.crashes += [f"report: raw {h[:20]!r}" for h in HTML if h in page]
    if len(results) != len(tasks):
        run.crashes.append(f"pool answered {len(results)} of {len(tasks)} pairs")
    run.payload_files = sorted(p.name for p in marker.iterdir())
    return run


def _command(run: HostileRun, argv: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "llmeval", "-q", *argv], capture_output=True,
                          text=True, env=env, timeout=1800)  # fmt: skip
    if done.returncode != 0 or "Traceback" in done.stderr:
        run.crashes.append(f"{argv[0]}: exit {done.returncode}: {done.stderr.strip()[-300:]}")
    return time.monotonic() - start
