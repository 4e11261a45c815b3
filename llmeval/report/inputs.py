"""The report's input: eval's result as a report `Run`, each run of one model on one task
(a file, or a run's shards) under a label that tells it from the others, so no two merge."""

from __future__ import annotations

import json

from llmeval.evaluate.run import EvalResult
from llmeval.report.data import Run
from llmeval.runs.names import run_names, setting_labels


def run_from_eval(result: EvalResult, label: str | None = None) -> Run:
    """A report run: the runs eval read (with their texts) by label, and eval's scores."""
    labels = [str(name) for name in run_names(result.report.tasks)]
    return Run(
        label=label or ", ".join(dict.fromkeys(r.model for r in result.runs)),
        policy=result.report.policy,
        files=dict(zip(labels, result.runs, strict=True)),
        scores=dict(zip(labels, result.report.tasks, strict=True)),
    )


def tell_apart(current: Run, baseline: Run) -> None:
    """Two sides named alike (one model): each named also by the settings that differ between
    them, where each side's runs share theirs (`Qwen3-8B · effort=high` against `Qwen3-8B ·
    effort=low`); the baseline `(baseline)` where that still leaves them alike."""
    if baseline.label != current.label:
        return
    sides = []
    for run in (current, baseline):
        kinds = {json.dumps(s.settings, sort_keys=True) for s in run.scores.values()}
        sides.append(json.loads(kinds.pop()) if len(kinds) == 1 else {})
    extra = setting_labels(sides)
    labels = [f"{current.label} · {extra[0]}", f"{baseline.label} · {extra[1]}"]
    labels = [label.removesuffix(" · ") for label in labels]
    if labels[0] == labels[1]:
        labels[1] += " (baseline)"
    current.label, baseline.label = labels
