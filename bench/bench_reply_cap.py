"""Memory of `llmeval infer` against a server that ignores max_tokens: every reply is 2 GB of
text (the loopback server in its own process, `--faults huge=1`), infer runs with its defaults
(--max-tokens 32768, so replies are cut at 2 MiB; 64 requests in flight), streamed and whole.

    .venv/bin/python -m bench.bench_reply_cap [--n 4] [--problems 30] [--workers 64]

Prints, per mode: peak RSS of infer (VmHWM, sampled every 50 ms), wall time, samples written
and cut, the output's size and its longest line. Exit status 1 if a peak reaches 1 GB.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from bench.bench_infer import infer, server
from bench.harness import machine, measure, table
from tests.stress.kill_storm import problems_file

LIMIT_MB = 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=4)
    parser.add_argument("--problems", type=int, default=30)
    parser.add_argument("--workers", type=int, default=64)
    args = parser.parse_args()
    print(machine())
    rows = []
    with tempfile.TemporaryDirectory() as tmp, server("--faults", "huge=1", "--huge-bytes",
                                                       str(2 << 30)) as (url, _):  # fmt: skip
        inp = problems_file(Path(tmp) / "aime24.jsonl", args.problems)
        for mode in ("--stream", "--no-stream"):
            out = Path(tmp) / f"out{mode}.jsonl"
            m = measure(infer(url, out, args.n, args.workers, mode, problems=inp))
            lines = out.read_bytes().splitlines()
            cut = sum(json.loads(line).get("cut_by") == "max_reply_bytes" for line in lines)
            rows.append([mode[2:], m.main_mb, m.wall, len(lines), cut,
                         out.stat().st_size / 2**20, max(map(len, lines)) / 2**20])  # fmt: skip
    table(
        f"infer against a server sending 2 GB replies ({args.workers} in flight, "
        f"{args.problems} problems x {args.n})",
        ["mode", "peak RSS MB", "wall s", "samples", "cut", "output MB", "longest line MB"],
        rows,
    )
    return 0 if all(row[1] < LIMIT_MB for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
