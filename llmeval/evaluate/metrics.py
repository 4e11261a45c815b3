"""Pure statistics over per-sample outcomes: avg@n, both standard errors, pass@k, pass^k, maj@k,
and of a run in progress the complete-rounds estimate and the mean over finished samples.
Problems are the unit: every figure is a mean over problems of a per-problem figure.
Formulas are written out in docs/eval.md, section "Scores"."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

_CORRECT = "\x00correct"  # the one class of every correct answer in a vote


@dataclass(frozen=True, slots=True)
class Outcome:
    """One scored sample. `vote` is its answer's equivalence class (None: it does not vote)."""

    problem_id: str
    sample_idx: int
    status: str
    truncated: bool = False
    vote: str | None = None
    completion_tokens: int | None = None

    @property
    def correct(self) -> bool:
        """Only a verified-correct answer of an output that was not cut off counts."""
        return self.status == "correct" and not self.truncated

    @property
    def label(self) -> str | None:
        """Its class in a vote: `_CORRECT`, its vote, or None (it abstains)."""
        return None if self.vote is None else _CORRECT if self.correct else self.vote


def ks_up_to(n: int) -> list[int]:
    """k = 1, 2, 4, ... up to n, and n itself."""
    ks = [1 << i for i in range(n.bit_length())]
    return [*ks, n] if ks and ks[-1] != n else ks


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k of Chen et al. (2021): 1 - C(n-c, k) / C(n, k), for k <= n."""
    if not 0 < k <= n:
        raise ValueError(f"pass@{k} needs 1 <= k <= n = {n}")
    if n - c < k:
        return 1.0
    return 1.0 - math.prod((n - c - i) / (n - i) for i in range(k))


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k: the chance that k samples drawn without replacement from n, c of them
    correct, are all correct: C(c, k) / C(n, k), for k <= n ("solves it reliably")."""
    if not 0 < k <= n:
        raise ValueError(f"pass^{k} needs 1 <= k <= n = {n}")
    if c < k:
        return 0.0
    return math.prod((c - i) / (n - i) for i in range(k))


def _winning_class(labels: Sequence[str | None]) -> str | None:
    """The most frequent class; ties to the one voted first; None if nobody votes."""
    counts: dict[str, int] = {}  # insertion order = order of first vote (faster than a Counter)
    for label in labels:
        if label is not None:
            counts[label] = counts.get(label, 0) + 1
    return max(counts, key=counts.__getitem__) if counts else None  # max: the first of a tie


def majority_winner(block: Sequence[Outcome]) -> Outcome | None:
    """The first sample of the class that wins the vote in `block` (in sample_idx order); None
    if nobody votes. Correct answers form one class, the others vote by their class, samples
    without a vote abstain; ties go to the class whose first vote comes earliest."""
    labels = [o.label for o in block]
    winner = _winning_class(labels)
    return None if winner is None else block[labels.index(winner)]


def maj_at_k(samples: Sequence[Outcome], k: int) -> float:
    """maj@k of one problem: the mean over the disjoint blocks of k consecutive samples
    (by sample_idx; a last partial block is left out) of whether the block's majority is right."""
    return _maj_of_labels([o.label for o in sorted(samples, key=lambda o: o.sample_idx)], k)


def _maj_of_labels(labels: list[str | None], k: int) -> float:
    """`maj_at_k` over the samples' labels in sample_idx order."""
    blocks = len(labels) // k
    if not blocks:
        raise ValueError(f"maj@{k} needs at least {k} samples")
    if k == 1:  # each sample is its own block: right iff it votes and is correct
        return labels.count(_CORRECT) / blocks
    starts = range(0, blocks * k, k)
    return sum(_winning_class(labels[i : i + k]) == _CORRECT for i in starts) / blocks


def clustered_stderr(fractions: Sequence[float]) -> float | None:
    """Standard error of the mean over problems: sd(p_i, ddof=1) / sqrt(P); None if P < 2."""
    count = len(fractions)
    if count < 2:
        return None
    mean = math.fsum(fractions) / count
    var = math.fsum((p - mean) ** 2 for p in fractions) / (count - 1)
    return math.sqrt(var / count)


