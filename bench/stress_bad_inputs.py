"""Bad inputs: broken input and output files for infer, eval and report; each must give one
clear error line naming the file (and line), its exit code (2 input, 5 output), and leave an
existing output byte-for-byte unchanged (a torn last line is cut with a warning).

    .venv/bin/python -m bench.stress_bad_inputs [--only SUBSTRING]

Runs each command as its own process against the loopback test server. Prints a table, then
the figures last. Exit status 1 if any case misbehaved.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from tests.stress.bad_cases import CASES
from tests.stress.bad_files import Env, Outcome, run_case
from tests.stress.scratch_fs import Mounts
from tests.support.threaded_server import serve


def run_all(only: str = "", workdir: Path | None = None) -> list[Outcome]:
    """Run every case (whose name contains `only`) in fresh folders; return the outcomes."""
    outcomes = []
    with tempfile.TemporaryDirectory(dir=workdir) as tmp, serve() as srv, Mounts() as mounts:
        env = Env(srv.url, mounts)
        for i, case in enumerate(c for c in CASES if only in c.name):
            folder = Path(tmp) / f"case{i}"
            folder.mkdir()
            outcomes.append(run_case(case, folder, env))
    return outcomes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="run the cases whose name contains this")
    args = parser.parse_args()
    start = time.monotonic()
    outcomes = run_all(args.only)
    for o in outcomes:
        state = "SKIP " + o.skipped if o.skipped else ("ok" if not o.problems else "FAIL")
        print(f"{o.case:<52} exit {o.exit_code}  {state}")
        if o.error:
            print(f"    {o.error[:160]}")
        for problem in o.problems:
            print(f"    !! {problem}")
    ran = [o for o in outcomes if not o.skipped]
    bad = [o for o in ran if o.problems]
    codes = sorted({o.exit_code for o in ran})
    skipped = len(outcomes) - len(ran)
    print(f"\ncases: {len(outcomes)} ({skipped} skipped), misbehaving: {len(bad)}, "
          f"exit codes seen: {codes}, files changed: {sum(not o.unchanged for o in ran)}, "
          f"tracebacks: {sum(any('traceback' in p for p in o.problems) for o in ran)}, "
          f"{time.monotonic() - start:.1f} s")  # fmt: skip
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
