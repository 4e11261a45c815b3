"""Pure paired comparison of two runs over the problems they share, task by task."""

from __future__ import annotations

from dataclasses import dataclass

from llmeval.evaluate import metrics
from llmeval.report.data import Problems, fraction_correct


@dataclass(frozen=True)
class Flip:
    """A problem solved (more than half its samples correct) in one run and not the other."""

    problem_id: str
    run: float  # fraction correct in the run
    baseline: float  # fraction correct in the baseline


@dataclass(frozen=True)
class PairedDiff:
    """run minus baseline over the shared problems, with the paired standard error."""

    task: str
    n_common: int
    only_run: int
    only_baseline: int
    run: float
    baseline: float
    diff: float
    stderr: float | None  # of the per-problem differences, problems as the unit; None if < 2
    flips: list[Flip]

    @property
    def gained(self) -> list[Flip]:
        return [f for f in self.flips if f.run > f.baseline]

    @property
    def lost(self) -> list[Flip]:
        return [f for f in self.flips if f.run < f.baseline]


def paired_diff(task: str, run: Problems, baseline: Problems) -> PairedDiff:
    """Compare per-problem accuracy on the problems both runs hold.

    The difference's standard error is the clustered error of the per-problem differences
    d_i = run_i - baseline_i, so problem difficulty, shared by both runs, cancels out.
    """
    common = [pid for pid in run if pid in baseline]
    a = [fraction_correct(run[pid]) for pid in common]
    b = [fraction_correct(baseline[pid]) for pid in common]
    d = [x - y for x, y in zip(a, b, strict=True)]
    flips = [
        Flip(pid, x, y) for pid, x, y in zip(common, a, b, strict=True) if (x > 0.5) != (y > 0.5)
    ]
    flips.sort(key=lambda f: (-abs(f.run - f.baseline), f.problem_id))
    n = len(common)
    return PairedDiff(
        task=task,
        n_common=n,
        only_run=len(run) - n,
        only_baseline=len(baseline) - n,
        run=sum(a) / n if n else 0.0,
        baseline=sum(b) / n if n else 0.0,
        diff=sum(d) / n if n else 0.0,
        stderr=metrics.clustered_stderr(d),
        flips=flips,
    )
