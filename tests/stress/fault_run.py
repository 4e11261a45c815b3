"""Fault runs: `infer` as a real process against the loopback server injecting every fault kind
at set rates, next to a fault-free run; figures from the server's counters and the output.

Used by `bench/stress_faults.py` and `tests/test_fault_run.py`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.stress.kill_storm import problems_file
from tests.support.threaded_server import serve

ROOT = Path(__file__).resolve().parents[2]
# About a third of requests fail; "slow" stalls past the client's read timeout.
DEFAULT_FAULTS = {
    "429": 0.05, "500": 0.03, "503": 0.03, "drop": 0.04, "drop_mid": 0.05, "slow": 0.03,
    "malformed": 0.04, "empty": 0.04, "close_after": 0.05,
}  # fmt: skip
READ_TIMEOUT = 1.0  # the client's --timeout in these runs
STALL = 2.5  # how long a "slow" fault stalls before answering


@dataclass
class FaultRun:
    """Figures of one infer run."""

    stream: bool
    faulty: bool
    exit_code: int = 0
    seconds: float = 0.0
    requests: int = 0
    faults: dict[str, int] = field(default_factory=dict)
    samples: int = 0
    expected: int = 0
    duplicated: int = 0

    @property
    def retries_per_sample(self) -> float:
        """Requests beyond the one that succeeded, per sample written."""
        return (self.requests - self.samples) / self.samples if self.samples else 0.0


def run_once(
    workdir: Path, stream: bool, faults: dict[str, float], *,
    n: int = 8, problems: int = 30, workers: int = 16, latency: float = 0.05, seed: int = 0,
) -> FaultRun:  # fmt: skip
    """One infer run to completion (retries allowed to finish) against a fresh server."""
    inp = problems_file(workdir / "aime24.jsonl", problems)
    tag = f"{'stream' if stream else 'whole'}-{'faults' if faults else 'clean'}"
    out = workdir / f"{tag}.jsonl"
    run = FaultRun(stream, bool(faults), expected=n * problems)
    schedule = dict(enumerate(faults))  # every kind at least once, then by rate
    options = {"latency": latency, "slow_delay": STALL, "fault_seed": seed}
    with serve(faults=faults, schedule=schedule, **options) as srv:
        argv = [sys.executable, "-m", "llmeval", "-q", "infer", "--input", str(inp),
                "--output", str(out), "--base-url", srv.url, "--n-samples", str(n),
                "--max-workers", str(workers),
                "--stream" if stream else "--no-stream", "--timeout", str(READ_TIMEOUT),
                "--max-retries", "30", "--retry-delay", "0.05", "--retry-max-delay", "0.5",
                "--progress", "plain", "--progress-interval", "600"]  # fmt: skip
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        start = time.monotonic()
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=900)
        run.seconds = time.monotonic() - start
        stats = dict(srv.stats)
    if "Traceback" in done.stderr:
        raise AssertionError(done.stderr[-2000:])
    run.exit_code = done.returncode
    run.requests = stats.get("POST /v1/chat/completions", 0)
    run.faults = {k.split(" ", 1)[1]: v for k, v in stats.items() if k.startswith("fault ")}
    dropped = stats.get("dropped after close_after", 0)
    if dropped:
        run.faults["dropped after close_after"] = dropped
    keys = [
        (r["problem_id"], r["sample_idx"]) for r in map(json.loads, out.read_text().splitlines())
    ]
    run.samples, run.duplicated = len(set(keys)), len(keys) - len(set(keys))
    return run


def describe(faulty: FaultRun, clean: FaultRun) -> str:
    """The figures of a faulty run beside its fault-free twin."""
    mode = "stream" if faulty.stream else "no-stream"
    # a close_after answers; the fault is the next request on that connection being dropped
    injected = sum(v for k, v in faulty.faults.items() if k != "close_after")
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(faulty.faults.items()))
    return "\n".join([
        f"{mode}: {faulty.samples}/{faulty.expected} samples "
        f"({100 * faulty.samples / faulty.expected:.0f}%), exit {faulty.exit_code}, "
        f"duplicated {faulty.duplicated}",
        f"  requests {faulty.requests}, faults injected {injected} ({kinds})",
        f"  retries per sample {faulty.retries_per_sample:.2f}; wall {faulty.seconds:.1f} s vs "
        f"{clean.seconds:.1f} s fault-free ({clean.requests} requests, exit {clean.exit_code})",
    ])  # fmt: skip
