"""Judge stress: `eval --judge-url` as real processes against the loopback server playing a
judge that drafts a verdict in its reasoning, is cut at its token budget, trickles past the
deadline (some replies, then every one), refuses the key or does not know the model, with
answers that try to close their fence in 8 spellings.

    .venv/bin/python -m bench.stress_judge [--problems 60]

Figures (last), per case: exit code and wall time, questions asked, overturned and unparsed,
judge verdicts cached, what a rerun asks again, tracebacks, fences closed by answer text.
Exit status 1 unless every case behaved.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from tests.stress.judge_run import MAX_TOKENS, TIMEOUT, WORKERS, run_cases


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=60, help="problems (4 answers each)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        lines, ok = run_cases(Path(tmp), args.problems)
    print(
        f"judge: --judge-max-tokens {MAX_TOKENS}, --judge-timeout {TIMEOUT:g} s, "
        f"{WORKERS} workers; trickle 50 tokens/s"
    )
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
