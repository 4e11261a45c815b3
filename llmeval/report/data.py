"""The numbers behind the report, from eval's scored samples under the run's policy: curves,
histograms and difficulty per task, the paired comparison of two runs, serving percentiles.
A problem's samples count as eval's statistics count them (`metrics.Outcome`)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from statistics import quantiles, stdev
from typing import Any

from llmeval.errors import display_url
from llmeval.evaluate import metrics
from llmeval.evaluate.metrics import Outcome, fraction_correct, group_by_problem, mean
from llmeval.evaluate.reading import InputRun
from llmeval.evaluate.samples import Sample, Texts
from llmeval.evaluate.scoring import outcome
from llmeval.records import TaskScore

_NO_TEXTS = Texts("", None, None, None, None, None)

# problem id -> its samples' outcomes under one policy, sorted by sample_idx
Problems = dict[str, list[Outcome]]


def sample_texts(s: Sample) -> Texts:
    """A sample's texts and timings (eval keeps them for the report), else empty ones."""
    return s.texts or _NO_TEXTS


def problems_of(samples: Sequence[Sample], policy: str) -> Problems:
    """The samples' outcomes under `policy`, per problem (problems in first-seen order)."""
    return group_by_problem(outcome(s, policy) for s in samples)


def pass_maj_curve(score: TaskScore) -> dict[str, list[float]]:
    """pass@k and maj@k against k, as eval computed them."""
    ks = sorted(score.pass_at_k, key=int)
    return {
        "k": [float(k) for k in ks],
        "pass": [score.pass_at_k[k] for k in ks],
        "maj": [score.maj_at_k.get(k, math.nan) for k in ks],
    }


