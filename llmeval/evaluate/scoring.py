"""Fold the verified samples of one run into a `TaskScore` (pure: no I/O, no verification)."""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import asdict
from fractions import Fraction
from functools import lru_cache
from typing import Any

from llmeval.evaluate.extract import canonical_answer
from llmeval.evaluate.metrics import (
    Outcome,
    clustered_stderr,
    complete_rounds,
    finished_mean,
    group_by_problem,
    majority_winner,
    summarize,
)
from llmeval.evaluate.reading import InputRun
from llmeval.evaluate.samples import Sample
from llmeval.evaluate.tool_use import figures as tool_figures
from llmeval.records import GroupScore, ProblemScore, TaskScore
from llmeval.runs.names import run_settings
from llmeval.runs.pairs import missing_by_shard, missing_pairs
from llmeval.runs.spec import mixed_settings
from llmeval.verify.verifier import rational_value

# A terminating decimal (`0.5`, `-.25`, `3.`): its exact value votes with equal fractions.
_DECIMAL = re.compile(r"-?(?:\d{1,60}\.\d{0,60}|\.\d{1,60})")


@lru_cache(maxsize=65536)  # samples repeat answers
def vote_class(pred: str) -> str:
    """An answer's class in maj@k: its normal form (`canonical_answer`), and for an integer,
    integer fraction or terminating decimal its exact value, so `\\frac{2}{4}`, `1/2`, `0.5`
    and `\\dfrac{1}{2}` vote together (`0.333` and `1/3` do not: their values differ)."""
    text = canonical_answer(pred)
    value = rational_value(text)
    if value is None and _DECIMAL.fullmatch(text):
        value = Fraction(text)
    return text if value is None else str(value)


def outcome(sample: Sample, policy: str) -> Outcome:
    """A verified sample for the statistics under `policy`; a cut-off output does not vote."""
    answer = sample.answer_for(policy)
    voting = answer is not None and not sample.truncated
    return Outcome(
        problem_id=sample.problem_id,
        sample_idx=sample.sample_idx,
        status=sample.status[policy],
        truncated=sample.truncated,
        vote=vote_class(answer) if voting else None,
        completion_tokens=sample.completion_tokens,
    )


def _counts(outs: list[Outcome]) -> dict[str, Any]:
    """The sample counts a problem and a task both report."""
    statuses = Counter(o.status for o in outs)
    return {
        "n_correct": sum(o.correct for o in outs),
        "n_no_answer": statuses["no_answer"],
        "n_timeout": statuses["timeout"],
        "n_error": statuses["error"],
        "n_truncated": sum(o.truncated for o in outs),
    }


def _problem(
    pid: str, outs: list[Outcome], by_sample: dict[tuple[str, int], Sample], n: int, policy: str
) -> ProblemScore:
    counts = _counts(outs)
    winner = majority_winner(outs)
    meta = by_sample[(pid, outs[0].sample_idx)].meta
    subject, level = meta.get("subject"), meta.get("level")
    return ProblemScore.model_construct(
        problem_id=pid,
        n_samples=len(outs),
        accuracy=counts["n_correct"] / len(outs),
        n_missing=max(0, n - len(outs)),
        majority_answer=by_sample[(pid, winner.sample_idx)].answer_for(policy) if winner else None,
        majority_correct=winner is not None and winner.correct,
        subject=None if subject is None else str(subject),
        level=None if level is None else str(level),
        **counts,
    )


def _groups(problems: list[ProblemScore], attr: str) -> dict[str, GroupScore]:
    """Accuracy per subject or level, with its clustered standard error."""
    by: dict[str, list[float]] = {}
    for prob in problems:
        value = getattr(prob, attr)
        if value is not None:
            by.setdefault(value, []).append(prob.accuracy)
    return {
        name: GroupScore.model_construct(
            n_problems=len(acc), accuracy=math.fsum(acc) / len(acc), stderr=clustered_stderr(acc)
        )
        for name, acc in sorted(by.items())
    }


def accuracy(source: InputRun, policy: str) -> float | None:
    """avg@n alone: the mean over problems of the share of correct, not truncated samples."""
    by: dict[str, list[bool]] = {}
    for sample in source.samples:
        if sample.status[policy] != "ungraded":
            by.setdefault(sample.problem_id, []).append(sample.correct(policy))
    return math.fsum(sum(v) / len(v) for v in by.values()) / len(by) if by else None


