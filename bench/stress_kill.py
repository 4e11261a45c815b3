"""Kill storm: `infer` (n=8 over 30 AIME problems, random server latency) and `eval` (with
its verdict cache) killed at random moments (SIGKILL, some SIGTERM/SIGINT) and restarted
until done. Figures: kills, restarts, samples lost, duplicated, unreadable lines, final count;
for eval, whether the final verdicts equal an uninterrupted run's.

    .venv/bin/python -m bench.stress_kill [--kills 50] [--seed 0] [--only infer|eval]

Prints the figures last; exit status 1 if anything was lost, duplicated or left broken.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from tests.stress.kill_storm import Storm, eval_storm, infer_storm


def describe(name: str, storm: Storm) -> str:
    """One block of figures."""
    kills = ", ".join(f"{v} {k}" for k, v in sorted(storm.kills.items()))
    lines = [
        f"{name}: {sum(storm.kills.values())} signals ({kills}; {storm.mid_run} while work "
        f"remained), {storm.restarts} restarts, {storm.seconds:.0f} s",
        f"  lost {storm.lost}, duplicated {storm.duplicated}, unreadable lines {storm.unreadable},"
        f" final {storm.final} of {storm.expected} expected",
        f"  exit codes {dict(sorted(storm.exit_codes.items()))}",
    ]
    lines += [f"  {k}: {v}" for k, v in storm.extra.items()]
    return "\n".join(lines)


def healthy(storm: Storm) -> bool:
    """Nothing lost, duplicated or broken, the exact count, and eval's checks passed."""
    ok = storm.lost == storm.duplicated == storm.unreadable == 0 and storm.final == storm.expected
    equal = storm.extra.get("verdicts equal to an uninterrupted run", True)
    return ok and equal is True and not storm.extra.get("processes left behind", 0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", choices=["infer", "eval"])
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        if args.only in (None, "infer"):
            (Path(tmp) / "infer").mkdir()
            results["infer"] = infer_storm(Path(tmp) / "infer", args.kills, seed=args.seed)
        if args.only in (None, "eval"):
            (Path(tmp) / "eval").mkdir()
            results["eval"] = eval_storm(Path(tmp) / "eval", args.kills, seed=args.seed)
    print("\n".join(describe(k, v) for k, v in results.items()))
    return 0 if all(healthy(s) for s in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
