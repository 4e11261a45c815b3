"""Pure numbers behind the report's pictures, one task at a time, from scored samples.

pass@k and maj@k against k, standard error against samples per problem, accuracy against a
generation-length cap, completion-length histograms, and per-problem difficulty.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from llmeval.evaluate import metrics
from llmeval.evaluate.metrics import ks_up_to


@dataclass(frozen=True)
class ReportSample:
    """One scored sample as the report sees it: a generation joined with its verdict."""

    task: str
    problem_id: str
    sample_idx: int
    status: str  # correct / incorrect / no_answer / timeout / error
    gold: str
    pred: str | None = None
    finish_reason: str | None = None
    truncated: bool = False  # stopped at the token or context limit
    tokens: int | None = None
    latency_s: float | None = None
    ttft_s: float | None = None
    endpoint: str | None = None
    prompt: str = ""
    gen: str = ""
    reasoning: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def correct(self) -> bool:
        """As eval counts it: verified correct and not cut off."""
        return self.status == "correct" and not self.truncated


# problem id -> its samples, sorted by sample_idx
Problems = dict[str, list[ReportSample]]


def group_problems(samples: Iterable[ReportSample]) -> dict[str, Problems]:
    """task -> problem id -> samples sorted by sample_idx (problems in first-seen order)."""
    out: dict[str, Problems] = defaultdict(lambda: defaultdict(list))
    for s in samples:
        out[s.task][s.problem_id].append(s)
    for problems in out.values():
        for rows in problems.values():
            rows.sort(key=lambda s: s.sample_idx)
    return {t: dict(p) for t, p in out.items()}


def fraction_correct(rows: Sequence[ReportSample]) -> float:
    """The share of a problem's samples that are correct."""
    return sum(s.correct for s in rows) / len(rows) if rows else 0.0


def min_samples(problems: Problems) -> int:
    """The smallest number of samples any problem has (k and n never go past it)."""
    return min((len(r) for r in problems.values()), default=0)


def pass_maj_curve(score: Mapping[str, Any]) -> dict[str, list[float]]:
    """pass@k and maj@k against k, as eval computed them (`TaskScore` fields)."""
    ks = sorted(score.get("pass_at_k", {}), key=int)
    return {
        "k": [float(k) for k in ks],
        "pass": [score["pass_at_k"][k] for k in ks],
        "maj": [score.get("maj_at_k", {}).get(k, math.nan) for k in ks],
    }


def stderr_curve(problems: Problems) -> dict[str, list[float]]:
    """Standard errors against n: the run's samples split into disjoint groups of n per problem.

    Group g of size n holds samples g*n .. g*n+n-1 of every problem, like N/n repeated runs.
    `stderr` (problems as the unit) and `sample_stderr` (problems fixed) are averaged over the
    groups; `observed` is the spread (sample standard deviation) of the groups' accuracies,
    defined where there are at least two groups.
    """
    big_n = min_samples(problems)
    rows = list(problems.values())
    out: dict[str, list[float]] = {"n": [], "stderr": [], "sample_stderr": [], "observed": []}
    for n in ks_up_to(big_n):
        groups = [[fraction_correct(r[g * n : g * n + n]) for r in rows] for g in range(big_n // n)]
        accs = [_mean(fr) for fr in groups]
        out["n"].append(float(n))
        out["stderr"].append(_mean(_nan(metrics.clustered_stderr(fr)) for fr in groups))
        out["sample_stderr"].append(
            _mean(_nan(metrics.sample_stderr(fr, [n] * len(fr))) for fr in groups)
            if n > 1
            else math.nan  # one sample per problem: no within-problem variance to estimate
        )
        out["observed"].append(_std(accs) if len(accs) >= 2 else float("nan"))
    return out


def default_caps(max_tokens: int) -> list[int]:
    """2k, 4k, 8k, ... tokens, up to the first cap that holds max_tokens; for short runs,
    halves below 2k so that there are at least three caps."""
    caps = [2048]
    while caps[-1] < max_tokens:
        caps.append(caps[-1] * 2)
    while len(caps) < 3:
        caps.insert(0, caps[0] // 2)
    return caps


def length_cap_curve(problems: Problems, caps: Sequence[int]) -> dict[str, list[float]]:
    """Accuracy and truncation rate had generation stopped at each cap.

    A sample longer than the cap counts as truncated and wrong; a sample without a token count
    keeps its own verdict. Accuracy is avg@n (mean over problems of the fraction correct).
    """
    rows = [r for r in problems.values() if r]
    acc, trunc = [], []
    n_samples = sum(len(r) for r in rows)
    for cap in caps:
        acc.append(_mean(sum(_fits(s, cap) and s.correct for s in r) / len(r) for r in rows))
        cut = sum(s.truncated or not _fits(s, cap) for r in rows for s in r)
        trunc.append(cut / n_samples if n_samples else 0.0)
    return {"cap": [float(c) for c in caps], "accuracy": acc, "truncated": trunc}


def _fits(s: ReportSample, cap: int) -> bool:
    return s.tokens is None or s.tokens <= cap


def length_histograms(samples: Sequence[ReportSample], bins: int = 24) -> dict[str, list[float]]:
    """Completion-length histograms of correct and of wrong samples over shared equal-width bins.

    `edges` has bins+1 entries from 0 to the longest completion; samples without a token
    count are left out. The last bin includes its right edge.
    """
    lengths = [s.tokens for s in samples if s.tokens is not None]
    top = max(lengths, default=0)
    width = max(1.0, top / bins)
    edges = [i * width for i in range(bins + 1)]
    correct, wrong = [0.0] * bins, [0.0] * bins
    for s in samples:
        if s.tokens is None:
            continue
        i = min(int(s.tokens / width), bins - 1)
        (correct if s.correct else wrong)[i] += 1
    return {"edges": edges, "correct": correct, "wrong": wrong}


def difficulty(problems: Problems) -> list[tuple[str, float]]:
    """(problem id, fraction correct), easiest first; ties by problem order."""
    items = [(pid, fraction_correct(r)) for pid, r in problems.items()]
    return sorted(items, key=lambda it: -it[1])


def _nan(value: float | None) -> float:
    return math.nan if value is None else value


def _mean(values: Iterable[float]) -> float:
    vals = list(values)
    return sum(vals) / len(vals) if vals else 0.0


def _std(values: Sequence[float]) -> float:
    """Sample standard deviation (n-1)."""
    m = _mean(values)
    return (sum((v - m) ** 2 for v in values) / (len(values) - 1)) ** 0.5


@dataclass
class Run:
    """One run as the report sees it: its scored samples, run specs and eval's scores per task."""

    label: str
    samples: list[ReportSample]
    specs: dict[str, dict[str, Any]] = field(default_factory=dict)  # task -> RunSpec fields
    scores: dict[str, dict[str, Any]] = field(default_factory=dict)  # task -> eval's task figures
    # samples the LLM judge turned correct: task, problem_id, sample_idx, problem, gold, answer,
    # reply (each a string), for the reader to audit every flip
    overturned: list[dict[str, Any]] = field(default_factory=list)

    def problems(self) -> dict[str, Problems]:
        """task -> problem id -> samples."""
        return group_problems(self.samples)
