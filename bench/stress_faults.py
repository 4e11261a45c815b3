"""Fault server: `infer` (n=8 over 30 AIME problems) against the loopback server answering
429/500/503, dropping connections before and during answers, stalling past the read timeout,
sending malformed JSON or no choices, and closing keep-alive connections after a stream;
streamed and not.

    .venv/bin/python -m bench.stress_faults [--faults 429=0.05,drop_mid=0.05,...] [--n 8]

Figures (last): requests, faults injected by kind, samples completed, retries per sample,
wall time against the same run without faults. Exit status 1 unless every run completed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from tests.stress.fault_run import DEFAULT_FAULTS, describe, run_once
from tests.support.faults import parse_faults


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = ",".join(f"{k}={v}" for k, v in DEFAULT_FAULTS.items())
    parser.add_argument("--faults", default=default, help="KIND=RATE,... (the test server's)")
    parser.add_argument("--n", type=int, default=8)
    parser.add_argument("--problems", type=int, default=30)
    parser.add_argument("--no-whole", action="store_true", help="streamed runs only")
    args = parser.parse_args()
    faults = parse_faults(args.faults)
    blocks, ok = [], True
    modes = [True] if args.no_whole else [True, False]
    with tempfile.TemporaryDirectory() as tmp:
        for stream in modes:
            runs = []
            for rates in ({}, faults):
                folder = Path(tmp) / f"{stream}{bool(rates)}"
                folder.mkdir()
                runs.append(run_once(folder, stream, rates, n=args.n, problems=args.problems))
            clean, faulty = runs
            ok &= all(r.samples == r.expected and not r.duplicated for r in runs)
            blocks.append(describe(faulty, clean))
    print(f"faults: {args.faults}; read timeout 1 s, stalls 2.5 s")
    print("\n".join(blocks))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
