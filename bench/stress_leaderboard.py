"""Leaderboard stress: `llmeval report` as a process over many models (one loopback run made
right or wrong per model, tests/support/model_runs.py), spread from weak to strong, and as many
alike. The ranks must tell the strongest from the weakest (a fixed number of random sign flips
left every rank 1-N from 23 models on), and alike models must be said to be inseparable.

    .venv/bin/python -m bench.stress_leaderboard [--models 50] [--n 4]

Figures (last), per board: models, pairs, pairs significant, the best and worst rows' rank
ranges, report wall time. Exit status 1 unless both boards behaved.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.harness import PYTHON
from tests.support.model_runs import many_models


def _board(folder: Path, files: list[Path]) -> tuple[float, str, list[list[str]]]:
    """Report the files; the wall time, the line under the leaderboard and its rows."""
    out = folder / "report.html"
    argv = [PYTHON, "-m", "llmeval", "report", *map(str, files), "-o", str(out), "--workers",
            "2", "--no-progress"]  # fmt: skip
    started = time.monotonic()
    subprocess.run(argv, check=True, capture_output=True)
    wall = time.monotonic() - started
    html = out.read_text(encoding="utf-8")
    board = re.search(r'<section id="leaderboard">(.*?)</section>', html, re.S)
    assert board, "no leaderboard"
    line = re.findall(r'<p class="note">(.*?)</p>', board.group(1))[0]
    rows = [re.findall(r"<td>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", board[1])]
    return wall, line, [row for row in rows if row]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=50)
    parser.add_argument("--n", type=int, default=4, help="samples per problem (aime24)")
    args = parser.parse_args()
    ok, lines = True, []
    pairs = args.models * (args.models - 1) // 2
    with tempfile.TemporaryDirectory() as tmp:
        for name, spread in (("spread", 1.0), ("alike", 0.0)):
            folder = Path(tmp) / name
            wall, said, rows = _board(folder, many_models(folder, args.models, args.n, spread))
            best, worst = rows[0][0], rows[args.models - 1][0]
            found = re.match(r"(\d+) of", said)
            significant = int(found.group(1)) if found else 0
            if spread:
                good = best.split("–")[-1] != str(args.models) and not worst.startswith("1")
            else:
                good = said.startswith("The data cannot separate")
            ok &= good
            lines.append(
                f"{name:7} {args.models} models, {pairs} pairs: {significant} significant; best "
                f"row {best}, worst row {worst}; report {wall:.1f} s; {'ok' if good else 'FAIL'}"
            )
    print(f"leaderboard: aime24 x {args.n} samples per model, loopback rows")
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
