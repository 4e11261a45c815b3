"""How far runs in progress are and what they score so far: coverage, the complete-rounds
estimate (avg@k over the rounds every planned problem has finished) and the provisional mean
over all finished samples, as a rich table (eval's table, `eval --follow` on a terminal) and
as one plain line per refresh (`eval --follow` elsewhere)."""

from __future__ import annotations

from rich import box
from rich.table import Table
from rich.text import Text

from llmeval.evaluate.headline import pct, pct_err
from llmeval.records import TaskScore
from llmeval.runs.names import run_names

NO_ROUND = "none yet"  # k = 0: some planned problem has no sample 0
NO_ROUND_NOTE = (
    "rounds: k of n, the sample indices 0..k-1 every planned problem has finished; avg@k "
    "over them is unbiased by which samples finish first. 'none yet' (k = 0): some problem "
    "has no sample 0 yet, so no figure can be given. The mean over all finished samples reads "
    "high while short answers, more often right, finish first: provisional until complete."
)


def coverage(score: TaskScore) -> tuple[str, str]:
    """(samples done / planned, problems with a sample / all planned)."""
    planned = score.n_problems + score.n_problems_missing
    return f"{score.samples_scored}/{score.samples_expected}", f"{score.n_problems}/{planned}"


def rounds_cell(score: TaskScore) -> str:
    """`48.3 ± 5.1`: avg@k with its stderr; `none yet` for k = 0."""
    if not score.rounds_complete or score.rounds_accuracy is None:
        return NO_ROUND
    return pct_err(score.rounds_accuracy, score.rounds_stderr)


def mean_cell(score: TaskScore) -> str:
    """The mean over finished samples, marked provisional while the run is incomplete."""
    value = pct(score.finished_mean)
    return value if score.complete else f"{value} (provisional)"


def progress_table(scores: list[TaskScore], names: list[str] | None = None) -> Table:
    """One row per run (`names`: theirs among the runs shown beside them; default, among
    these): coverage, complete rounds, avg@k ± stderr, the finished mean."""
    table = Table(
        title="runs in progress: percent",
        box=box.SIMPLE_HEAD,
        padding=0,
        show_edge=False,
        pad_edge=False,
    )
    table.add_column("run", overflow="fold", min_width=16)
    for name in ("samples", "problems", "rounds", "avg@k ± se", "finished mean", "complete"):
        table.add_column(name, justify="right", no_wrap=True)
    names = names or [str(name) for name in run_names(scores)]
    for score, label in zip(scores, names, strict=True):
        samples, problems = coverage(score)
        table.add_row(
            Text(label),  # a model name a server chose (`[/]`), never markup
            samples,
            problems,
            f"{score.rounds_complete}/{score.n_samples}",
            rounds_cell(score),
            mean_cell(score),
            "yes" if score.complete else "no",
        )
    return table


def progress_text(score: TaskScore) -> str:
    """A run's coverage and figures in words: `120/240 samples, 30/30 problems, rounds 2/8:
    avg@2 46.7 ± 7.0, finished mean 58.3 (provisional)` (eval --follow's lines, the report's
    headline of a run in progress)."""
    samples, problems = coverage(score)
    k = score.rounds_complete
    rounds = rounds_cell(score)
    estimate = f"avg@{k} {rounds}" if rounds != NO_ROUND else f"avg@k {NO_ROUND}"
    return (
        f"{samples} samples, {problems} problems, rounds {k}/{score.n_samples}: {estimate}, "
        f"finished mean {mean_cell(score)}"
    )


def progress_line(scores: list[TaskScore]) -> str:
    """Every run in one plain line: `aime24 · m: ` and its `progress_text`, `; complete` once
    it is, runs separated by ` | `."""
    return " | ".join(
        f"{label}: {progress_text(score)}" + ("; complete" if score.complete else "")
        for score, label in zip(scores, [str(name) for name in run_names(scores)], strict=True)
    )
