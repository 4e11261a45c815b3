"""The report's comparison with a baseline: the paired difference per task under both policies,
the settings that differ, and the flipped problems. Every value from a file is escaped."""

from __future__ import annotations

from html import escape

from llmeval.evaluate.headline import other_policy
from llmeval.report import data as rd
from llmeval.report.sections import details, pct, section, table


def _points(v: float) -> str:
    """A signed difference of fractions in percentage points: 0.083 -> '+8.3'."""
    return f"{100 * v:+.1f}"


def comparison(run: rd.Run, baseline: rd.Run) -> str:
    """Per-task paired difference under both policies, and the flipped problems (under the
    chosen one)."""
    diffs = rd.compare(run, baseline)
    policies = (run.policy, other_policy(run.policy))
    both = zip(diffs, rd.compare(run, baseline, policies[1]), strict=True)
    head = ["task", "policy", "shared problems", f"{run.label} %", f"{baseline.label} %",
            "difference %", "paired stderr %", "95% interval", "gained", "lost",
            "settings that differ"]  # fmt: skip
    rows = [
        [d.task, policy, d.n_common, pct(d.run), pct(d.baseline), _points(d.diff),
         pct(d.stderr), _interval(d.diff, d.stderr), len(d.gained), len(d.lost), d.differs]
        for pair in both
        for d, policy in zip(pair, policies, strict=True)
    ]  # fmt: skip
    tasks = [{f.task.name for f in r.files.values()} for r in (run, baseline)]
    missing = sorted(tasks[0] ^ tasks[1])
    note = f"<p>Tasks in only one run: {escape(', '.join(missing))}</p>" if missing else ""
    flips = "".join(_flips(d, run.label, baseline.label) for d in diffs)
    return section(
        "comparison", f"Comparison with {baseline.label}", table(head, rows, "scores"), note, flips
    )


def _interval(diff: float, stderr: float | None) -> str:
    """The normal 95% interval of a difference, in points."""
    if stderr is None:
        return "–"
    return f"[{_points(diff - 1.96 * stderr)}, {_points(diff + 1.96 * stderr)}]"


def _flips(d: rd.PairedDiff, run: str, base: str) -> str:
    if not d.flips:
        return ""
    rows = [
        [f.problem_id, pct(f.run), pct(f.baseline), _points(f.run - f.baseline)] for f in d.flips
    ]
    summary = (
        f"{d.task}: {len(d.flips)} flipped problems ({len(d.gained)} gained, {len(d.lost)} lost)"
    )
    return details(summary, table(["problem", f"{run} %", f"{base} %", "change"], rows), "flips")
