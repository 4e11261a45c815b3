"""The report's input: eval's scored samples (read with their texts) as a report `Run`, each
generation file one run of one model on one task, labelled so that no two runs merge."""

from __future__ import annotations

from collections import Counter
from typing import Any

from llmeval.evaluate.run import EvalResult
from llmeval.evaluate.samples import InputFile, Sample, Texts
from llmeval.report.data import ReportSample, Run


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
_NO_TEXTS = Texts("", None, None, None, None, None)


def _report_sample(label: str, source: InputFile, s: Sample, policy: str) -> ReportSample:
    texts = s.texts or _NO_TEXTS
    return ReportSample(
        task=label,
        problem_id=s.problem_id,
        sample_idx=s.sample_idx,
        status=s.status[policy],
        gold=s.gold,
        pred=s.answer_for(policy),
        truncated=s.truncated,
        tokens=s.completion_tokens,
        meta=s.meta,
        prompt=source.prompts.get(s.problem_id, ""),
        gen=texts.gen,
        reasoning=texts.reasoning,
        finish_reason=texts.finish_reason,
        latency_s=texts.latency_s,
        ttft_s=texts.ttft_s,
        endpoint=texts.endpoint,
    )


def _overturned(label: str, source: InputFile, policy: str) -> list[dict[str, Any]]:
    """The samples of one file the judge said yes to, with what it saw and said."""
    return [
        {
            "task": label,
            "problem_id": s.problem_id,
            "sample_idx": s.sample_idx,
            "problem": source.prompts.get(s.problem_id, ""),
            "gold": s.gold,
            "answer": s.answer_for(policy),
            "reply": s.judge_reply,
        }
        for s in source.samples
        if s.judge == "yes"
    ]


def _key(source: InputFile, pid: str) -> str:
    """What matches a problem across runs with other ids: its id in the task's data (found by
    its text), else its text."""
    return source.reference_ids.get(pid) or source.prompts.get(pid) or pid


def run_from_eval(result: EvalResult, label: str | None = None) -> Run:
    """A report run: every scored sample with its texts, eval's scores and the run specs."""
    policy = result.report.policy
    run = Run(label=label or "", samples=[])
    labels = run_labels(result.files)
    for source, name, score in zip(result.files, labels, result.report.tasks, strict=True):
        run.samples += [_report_sample(name, source, s, policy) for s in source.samples]
        run.overturned += _overturned(name, source, policy)
        run.scores[name] = score.model_dump()
        run.tasks[name] = source.task.name
        run.keys[name] = {pid: _key(source, pid) for pid in {s.problem_id for s in source.samples}}
        if source.spec is not None:
            run.specs[name] = source.spec.model_dump()
    run.label = label or ", ".join(dict.fromkeys(f.model for f in result.files))
    return run