def sample_stderr(fractions: Sequence[float], sizes: Sequence[int]) -> float | None:
    """Run-to-run error with the problems fixed: sqrt(sum_i p_i(1-p_i)/(n_i-1)) / P.
    Problems with a single sample add nothing (their variance cannot be estimated)."""
    if not fractions:
        return None
    total = math.fsum(p * (1 - p) / (n - 1) for p, n in zip(fractions, sizes, strict=True) if n > 1)
    return math.sqrt(total) / len(fractions)


class _Keyed(Protocol):
    @property
    def problem_id(self) -> str: ...
    @property
    def sample_idx(self) -> int: ...


K = TypeVar("K", bound=_Keyed)


def group_by_problem(outcomes: Iterable[K]) -> dict[str, list[K]]:
    """Outcomes (or samples) per problem, each list ordered by sample_idx; problems in
    first-seen order."""
    groups: dict[str, list[K]] = {}
    for out in outcomes:
        groups.setdefault(out.problem_id, []).append(out)
    for samples in groups.values():
        samples.sort(key=lambda o: o.sample_idx)
    return groups


def fraction_correct(outcomes: Sequence[Outcome]) -> float:
    """The share of `outcomes` that are correct: of one problem's samples, its p_i."""
    return sum(o.correct for o in outcomes) / len(outcomes)


@dataclass(frozen=True)
class Summary:
    """The figures of one set of problems (a task, or a subject or level within it)."""

    n_problems: int
    accuracy: float | None
    stderr: float | None
    sample_stderr: float | None
    pass_at_k: dict[str, float]
    maj_at_k: dict[str, float]
    pass_hat_k: dict[str, float]


def summarize(groups: dict[str, list[Outcome]]) -> Summary:
    """avg@n, both standard errors, pass@k, maj@k and pass^k over the problems of `groups`."""
    present = [s for s in groups.values() if s]
    sizes = [len(s) for s in present]
    corrects = [sum(o.correct for o in s) for s in present]
    fractions = [c / n for c, n in zip(corrects, sizes, strict=True)]
    if not fractions:
        return Summary(len(groups), None, None, None, {}, {}, {})
    ks = ks_up_to(min(sizes))
    counts = list(zip(sizes, corrects, strict=True))
    labels = [[o.label for o in s] for s in present]  # once for every k
    return Summary(
        n_problems=len(groups),
        accuracy=mean(fractions),
        stderr=clustered_stderr(fractions),
        sample_stderr=sample_stderr(fractions, sizes),
        pass_at_k={str(k): mean([pass_at_k(n, c, k) for n, c in counts]) for k in ks},
        maj_at_k={str(k): mean([_maj_of_labels(lab, k) for lab in labels]) for k in ks},
        pass_hat_k={str(k): mean([pass_hat_k(n, c, k) for n, c in counts]) for k in ks},
    )


def mean(values: Sequence[float]) -> float:
    """The mean of a non-empty sequence, its sum exact (`fsum`: the order never matters)."""
    return math.fsum(values) / len(values)


@dataclass(frozen=True)
class Rounds:
    """The complete-rounds estimate of a run in progress: avg@k over samples 0..k-1 of every
    planned problem, k the most rounds every one has finished (0: none yet, no figure)."""

    k: int
    accuracy: float | None
    stderr: float | None


def complete_rounds(groups: dict[str, list[Outcome]], n: int, unstarted: int = 0) -> Rounds:
    """avg@k and its clustered stderr over the first k sample indices, k the largest with
    samples 0..k-1 finished for every problem in `groups` (and `unstarted` problems planned
    without any: k = 0). Which samples finish first (the short ones, the first problems) does
    not move it: every problem counts with the same k samples, chosen by index alone."""
    if unstarted or not groups:
        return Rounds(0, None, None)
    k = min([n, *(_prefix(outs) for outs in groups.values())])
    if k == 0:
        return Rounds(0, None, None)
    fractions = [sum(o.correct for o in outs if o.sample_idx < k) / k for outs in groups.values()]
    return Rounds(k, mean(fractions), clustered_stderr(fractions))


def _prefix(outs: Sequence[Outcome]) -> int:
    """How many of sample indices 0, 1, 2, ... are present, counted up to the first gap."""
    present = {o.sample_idx for o in outs}
    k = 0
    while k in present:
        k += 1
    return k


def finished_mean(outcomes: Sequence[Outcome]) -> float | None:
    """The share of correct samples among all finished ones: what a running mean shows. While
    a run is incomplete it reads high when short answers finish first and are more often right."""
    return fraction_correct(outcomes) if outcomes else None
