"""The headline figures of each run: one column list for eval's table and the report's overview
(the same names and the same text in each cell), and the lines under them (runs incomplete,
copied rows, mixed settings, ...)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from llmeval.records import CacheStats, TaskScore


def pct(value: float | None, digits: int = 1) -> str:
    """0.4567 -> '45.7': the one percent of every screen; missing (or NaN) -> 'n/a'."""
    if value is None or value != value:
        return "n/a"
    return f"{100 * value:.{digits}f}"


def pct_err(value: float | None, err: float | None) -> str:
    """A percentage with its standard error, when there is one."""
    return pct(value) if value is None or err is None else f"{pct(value)} ± {pct(err)}"


def other_policy(policy: str) -> str:
    """The policy whose accuracy is shown beside the chosen one's."""
    return "lenient" if policy == "strict" else "strict"


def title(policy: str) -> str:
    """What the columns hold, said once above (eval) or under (report) the table."""
    return (
        "percent; acc = avg@n ± clustered stderr; pass@k, pass^k (all k right) and maj@k at each "
        f"run's largest k (@k); {policy} policy"
    )


@dataclass(frozen=True)
class Column:
    """A headline column: its name and its cell of a run's scores."""

    name: str
    cell: Callable[[TaskScore], str]


def _largest_k(figures: dict[str, float]) -> str | None:
    """The largest k of a run's pass@k (its maj@k has the same): each row shows its own, so
    AIME at n = 64 beside MATH-500 at n = 8 shows pass@64, not the smallest k of all rows."""
    return max(figures, key=int) if figures else None


def _pass(score: TaskScore) -> str:
    k = _largest_k(score.pass_at_k)
    return f"{pct(score.pass_at_k[k])} @{k}" if k else "n/a"


def _pass_hat(score: TaskScore) -> str:
    k = _largest_k(score.pass_at_k)
    return pct(score.pass_hat_k.get(k)) if k else "n/a"


def _maj(score: TaskScore) -> str:
    k = _largest_k(score.pass_at_k)
    return pct(score.maj_at_k.get(k)) if k else "n/a"


def columns(scores: Sequence[TaskScore], policy: str) -> list[Column]:
    """The figures of every run, in percent: accuracy ± stderr under `policy` and the other
    policy's beside it, the judge's (where some run was judged), pass@k, pass^k and maj@k at each
    run's largest k, the no-answer share, timeouts, the truncated share, complete or how many
    missing."""
    other = other_policy(policy)
    judge = Column("judge", lambda s: pct(s.judge.accuracy if s.judge else None))
    return [
        Column("acc ± se", lambda s: pct_err(s.accuracy, s.stderr)),
        Column(other, lambda s: pct(s.policies.get(other))),
        *([judge] if any(s.judge for s in scores) else []),
        Column("pass@k", _pass),
        Column("pass^k", _pass_hat),
        Column("maj@k", _maj),
        Column("no-ans", lambda s: pct(s.n_no_answer / (s.samples_scored or 1))),
        Column("t/o", lambda s: str(s.n_timeout)),
        Column("trunc", lambda s: pct(s.truncation_rate)),
        Column("complete", lambda s: "yes" if s.complete else f"no: {s.samples_missing}"),
    ]


def notes(scores: list[TaskScore], runs: list[str]) -> list[str]:
    """The lines under the table: each incomplete run (with the shards owning its missing
    samples), drawn under mixed settings, with problems not in the task or rows not counted
    (copies, taken indices, unfinished outputs counted as truncated)."""
    lines = []
    for score, run in zip(scores, runs, strict=True):
        if not score.complete:
            owners = ", ".join(f"{k}: {v}" for k, v in score.missing_by_shard.items())
            lines.append(
                f"incomplete: {run}: {score.n_problems_missing} problems without a sample, "
                f"{score.samples_missing} samples missing in all"
                + (f"; by the shard owning them: {owners}" if owners else "")
            )
        if score.n_problems_foreign:
            lines.append(
                f"left out: {run}: {score.n_problems_foreign} problems not in the task (see "
                "the warning)"
            )
        if score.mixed_settings:
            lines.append(f"mixed settings: {run}: {score.mixed_settings}")
        if score.same_texts:
            lines.append(f"settings that changed nothing?: {run}: {score.same_texts}")
        if score.problems_on_earlier_statements:
            lines.append(f"erratum: {len(score.problems_on_earlier_statements)} problems "
                         "answered on their earlier statements: "
                         f"{_ids(score.problems_on_earlier_statements)} ({run})")  # fmt: skip
        if score.n_copies:
            lines.append(f"copies: {run}: {score.n_copies} rows repeat earlier rows of their file "
                         "(a file appended to itself?): each sample counted once")  # fmt: skip
        if score.n_beyond_n:
            lines.append(f"left out: {run}: {score.n_beyond_n} samples at a sample index beyond "
                         f"the run spec's n = {score.n_samples}")  # fmt: skip
        if score.n_duplicates:
            lines.append(f"left out: {run}: {score.n_duplicates} rows under a (problem, sample "
                         "index) another row had (in another file, or with another text or "
                         "seed)")  # fmt: skip
        if score.n_unfinished:
            lines.append(f"unfinished?: {run}: {score.n_unfinished} samples record no finish "
                         "reason and stop mid-sentence or never close their reasoning: counted "
                         "as truncated")  # fmt: skip
    return lines


def _ids(ids: list[str]) -> str:
    """Problem ids in a line, a prefix they share said once: `aime24/71, 74, 88`."""
    prefix = ids[0].rpartition("/")[0] + "/" if "/" in ids[0] else ""
    if not prefix or not all(i.startswith(prefix) for i in ids):
        return ", ".join(ids)
    return ", ".join([ids[0], *(i.removeprefix(prefix) for i in ids[1:])])


def token_notes(scores: list[TaskScore], runs: list[str]) -> list[str]:
    """The reasoning and answer tokens of each run whose rows report them (the report has its
    tokens section instead)."""
    lines = []
    for score, run in zip(scores, runs, strict=True):
        if score.mean_reasoning_tokens is not None:
            answer = score.mean_answer_tokens
            lines.append(
                f"tokens: {run}: {score.mean_reasoning_tokens:,.0f} reasoning and "
                + ("n/a" if answer is None else f"{answer:,.0f}")
                + " answer tokens per sample on average"
            )
    return lines


def cache_notes(cache: CacheStats) -> list[str]:
    """A line for each verdict cache that supplied verdicts llmeval did not write on this
    machine (shipped with someone's results, forged, or from before caches were sealed)."""
    return [
        f"verdict cache {path}: {n} verdicts used that llmeval did not write on this machine (a "
        "cache that came with the results, or an older one): --no-cache verifies every pair here"
        for path, n in sorted(cache.foreign.items())
        if n
    ]