def stderr_curve(problems: Problems) -> dict[str, list[float]]:
    """Standard errors against n, the samples of every problem split into disjoint groups of n
    (g*n .. g*n+n-1) as N/n repeated runs: `stderr` and `sample_stderr` averaged over the groups,
    `observed` the sample standard deviation of the groups' accuracies (two groups or more)."""
    big_n = min((len(r) for r in problems.values()), default=0)  # n never goes past it
    out: dict[str, list[float]] = {"n": [], "stderr": [], "sample_stderr": [], "observed": []}
    for n in metrics.ks_up_to(big_n):
        groups = [
            [fraction_correct(r[g * n : g * n + n]) for r in problems.values()]
            for g in range(big_n // n)
        ]
        accs = [mean(fr) for fr in groups]
        out["n"].append(float(n))
        out["stderr"].append(mean([_nan(metrics.clustered_stderr(fr)) for fr in groups]))
        out["sample_stderr"].append(
            mean([_nan(metrics.sample_stderr(fr, [n] * len(fr))) for fr in groups])
            if n > 1
            else math.nan  # one sample per problem: no within-problem variance to estimate
        )
        out["observed"].append(stdev(accs) if len(accs) >= 2 else math.nan)
    return out


def default_caps(max_tokens: int) -> list[int]:
    """max_tokens and its halves down to a sixteenth: the caps a run could have been given."""
    return sorted({max_tokens >> i for i in range(5) if max_tokens >> i > 0})


def length_cap_curve(problems: Problems, caps: Sequence[int]) -> dict[str, list[float]]:
    """avg@n and the truncated share had generation stopped at each cap: a longer sample counts
    as truncated and wrong, one without a token count keeps its own verdict."""
    rows = list(problems.values())
    accuracy = [
        mean([sum(_fits(s, cap) and s.correct for s in r) / len(r) for r in rows]) for cap in caps
    ]
    samples = [s for r in rows for s in r]
    truncated = [mean([s.truncated or not _fits(s, cap) for s in samples]) for cap in caps]
    return {"cap": [float(c) for c in caps], "accuracy": accuracy, "truncated": truncated}


def _fits(s: Outcome, cap: int) -> bool:
    return s.completion_tokens is None or s.completion_tokens <= cap


def length_histograms(samples: Sequence[Outcome], bins: int = 24) -> dict[str, list[float]]:
    """Completion-length histograms of correct and of wrong samples over equal-width bins from 0
    to the longest completion (the last bin holds its right edge); no token count: left out."""
    counted = [(s.completion_tokens, s.correct) for s in samples if s.completion_tokens is not None]
    width = max(1.0, max((tokens for tokens, _ in counted), default=0) / bins)
    correct, wrong = [0.0] * bins, [0.0] * bins
    for tokens, right in counted:
        (correct if right else wrong)[min(int(tokens / width), bins - 1)] += 1
    return {"edges": [i * width for i in range(bins + 1)], "correct": correct, "wrong": wrong}


def difficulty(problems: Problems) -> list[tuple[str, float]]:
    """(problem id, fraction correct), easiest first; ties by problem order."""
    items = [(pid, fraction_correct(r)) for pid, r in problems.items()]
    return sorted(items, key=lambda it: -it[1])


def _nan(value: float | None) -> float:
    return math.nan if value is None else value


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
    differs: str = ""  # the run specs' fields that differ between the two runs, with values

    @property
    def gained(self) -> list[Flip]:
        return [f for f in self.flips if f.run > f.baseline]

    @property
    def lost(self) -> list[Flip]:
        return [f for f in self.flips if f.run < f.baseline]


def paired_diff(task: str, run: Problems, baseline: Problems, pairs: dict[str, str]) -> PairedDiff:
    """Per-problem accuracy on the problems both runs hold (`pairs`: run id -> baseline id; 0
    where there are none); the standard error is that of the differences d_i = run_i -
    baseline_i, so difficulty, shared by both runs, cancels out."""
    a = [fraction_correct(run[pid]) for pid in pairs]
    b = [fraction_correct(baseline[pid]) for pid in pairs.values()]
    d = [x - y for x, y in zip(a, b, strict=True)]
    flips = [
        Flip(pid, x, y) for pid, x, y in zip(pairs, a, b, strict=True) if (x > 0.5) != (y > 0.5)
    ]
    flips.sort(key=lambda f: (-abs(f.run - f.baseline), f.problem_id))
    return PairedDiff(
        task=task,
        n_common=len(pairs),
        only_run=len(run) - len(pairs),
        only_baseline=len(baseline) - len(set(pairs.values())),
        run=mean(a) if pairs else 0.0,
        baseline=mean(b) if pairs else 0.0,
        diff=mean(d) if pairs else 0.0,
        stderr=metrics.clustered_stderr(d),
        flips=flips,
    )


def pair_problems(
    run: Problems, baseline: Problems, run_keys: dict[str, str], base_keys: dict[str, str]
) -> dict[str, str]:
    """{run problem id: baseline problem id}: the same id, else the same key (the id in the
    task's data file, found by the problem's text; else the text itself)."""
    by_key = {base_keys.get(pid, pid): pid for pid in baseline}
    pairs = {}
    for pid in run:
        other = pid if pid in baseline else by_key.get(run_keys.get(pid, pid))
        if other is not None:
            pairs[pid] = other
    return pairs


def problem_keys(source: InputRun) -> dict[str, str]:
    """problem id -> what matches it across runs with other ids: its id in the task's data
    (found by its text), else its text."""
    pids = {s.problem_id for s in source.samples}
    return {
        pid: source.reference.match.ids.get(pid) or source.prompts.get(pid) or pid for pid in pids
    }


def compare(run: Run, baseline: Run, policy: str | None = None) -> list[PairedDiff]:
    """Each run of a task against each baseline run of the same task, under `policy` (default
    the run's; the baseline is evaluated with the same options)."""
    policy = policy or run.policy
    mine, theirs = run.problems(policy), baseline.problems(policy)
    diffs = []
    tasks = Counter(f.task.name for side in (run, baseline) for f in side.files.values())
    for label, source in sorted(run.files.items()):
        for other, base in sorted(baseline.files.items()):
            if source.task.name != base.task.name:
                continue
            run_keys, base_keys = problem_keys(source), problem_keys(base)
            pairs = pair_problems(mine[label], theirs[other], run_keys, base_keys)
            # a task with one run a side is named by its task; else each run by its name
            title = source.task.name if tasks[source.task.name] == 2 else f"{label} vs {other}"
            diff = paired_diff(title, mine[label], theirs[other], pairs)
            diffs.append(replace(diff, differs=spec_differences(source, base)))
    return diffs


def spec_differences(run: InputRun, baseline: InputRun) -> str:
    """What differs between the run specs of two runs (`effort: high vs low; ...`), `none`, or
    `unknown` where a run has no spec."""
    if run.spec is None or baseline.spec is None:
        return "unknown (no run spec)"
    found = run.spec.differences(baseline.spec, merging=True)
    return (
        "; ".join(f"{name}: {_brief(a)} vs {_brief(b)}" for name, (a, b) in found.items()) or "none"
    )


def _brief(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 40 else text[:39] + "…"


PERCENTILES = (50, 90, 99)


def percentile(values: Sequence[float], q: int) -> float:
    """The q-th percentile (1-99) by linear interpolation between closest ranks; nan if empty."""
    if len(values) < 2:
        return values[0] if values else math.nan
    return quantiles(values, n=100, method="inclusive")[q - 1]


def serving_figures(samples: Sequence[Sample]) -> dict[str, dict]:
    """Per endpoint (and "all" when several): requests, output tokens, percentiles of output
    tokens/s (completion tokens / (latency - TTFT, or latency)), latency and TTFT; a request
    without a figure's fields is left out of that figure only."""
    by_endpoint: dict[str, list[Sample]] = {}
    for s in samples:
        by_endpoint.setdefault(display_url(sample_texts(s).endpoint or "unknown"), []).append(s)
    out = {ep: _serving(rows) for ep, rows in sorted(by_endpoint.items())}
    if len(out) > 1:
        out["all"] = _serving(samples)
    return out


def _serving(rows: Sequence[Sample]) -> dict:
    timed = [(s.completion_tokens, sample_texts(s)) for s in rows]
    decode = [
        (tokens, t.latency_s - (t.ttft_s or 0.0))
        for tokens, t in timed
        if tokens is not None and t.latency_s is not None
    ]
    values = {
        "tokens_per_s": [tokens / seconds for tokens, seconds in decode if seconds > 0],
        "latency_s": [t.latency_s for _, t in timed if t.latency_s is not None],
        "ttft_s": [t.ttft_s for _, t in timed if t.ttft_s is not None],
    }
    out = {key: {f"p{q}": percentile(v, q) for q in PERCENTILES} for key, v in values.items()}
    return {"requests": len(rows), "output_tokens": sum(n or 0 for n, _ in timed), **out}


@dataclass
class Run:
    """One run as the report sees it: the files eval read, each under its label (samples with
    their statuses and texts, problem texts, run spec), eval's figures per label, and the
    policy the figures count under."""

    label: str
    policy: str
    files: dict[str, InputRun]
    scores: dict[str, TaskScore]  # label -> eval's figures of that run

    @property
    def samples(self) -> list[Sample]:
        """Every sample of every file."""
        return [s for f in self.files.values() for s in f.samples]

    def problems(self, policy: str | None = None) -> dict[str, Problems]:
        """label -> problem id -> outcomes under `policy` (default: the run's)."""
        return {
            label: problems_of(f.samples, policy or self.policy) for label, f in self.files.items()
        }
