"""What llmeval must not take on trust: API keys a server quotes back (a gateway's 401 quoting
the Authorization header), names built to drive a terminal (escape sequences, C1 controls,
bidi overrides, forged log lines) as a server's model id and in files and folder names, and
verdict caches someone else wrote (forged `correct` verdicts, forged seals, edited lines,
hostile field values, another verifier version's verdicts).

    .venv/bin/python -m bench.stress_trust [--only keys|names|caches] [--rounds 2] [--evals 3]

Runs the real command line as processes against the loopback test server. Prints each part's
figures last; exit status 1 if any check failed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from tests.stress.trust import echoed_keys, forged_caches, terminal_names


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["keys", "names", "caches"], help="one part")
    parser.add_argument("--rounds", type=int, default=2, help="echoed-key rounds")
    parser.add_argument("--evals", type=int, default=3, help="evals of a shared cache")
    args = parser.parse_args()
    parts = {
        "keys": lambda d: echoed_keys(d, args.rounds),
        "names": terminal_names,
        "caches": lambda d: forged_caches(d, args.evals),
    }
    failed = 0
    for name, part in parts.items():
        if args.only not in (None, name):
            continue
        start = time.monotonic()
        with tempfile.TemporaryDirectory() as tmp:
            fig = part(Path(tmp))
        counts = ", ".join(f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}"
                           for k, v in fig.counts.items())  # fmt: skip
        print(f"{fig.part}: {fig.runs} processes, {fig.scanned or '-'} streams and files "
              f"searched; {counts}; {time.monotonic() - start:.1f} s")  # fmt: skip
        for problem in fig.problems:
            print(f"    !! {problem}")
        failed += bool(fig.problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
