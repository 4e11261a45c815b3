"""Hostile outputs: generations built to hurt a verifier (power towers, giant factorials and
binomials, 10^5-deep nesting, 1 MB outputs, 20,000 boxes, broken braces, lone surrogates,
control characters, HTML, Python payloads in the box, after </think>, in the reasoning, in the
gold and in GPQA letters) through extraction, the verifier pool, `eval` and `report`.

    .venv/bin/python -m bench.stress_hostile [--timeout 5] [--workers 2] [--per-kind N]

Figures (last): samples, max time per sample against the deadline, max verifier memory,
crashes, files created by payloads. Exit status 1 if any check failed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from llmeval.verify.pool import BACKSTOP
from tests.stress.hostile_run import run_hostile

MARGIN_S = 2.0  # a killed worker's pair is reported within this of its wall-clock backstop


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=5.0, help="eval's deadline per pair")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--per-kind", type=int, help="fewer cases of each kind (fast run)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run = run_hostile(Path(tmp), args.per_kind, args.timeout, args.workers)
    worst = run.max_extract_s + run.max_verify_s
    print(f"samples {run.samples} ({run.verified} distinct pairs verified; {run.statuses})")
    print(
        f"max time per sample {worst:.2f} s (extraction {run.max_extract_s:.2f} s + "
        f"verification {run.max_verify_s:.2f} s) against a {run.deadline_s:g} s deadline of "
        f"CPU time (wall-clock backstop {BACKSTOP * run.deadline_s:g} s)"
    )
    print(f"max verifier process memory (peak RSS) {run.max_worker_mb:.0f} MB")
    print(f"eval {run.eval_s:.1f} s, report {run.report_s:.1f} s (whole runs, as processes)")
    print(f"crashes {len(run.crashes)}{': ' + '; '.join(run.crashes) if run.crashes else ''}")
    print(f"files created by payloads {len(run.payload_files)} {run.payload_files or ''}")
    ok = not run.crashes and not run.payload_files and worst < BACKSTOP * run.deadline_s + MARGIN_S
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
