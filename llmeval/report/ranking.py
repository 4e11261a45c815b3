"""Ranks that claim no more than the data shows: a paired sign-flip permutation test between
every two leaderboard rows on the problems both hold, Holm's correction over all pairs, and
each row's rank as the range its significant wins and losses leave open. Pure functions."""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

RESAMPLES = 5000  # random sign flips per pair (seeded: the same report gives the same ranks)
ALPHA = 0.05  # family-wise error over all pairs (Holm)
METHOD = (
    "Rank: a range from paired tests. For every two rows, a paired sign-flip permutation test "
    f"(two-sided, {RESAMPLES:,} random sign flips, seed 0) of the difference in per-problem "
    "accuracy (avg@n of each problem) over the problems both rows hold, tasks weighted equally "
    "as in the average; Holm's correction over all pairs keeps the chance of any false "
    f"'better' under {ALPHA:.0%}. A row ranks above another only where that difference is "
    "significant: its rank runs from 1 + the rows significantly above it to N − the rows "
    "significantly below it."
)


@dataclass(frozen=True)
class PairTest:
    """Row `a` against row `b`: their mean difference (a − b) over the tasks they share, the
    problems compared, the two-sided p-value, and whether Holm's correction keeps it."""

    a: str
    b: str
    diff: float
    problems: int
    p: float
    significant: bool = False


def sign_flip_test(
    diffs_by_task: Sequence[Sequence[float]], resamples: int = RESAMPLES, seed: int = 0
) -> tuple[float, float]:
    """(statistic, two-sided p) of the paired differences d_i of each task's shared problems:
    the statistic is the mean over tasks of each task's mean d_i; under the null hypothesis
    (the two rows exchangeable on each problem) every sign of d_i is equally likely. The
    p-value, (1 + flips at least as extreme) / (1 + resamples), is never 0."""
    tasks = [list(d) for d in diffs_by_task if d]
    if not tasks:
        return 0.0, 1.0
    weights = [1 / (len(tasks) * len(d)) for d in tasks]
    observed = math.fsum(w * x for w, d in zip(weights, tasks, strict=True) for x in d)
    # equal |w d_i| flip together: one binomial draw per distinct value, not one per problem
    sizes = Counter(round(abs(w * x), 12) for w, d in zip(weights, tasks, strict=True) for x in d)
    groups = [(size, count) for size, count in sizes.items() if size > 0]
    if not groups:
        return observed, 1.0
    rng = random.Random(seed)
    bar = abs(observed) - 1e-12  # (ties with the observed value count as extreme)
    extreme = 0
    for _ in range(resamples):
        total = 0.0
        for size, count in groups:
            total += size * (2 * rng.getrandbits(count).bit_count() - count)
        extreme += abs(total) >= bar
    return observed, (1 + extreme) / (1 + resamples)


def holm(pvalues: Sequence[float], alpha: float = ALPHA) -> list[bool]:
    """Which hypotheses Holm's step-down procedure rejects at family-wise level `alpha`."""
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    rejected = [False] * len(pvalues)
    for step, i in enumerate(order):
        if pvalues[i] > alpha / (len(pvalues) - step):
            break
        rejected[i] = True
    return rejected


def rank_ranges(names: Sequence[str], tests: Sequence[PairTest]) -> dict[str, tuple[int, int]]:
    """Each row's rank as (best, worst): best = 1 + the rows significantly better than it,
    worst = N − the rows it is significantly better than."""
    above: Counter[str] = Counter()
    below: Counter[str] = Counter()
    for test in tests:
        if test.significant:
            winner, loser = (test.a, test.b) if test.diff > 0 else (test.b, test.a)
            above[loser] += 1
            below[winner] += 1
    return {name: (1 + above[name], len(names) - below[name]) for name in names}


def rank_text(best: int, worst: int) -> str:
    """`2` or `1–3`."""
    return str(best) if best == worst else f"{best}–{worst}"
