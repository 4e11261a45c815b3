"""The report's input: eval's judged samples joined with the texts and timings of their
generation rows, which eval does not keep."""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from llmeval.evaluate.files import read_spec
from llmeval.evaluate.inputs import InputFile
from llmeval.evaluate.run import EvalResult
from llmeval.files import read_dicts
from llmeval.records import CONTEXT_REJECTED
from llmeval.report.data import ReportSample, Run

log = logging.getLogger("llmeval")


def _text(value: Any) -> str:
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    return "" if value is None else str(value)


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


def row_extras(source: InputFile, response_key: str) -> list[dict[str, Any]]:
    """The extras of each of `source.samples`, from the file's rows read again (a repeated
    (problem, sample) row skipped, as eval skips it); all empty, with a warning, if the rows
    do not line up with eval's samples (or the file changed since eval read it)."""
    rows: list[tuple[Any, Any, dict[str, Any]]] = []
    seen: set[tuple[Any, Any]] = set()
    for _, row in read_dicts(source.path):
        if row.get("finish_reason") == CONTEXT_REJECTED:  # not a sample, as for eval
            continue
        pid = row.get("problem_id", row.get("doc_id"))
        idx = row.get("sample_idx", row.get("sample_index"))
        key = (str(pid) if pid is not None else ("prompt", row.get("prompt")), idx)
        if idx is not None and key in seen:
            continue
        seen.add(key)
        rows.append((pid, idx, row))
    if len(rows) == len(source.samples) and all(
        (pid is None or str(pid) == s.problem_id) and (idx is None or idx == s.sample_idx)
        for (pid, idx, _), s in zip(rows, source.samples, strict=True)
    ):
        return [_extras(row, response_key) for _, _, row in rows]
    log.warning("%s: rows do not line up with eval's samples; texts left out", source.path)
    return [{} for _ in source.samples]


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
    for f, (source, task) in enumerate(zip(result.files, task_labels(result.files), strict=True)):
        extras = row_extras(source, response_key)
        for sample, status, extra in zip(source.samples, result.statuses[f], extras, strict=True):
            run.samples.append(
                ReportSample(task=task, problem_id=sample.problem_id, sample_idx=sample.sample_idx,
                             status=status, gold=sample.gold, pred=sample.pred,
                             truncated=sample.truncated, tokens=sample.completion_tokens,
                             meta=sample.meta, **extra)
            )  # fmt: skip
        if result.judged is not None:
            run.overturned += _overturned(source, task, result.judged.samples[f])
        run.scores[task] = result.report.tasks[f].model_dump()
        spec = read_spec(source.path)
        if spec is not None:
            run.specs[task] = spec.model_dump()
            models.append(spec.model)
    run.label = label or ", ".join(dict.fromkeys(models)) or result.files[0].path.stem
    return run
