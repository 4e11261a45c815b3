"""STAND-IN for `llmeval.metrics` (issue 3, being built on branch `eval`): delete after merging.

Only the signatures the report expects; the report imports nothing else from here.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k of one problem with c correct out of n samples (Chen et al.)."""
    if n - c < k:
        return 1.0
    return 1.0 - math.prod((n - c - i) / (n - i) for i in range(k))


def maj_at_k(votes: Sequence[tuple[str | None, bool]], k: int) -> float:
    """maj@k of one problem: majority over the first k (answer, correct) votes; ties: first seen."""
    head = [v for v in votes[:k] if v[0] is not None]
    if not head:
        return 0.0
    counts = Counter(a for a, _ in head)
    best = max(counts.values())
    winner = next(a for a, _ in head if counts[a] == best)
    return float(next(ok for a, ok in head if a == winner))


def stderr(fractions: Sequence[float]) -> float:
    """Clustered standard error of the mean of per-problem fractions (problems as the unit)."""
    p = len(fractions)
    if p < 2:
        return 0.0
    mean = sum(fractions) / p
    return math.sqrt(sum((f - mean) ** 2 for f in fractions) / (p - 1) / p)


def sample_stderr(fractions: Sequence[float], n: int) -> float:
    """Run-to-run standard error with problems fixed: sqrt(sum p(1-p)/(n-1)) / P."""
    p = len(fractions)
    if p == 0 or n < 2:
        return 0.0
    return math.sqrt(sum(f * (1 - f) / (n - 1) for f in fractions)) / p


def task_score(task: str, problems: dict, n_expected: int | None = None) -> dict:
    """One task's figures in the shape of eval's JSON result (`tasks[i]`)."""
    rows = list(problems.values())
    fr = [sum(s.status == "correct" for s in r) / len(r) for r in rows if r]
    n = min((len(r) for r in rows), default=0)
    ks = [1 << i for i in range(max(n, 1).bit_length()) if (1 << i) <= n]
    samples = [s for r in rows for s in r]
    return {
        "task": task,
        "n_problems": len(rows),
        "n_samples": len(samples),
        "n": n,
        "accuracy": sum(fr) / len(fr) if fr else 0.0,
        "stderr": stderr(fr),
        "sample_stderr": sample_stderr(fr, n),
        "pass_at_k": {
            str(k): sum(pass_at_k(len(r), sum(s.status == "correct" for s in r), k) for r in rows)
            / len(rows)
            for k in ks
        },
        "maj_at_k": {
            str(k): sum(maj_at_k([(s.pred, s.status == "correct") for s in r], k) for r in rows)
            / len(rows)
            for k in ks
        },
        "n_no_answer": sum(s.status == "no_answer" for s in samples),
        "n_timeout": sum(s.status == "timeout" for s in samples),
        "n_truncated": sum(s.finish_reason == "length" for s in samples),
        "complete": n_expected is None or all(len(r) >= n_expected for r in rows),
    }
