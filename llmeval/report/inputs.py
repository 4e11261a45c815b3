"""The report's input: eval's result as a report `Run`, each generation file one run of one
model on one task, labelled so that no two runs merge."""

from __future__ import annotations

from collections import Counter

from llmeval.evaluate.run import EvalResult
from llmeval.evaluate.samples import InputFile
from llmeval.report.data import Run


def run_labels(files: list[InputFile]) -> list[str]:
    """A label per file: its task, with its model where the files hold several models, and its
    file name (or more of its path) where that still leaves two files alike."""
    several = len({f.model for f in files}) > 1
    labels = [f"{f.task.name} · {f.model}" if several else f.task.name for f in files]
    for label, count in Counter(labels).items():
        if count == 1:
            continue
        group = [i for i, lab in enumerate(labels) if lab == label]
        for part in _PATH_PARTS:
            names = [f"{label} ({part(files[i].path)})" for i in group]
            if len(set(names)) == len(names):
                break
        for i, name in zip(group, names, strict=True):
            labels[i] = name
    return labels


_PATH_PARTS = (lambda p: p.name, lambda p: f"{p.parent.name}/{p.name}", str)


def run_from_eval(result: EvalResult, label: str | None = None) -> Run:
    """A report run: the files eval read (with their texts) by label, and eval's scores."""
    labels = run_labels(result.files)
    scores = [score.model_dump() for score in result.report.tasks]
    return Run(
        label=label or ", ".join(dict.fromkeys(f.model for f in result.files)),
        policy=result.report.policy,
        files=dict(zip(labels, result.files, strict=True)),
        scores=dict(zip(labels, scores, strict=True)),
    )