def _token_means(samples: list[Sample]) -> list[float | None]:
    """Mean completion tokens, of them reasoning and answer (completion minus reasoning)
    tokens, and prompt tokens, each over the samples that report it (None: none does)."""
    completion = [s.completion_tokens for s in samples if s.completion_tokens is not None]
    reasoning = [s.reasoning_tokens for s in samples if s.reasoning_tokens is not None]
    prompt = [s.prompt_tokens for s in samples if s.prompt_tokens is not None]
    answer = [
        s.completion_tokens - s.reasoning_tokens
        for s in samples
        if s.completion_tokens is not None
        and s.reasoning_tokens is not None
        and s.reasoning_tokens <= s.completion_tokens  # (else one of them is garbage)
    ]
    return [sum(v) / len(v) if v else None for v in (completion, reasoning, answer, prompt)]


def _run_fields(source: InputRun, scored: list[Sample]) -> dict[str, Any]:
    """Which run the figures are of and what its files held besides samples: task, model,
    files and shards, settings, the problems scored against, rows left out or copied, the
    settings each scored sample was drawn under."""
    drawn: dict[str, set[int]] = {}
    for sample in scored:
        drawn.setdefault(sample.drawn, set()).add(sample.sample_idx)
    ref = source.reference
    return {
        "task": source.task.name,
        "model": source.model,
        "file": str(source.path),
        "files": [str(path) for path in source.files],
        "shards": [str(shard) for shard in source.shards],
        "settings": run_settings(source.spec),
        "n_problems_foreign": len(ref.match.foreign) if ref.match.ids else 0,
        "n_duplicates": source.duplicates,
        "n_copies": source.copies,
        "n_beyond_n": len(source.beyond_n),
        "problems_file": ref.file,
        "problems_sha256": ref.sha256,
        "problems_on_earlier_statements": ref.match.earlier,
        "mixed_settings": mixed_settings(source.spec, drawn),
        "being_written": source.being_written,
    }


def task_score(source: InputRun, policy: str) -> TaskScore:
    """The figures of one run under `policy`, from each sample's verdict status."""
    graded = [s for s in source.samples if s.status[policy] != "ungraded"]
    outs = [outcome(s, policy) for s in graded]
    groups = group_by_problem(outs)
    by_sample = {(s.problem_id, s.sample_idx): s for s in source.samples}
    # n: the run spec's (samples beyond it were left out), else the most a problem has
    n = source.spec.n_samples if source.spec else max(map(len, groups.values()), default=0)
    problems = [_problem(pid, g, by_sample, n, policy) for pid, g in groups.items()]
    counts = _counts(outs)
    failed = counts["n_no_answer"] + counts["n_timeout"] + counts["n_error"]
    missing = len(source.reference.missing)
    expected = (len(groups) + missing) * n
    # the pairs planned (problems x n) and not held: counted by index where the run has a spec
    # (llmeval's samples are numbered 0..n-1; another harness's may not be), else by count
    present = {(o.problem_id, o.sample_idx) for o in outs}
    gaps = missing_pairs([*groups, *source.reference.missing], n, present) if source.spec else []
    completion, reasoning, answer, prompt = _token_means(graded)
    summary = summarize(groups)
    rounds = complete_rounds(groups, n, missing)
    complete = bool(outs) and expected == len(outs) and not gaps
    return TaskScore.model_construct(
        **_run_fields(source, graded),
        n_problems_missing=missing,
        n_samples=n,
        samples_expected=expected,
        samples_scored=len(outs),
        samples_missing=max(expected - len(outs), len(gaps)),
        **asdict(summary),  # n_problems, accuracy, stderr, pass@k, maj@k
        n_incorrect=len(outs) - counts["n_correct"] - failed,
        n_unfinished=sum(s.unfinished for s in source.samples if s.status[policy] != "ungraded"),
        n_ungraded=len({s.problem_id for s in source.samples if s.status[policy] == "ungraded"}),
        truncation_rate=counts["n_truncated"] / len(outs) if outs else None,
        mean_completion_tokens=completion,
        mean_reasoning_tokens=reasoning,
        mean_answer_tokens=answer,
        mean_prompt_tokens=prompt,
        complete=complete,
        rounds_complete=rounds.k,
        rounds_accuracy=summary.accuracy if complete else rounds.accuracy,
        rounds_stderr=summary.stderr if complete else rounds.stderr,
        finished_mean=summary.accuracy if complete else finished_mean(outs),
        missing_by_shard=missing_by_shard(gaps, (shard.count for shard in source.shards)),
        by_subject=_groups(problems, "subject"),
        by_level=_groups(problems, "level"),
        problems=problems,
        tools=tool_figures(s.tools for s in graded),
        **counts,
    )
