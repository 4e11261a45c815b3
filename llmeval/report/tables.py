"""Server-rendered HTML of the report's comparison (`--baseline`) and serving sections.

Every value that may come from a file is escaped (through `table` and `details`).
"""

from __future__ import annotations

import math
from html import escape

from llmeval.report import data as rd
from llmeval.report.compare import PairedDiff, paired_diff
from llmeval.report.sections import details, pct, table
from llmeval.report.serving import serving_figures


def comparison(run: rd.Run, baseline: rd.Run) -> str:
    """Per-task paired difference and the flipped problems."""
    mine, theirs = run.problems(), baseline.problems()
    diffs = [paired_diff(t, mine[t], theirs[t]) for t in sorted(mine) if t in theirs]
    head = [
        "task",
        "shared problems",
        f"{run.label} %",
        f"{baseline.label} %",
        "difference %",
        "paired stderr %",
        "95% interval",
        "gained",
        "lost",
    ]
    rows = [
        [
            d.task,
            d.n_common,
            pct(d.run),
            pct(d.baseline),
            f"{100 * d.diff:+.1f}",
            pct(d.stderr),
            _interval(d.diff, d.stderr),
            len(d.gained),
            len(d.lost),
        ]
        for d in diffs
    ]
    missing = sorted(set(mine) ^ set(theirs))
    note = f"<p>Tasks in only one run: {escape(', '.join(missing))}</p>" if missing else ""
    flips = "".join(_flips(d, run.label, baseline.label) for d in diffs)
    return (
        f'<section id="comparison"><h2>Comparison with {escape(baseline.label)}</h2>'
        f"{table(head, rows, 'scores')}{note}{flips}</section>"
    )


def _interval(diff: float, stderr: float | None) -> str:
    """The normal 95% interval of a difference, in points."""
    if stderr is None:
        return "–"
    return f"[{100 * (diff - 1.96 * stderr):+.1f}, {100 * (diff + 1.96 * stderr):+.1f}]"


def _flips(d: PairedDiff, run: str, base: str) -> str:
    if not d.flips:
        return ""
    rows = [
        [f.problem_id, pct(f.run), pct(f.baseline), f"{100 * (f.run - f.baseline):+.1f}"]
        for f in d.flips
    ]
    summary = (
        f"{d.task}: {len(d.flips)} flipped problems ({len(d.gained)} gained, {len(d.lost)} lost)"
    )
    return details(summary, table(["problem", f"{run} %", f"{base} %", "change"], rows), "flips")


def overturned(run: rd.Run, limit: int = 500) -> str:
    """The samples the LLM judge turned correct, each with what the judge saw and replied."""
    if not run.overturned:
        return ""
    rows = [
        [f"{o['task']} {o['problem_id']} #{o['sample_idx']}", _cut(o["problem"], 600),
         _cut(o["gold"]), _cut(o["answer"]), _cut(o["reply"], 1500)]
        for o in run.overturned[:limit]
    ]  # fmt: skip
    more = len(run.overturned) - limit
    note = f"<p>{more} more not shown.</p>" if more > 0 else ""
    head = ["sample", "problem", "gold", "answer", "judge's reply"]
    return (
        '<section id="judge"><h2>Judge</h2><p>Samples the rules judged incorrect and the judge '
        f"turned correct ({len(run.overturned)}).</p>{table(head, rows, 'judge')}"
        f"{note}</section>"
    )


def _cut(text: str, limit: int = 300) -> str:
    """Model or judge text cut at `limit` characters (`table` escapes every cell)."""
    return text if len(text) <= limit else text[:limit] + " …"


def serving(run: rd.Run) -> str:
    """Output tokens/s, latency and TTFT percentiles, per endpoint."""
    figs = serving_figures(run.samples)
    head = ["endpoint", "requests", "output tokens"]
    for name in ("tok/s", "latency s", "TTFT s"):
        head += [f"{name} p50", f"{name} p90", f"{name} p99"]
    rows = []
    for ep, f in figs.items():
        row: list[object] = [ep, f["requests"], f["output_tokens"]]
        for key in ("tokens_per_s", "latency_s", "ttft_s"):
            row += [_num(f[key][p]) for p in ("p50", "p90", "p99")]
        rows.append(row)
    note = (
        '<p class="note">Per request: output tokens/s = completion tokens / (latency − TTFT).</p>'
    )
    return f'<section id="serving"><h2>Serving</h2>{table(head, rows, "scores")}{note}</section>'


def _num(v: float) -> str:
    if math.isnan(v):
        return "–"
    return f"{v:.0f}" if v >= 100 else f"{v:.1f}" if v >= 10 else f"{v:.3f}"
