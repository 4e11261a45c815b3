"""The report's input: run `eval` (verdicts mostly from its cache), then join each judged
sample with the texts and timings of its generation row, which `eval` does not keep."""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from llmeval.evaluate.files import read_spec
from llmeval.evaluate.inputs import InputFile, Sample
from llmeval.evaluate.run import EvalResult
from llmeval.files import read_dicts
from llmeval.report.data import ReportSample, Run

log = logging.getLogger("llmeval")


def _text(value: Any) -> str:
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    return "" if value is None else value if isinstance(value, str) else str(value)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _extras(row: dict[str, Any], response_key: str) -> dict[str, Any]:
    """The fields of a `ReportSample` that come from the generation row, not from eval."""
    return {
        "prompt": _text(row.get("prompt")),
        "gen": _text(row.get(response_key)),
        "reasoning": _str(row.get("reasoning") or row.get("reasoning_content")),
        "finish_reason": _str(row.get("finish_reason")),
        "latency_s": _num(row.get("latency_s")),
        "ttft_s": _num(row.get("ttft_s")),
        "endpoint": _str(row.get("endpoint")),
    }


def row_extras(source: InputFile, response_key: str = "gen") -> list[dict[str, Any]]:
    """The extras of each of `source.samples`, in order: the file's rows again, a repeated
    (problem, sample) row skipped as eval skips it. Empty extras (with a warning) if the
    rows do not line up with eval's samples (or the file changed since eval read it)."""
    out: list[dict[str, Any]] = []
    seen: set[tuple[Any, Any]] = set()
    for _, row in read_dicts(source.path):
        pid = row.get("problem_id", row.get("doc_id"))
        idx = row.get("sample_idx", row.get("sample_index"))
        if idx is not None:
            key = (str(pid) if pid is not None else ("prompt", row.get("prompt")), idx)
            if key in seen:
                continue
            seen.add(key)
        if len(out) == len(source.samples) or _mismatch(source.samples[len(out)], pid, idx):
            out = []  # a row eval did not read as this sample
            break
        out.append(_extras(row, response_key))
    if len(out) != len(source.samples):
        log.warning("%s: rows do not line up with eval's samples; texts left out", source.path)
        return [{} for _ in source.samples]
    return out


def _mismatch(sample: Sample, pid: Any, idx: Any) -> bool:
    return (pid is not None and str(pid) != sample.problem_id) or (
        idx is not None and idx != sample.sample_idx
    )


def task_labels(files: list[InputFile]) -> list[str]:
    """The task name of each file, with the file name added where a task comes twice."""
    counts = Counter(f.task.name for f in files)
    return [
        f.task.name if counts[f.task.name] == 1 else f"{f.task.name} ({f.path.name})" for f in files
    ]


def _overturned(
    source: InputFile, task: str, judged: dict[int, tuple[str | None, str]]
) -> list[dict[str, Any]]:
    """The samples of one file the judge said yes to, with what it saw and said."""
    rows = []
    for i, (verdict, reply) in sorted(judged.items()):
        if verdict == "yes":
            s = source.samples[i]
            rows.append({"task": task, "problem_id": s.problem_id, "sample_idx": s.sample_idx,
                         "problem": source.prompts.get(s.problem_id, ""), "gold": s.gold,
                         "answer": s.answer, "reply": reply})  # fmt: skip
    return rows


def run_from_eval(result: EvalResult, label: str | None = None, response_key: str = "gen") -> Run:
    """A report run: every judged sample with its texts, eval's scores and the run specs."""
    run = Run(label=label or "", samples=[])
    models = []
    labels = task_labels(result.files)
    for f, (source, statuses, score, task) in enumerate(
        zip(result.files, result.statuses, result.report.tasks, labels, strict=True)
    ):
        if result.judged is not None:
            run.overturned += _overturned(source, task, result.judged.samples[f])
        extras = row_extras(source, response_key)
        for sample, status, extra in zip(source.samples, statuses, extras, strict=True):
            run.samples.append(
                ReportSample(task=task, problem_id=sample.problem_id, sample_idx=sample.sample_idx,
                             status=status, gold=sample.gold, pred=sample.pred,
                             truncated=sample.truncated, tokens=sample.completion_tokens,
                             meta=sample.meta, **extra)
            )  # fmt: skip
        run.scores[task] = score.model_dump()
        spec = read_spec(source.path)
        if spec is not None:
            run.specs[task] = spec.model_dump()
            models.append(spec.model)
    run.label = label or ", ".join(dict.fromkeys(models)) or result.files[0].path.stem
    return run
