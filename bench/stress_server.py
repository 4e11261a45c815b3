"""Server-side stress: `infer` (n=8 over 30 AIME problems, streamed and whole) against a
loopback server sending garbage token counts, replies that ignore max_tokens (64 MB each),
context-length rejections, choices out of index order and text after [DONE]; `eval` on what
was written.

    .venv/bin/python -m bench.stress_server [--n 8] [--problems 30] [--only NAME]

Figures (last): per scenario, samples written of expected, duplicated or wrong, tracebacks, the
exit codes, and what each scenario checks. Exit status 1 unless every scenario behaved.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from tests.stress.server_run import SCENARIOS, describe


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=8)
    parser.add_argument("--problems", type=int, default=30)
    parser.add_argument("--only", default="", help="the scenarios whose name contains this")
    args = parser.parse_args()
    start, results = time.monotonic(), []
    with tempfile.TemporaryDirectory() as tmp:
        for scenario in SCENARIOS:
            if args.only in scenario.__name__:
                folder = Path(tmp) / scenario.__name__
                folder.mkdir()
                results.append(scenario(folder, args.n, args.problems))
    print("\n".join(describe(f) for f in results))
    lost = sum(f.expected - f.samples for f in results)
    print(f"\nscenarios {len(results)}, misbehaving {sum(not f.ok for f in results)}; "
          f"tracebacks {sum(f.tracebacks for f in results)}, samples lost {lost}, "
          f"duplicated or wrong {sum(f.duplicated for f in results)}, "
          f"{time.monotonic() - start:.0f} s")  # fmt: skip
    return 0 if all(f.ok for f in results) else 1


if __name__ == "__main__":
    sys.exit(main())
