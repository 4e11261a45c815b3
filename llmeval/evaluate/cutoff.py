"""The contamination view: per model, its score over the contests held after its date (the run
spec's `model_date`, else eval's `--model-date`) beside its score over all, and which contests
precede the date (their problems may be in its training data). Pure: scores in, lines out."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from llmeval.evaluate.headline import pct
from llmeval.records import TaskScore
from llmeval.runs.names import run_names
from llmeval.tasks import get_task


def contest_date(task: str) -> str | None:
    """The day a task's contest was held (or its set published); None: undated (`math`)."""
    found = get_task(task)
    return found.date if found else None


def held_before(score: TaskScore) -> bool | None:
    """Whether a run's contest was held on or before its model's date (None: no model date, or
    an undated task). ISO dates compare as text."""
    held = contest_date(score.task)
    if score.model_date is None or held is None:
        return None
    return held <= score.model_date


@dataclass
class ModelCutoff:
    """One model's runs split by their contest's date against the model's."""

    model: str
    dates: list[str] = field(default_factory=list)
    after: list[TaskScore] = field(default_factory=list)
    before: list[TaskScore] = field(default_factory=list)
    undated: list[TaskScore] = field(default_factory=list)

    @property
    def runs(self) -> list[TaskScore]:
        return [*self.after, *self.before, *self.undated]


def cutoffs(scores: Sequence[TaskScore]) -> list[ModelCutoff]:
    """Per model with a date, its runs held after it, on or before it, and undated."""
    found: dict[str, ModelCutoff] = {}
    for score, name in zip(scores, (name.model for name in run_names(scores)), strict=True):
        if score.model_date is None:
            continue
        entry = found.setdefault(name, ModelCutoff(name))
        if score.model_date not in entry.dates:
            entry.dates.append(score.model_date)
        before = held_before(score)
        group = entry.undated if before is None else entry.before if before else entry.after
        group.append(score)
    return list(found.values())


def mean_of(
    scores: Sequence[TaskScore], figure: Callable[[TaskScore], float | None]
) -> float | None:
    """The mean over runs (each task once) of a figure; None when a run has none."""
    values = [figure(s) for s in scores]
    if not values or any(v is None for v in values):
        return None
    return math.fsum(v for v in values if v is not None) / len(values)


def cutoff_lines(scores: Sequence[TaskScore]) -> list[str]:
    """The lines under eval's table (and the report's overview), one per model with a date:
    avg@n over the contests held after it (each contest weighing the same) beside over all."""
    lines = []
    for cut in cutoffs(scores):
        tasks = sorted(s.task for s in cut.after)
        contests = "the contest" if len(tasks) == 1 else f"the {len(tasks)} contests"
        after = (
            f"{pct(mean_of(cut.after, lambda s: s.accuracy))} over {contests} held after it "
            f"({', '.join(tasks)})"
            if tasks
            else "no contest held after it"
        )
        line = (
            f"after the model's date: {cut.model} ({', '.join(cut.dates)}): {after}; "
            f"{pct(mean_of(cut.runs, lambda s: s.accuracy))} over all {len(cut.runs)}"
        )
        if cut.before:
            line += f"; held on or before it: {', '.join(sorted(s.task for s in cut.before))}"
        if cut.undated:
            line += f"; undated: {', '.join(sorted(s.task for s in cut.undated))}"
        lines.append(line)
    return lines
