"""Ranks that claim no more than the data shows: a paired sign-flip test between every two
leaderboard rows on the problems both hold, Holm's correction over all pairs, and each row's
rank as the range its significant wins and losses leave open. Pure functions."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

ALPHA = 0.05  # family-wise error over all pairs (Holm)
# Steps (sums held x outcomes of a group) of the exact count; past it (about 40 ms), the
# saddlepoint. A pair on AIME at n = 64 takes a few thousand; on two AIMEs and MATH-500 with
# p near 0.05, millions.
EXACT_WORK = 60_000
_UNIT = 10**12  # per-problem terms as integers: equal magnitudes flip together, ties are exact
METHOD = (
    "Rank: a range from paired tests. For every two rows, a paired sign-flip test (two-sided) "
    "of the difference in per-problem accuracy (avg@n of each problem) over the problems both "
    "rows hold, tasks weighted equally as in the average; its p-value is exact (every sign "
    "pattern counted) where the distribution is small enough, else the saddlepoint "
    "approximation of that distribution (Lugannani–Rice), accurate far into the tail, so even "
    "a board of many rows can tell rows apart. Holm's correction over all pairs keeps the "
    f"chance of any false 'better' under {ALPHA:.0%}. A row ranks above another only where "
    "that difference is significant: its rank runs from 1 + the rows significantly above it "
    "to N − the rows significantly below it."
)


@dataclass(frozen=True)
class PairTest:
    """Row `a` against row `b`: their mean difference (a − b) over the tasks they share, the
    problems compared, the two-sided p-value (`exact`, else the saddlepoint's) and the smallest
    one these problems allow (`floor`), and whether Holm's correction keeps it."""

    a: str
    b: str
    diff: float
    problems: int
    p: float
    significant: bool = False
    exact: bool = True
    floor: float = 0.0


class SignFlip(NamedTuple):
    """The statistic, its two-sided p-value, whether that p is exact, and the smallest p any
    data on these problems could give (every difference of one sign: 2 / 2^problems)."""

    statistic: float
    p: float
    exact: bool
    floor: float


def sign_flip_test(
    diffs_by_task: Sequence[Sequence[float]], exact_work: int = EXACT_WORK
) -> SignFlip:
    """The paired differences d_i of each task's shared problems: the statistic is the mean
    over tasks of each task's mean d_i; under the null hypothesis (the two rows exchangeable on
    each problem) every sign of d_i is equally likely. p = P(|S| >= |observed|) under those
    flips, ties counted as extreme."""
    tasks = [list(d) for d in diffs_by_task if d]
    terms = [x / (len(tasks) * len(d)) for d in tasks for x in d]
    units = [round(term * _UNIT) for term in terms]
    sizes = Counter(abs(u) for u in units if u)
    if not sizes:  # nothing shared, or the same on every problem
        return SignFlip(math.fsum(terms), 1.0, True, 1.0)
    observed, flips = abs(sum(units)), sum(sizes.values())
    if not observed:
        return SignFlip(0.0, 1.0, True, 2.0 ** (1 - flips))
    floor = 2.0 ** (1 - flips)
    if observed >= sum(size * count for size, count in sizes.items()):
        return SignFlip(math.fsum(terms), floor, True, floor)  # every difference of one sign
    exact = _exact_p(sizes, observed, exact_work)
    p = exact if exact is not None else _saddlepoint_p(sizes, observed)
    return SignFlip(math.fsum(terms), max(floor, min(1.0, p)), exact is not None, floor)


def _exact_p(sizes: Counter[int], observed: int, budget: int) -> float | None:
    """P(|S| >= observed > 0) for S = sum of ±size, counted exactly: S falls short of its
    largest value by twice the sizes flipped, so only the flips whose sizes add up to at most
    (largest − observed) / 2 are followed, group by group (c equal sizes, j of them flipped
    with chance C(c, j) / 2^c); a far tail is few flips, and cheap. None when that takes more
    than `budget` steps."""
    room = sum(size * count for size, count in sizes.items()) - observed  # >= 2 * flipped
    held: dict[int, float] = {0: 1.0}  # twice the sizes flipped -> chance
    work = 0
    for size, count in sorted(sizes.items(), reverse=True):
        work += len(held) * (count + 1)
        if work > budget:
            return None
        steps = [(2 * size * j, math.comb(count, j) / 2**count) for j in range(count + 1)]
        grown: defaultdict[int, float] = defaultdict(float)
        for flipped, chance in held.items():
            for step, weight in steps:
                if flipped + step > room:
                    break
                grown[flipped + step] += chance * weight
        held = grown
    return 2 * math.fsum(held.values())  # the other tail mirrors it; they meet only at 0


def _saddlepoint_p(sizes: Counter[int], observed: int) -> float:
    """Two-sided P(|S| >= observed) by the Lugannani–Rice saddlepoint approximation of the
    sign-flip distribution (cumulant generating function K(t) = sum log cosh(size t)), the
    normal approximation where the observed value is too near 0 for it."""
    top = max(sizes)
    groups = [(size / top, count) for size, count in sizes.items()]  # scaled: t stays moderate
    s = (observed - min(sizes)) / top  # continuity: half the smallest step a flip makes (2 x)
    if s <= 0:  # within half a step of 0: nothing to tell from no difference
        return 1.0
    variance = math.fsum(a * a * c for a, c in groups)
    t = 0.0
    for _ in range(200):  # Newton from the left: K' is concave, so it never overshoots
        slope = math.fsum(c * a * math.tanh(a * t) for a, c in groups)
        curve = math.fsum(c * a * a / math.cosh(min(a * t, 350.0)) ** 2 for a, c in groups)
        step = (s - slope) / curve
        t += step
        if step <= 1e-12 * t:
            break
    cumulant = math.fsum(c * _log_cosh(a * t) for a, c in groups)
    w = math.sqrt(max(0.0, 2 * (t * s - cumulant)))
    u = t * math.sqrt(math.fsum(c * a * a / math.cosh(min(a * t, 350.0)) ** 2 for a, c in groups))
    if w < 1e-3 or u <= 0:
        return math.erfc(s / math.sqrt(2 * variance))
    density = math.exp(-w * w / 2) / math.sqrt(2 * math.pi)
    return 2 * (0.5 * math.erfc(w / math.sqrt(2)) + density * (1 / u - 1 / w))


def _log_cosh(x: float) -> float:
    x = abs(x)
    return x + math.log1p(math.exp(-2 * x)) - math.log(2)


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


def separation(rows: int, tests: Sequence[PairTest], alpha: float = ALPHA) -> str:
    """The line under the board: how many pairs the data tells apart; when none, that the data
    cannot separate the rows, and why where the problems themselves forbid it."""
    found = sum(t.significant for t in tests)
    if found:
        return f"{found} of {len(tests)} pairs differ significantly (Holm, {alpha:.0%})."
    first = alpha / len(tests)  # Holm's first threshold: the smallest p must be below it
    floor = min((t.floor for t in tests), default=1.0)
    why = (
        f" No p-value can be below {floor:.2g} on these problems (2 / 2^problems where two "
        f"rows differ), and Holm's first threshold over {len(tests)} pairs is {alpha:g} / "
        f"{len(tests)} = {first:.2g}: more problems, or tasks, are needed to rank them."
        if floor > first
        else ""
    )
    return (
        f"The data cannot separate these {rows} rows: no two differ significantly (Holm, "
        f"{alpha:.0%}), so every rank is 1–{rows}.{why}"
    )


def rank_text(best: int, worst: int) -> str:
    """`2` or `1–3`."""
    return str(best) if best == worst else f"{best}–{worst}"
