"""Inputs of `eval`: read the rows of a generation file into slim samples. Rows are ours
(`Generation`) or upstream LLMEval's (`prompt`, `answer`, `gen` as a string or a one-element
list, optional `doc_id`/`sample_index`). Big texts are dropped after extraction."""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llmeval.errors import InputError
from llmeval.evaluate.extract import (
    THINK_OPEN,
    TRUNCATED_REASONS,
    extract_anchored,
    extract_choice,
    extract_math,
)
from llmeval.evaluate.files import META_FIELDS, problem_meta, read_spec, resolve_task
from llmeval.files import read_dicts
from llmeval.records import CONTEXT_REJECTED, token_count
from llmeval.tasks import Task

log = logging.getLogger("llmeval")


@dataclass(slots=True)
class Sample:
    """What scoring needs of one generation: ids, gold, the extracted answer, the ending."""

    problem_id: str
    sample_idx: int
    gold: str  # "" when the row has none: the sample is not graded
    pred: str | None  # the final boxed answer (letter for choice tasks)
    truncated: bool
    completion_tokens: int | None
    meta: dict[str, Any]
    anchored: str | None = None  # no box: the answer after a final-answer anchor (lenient)

    @property
    def answer(self) -> str | None:
        """The answer under the lenient policy: the boxed one, else the anchored one."""
        return self.pred if self.pred is not None else self.anchored

    def answer_for(self, policy: str) -> str | None:
        """The answer a policy judges: the boxed one; under lenient, else the anchored one."""
        return self.answer if policy == "lenient" else self.pred


@dataclass
class InputFile:
    """One generation file read: its task, samples, the run spec's n, duplicates dropped."""

    path: Path
    task: Task
    samples: list[Sample] = field(default_factory=list)
    spec_n: int | None = None
    duplicates: int = 0
    prompts: dict[str, str] = field(default_factory=dict)  # problem id -> its prompt (judge)


def _text(value: Any, what: str, path: Path, lineno: int) -> str:
    """A text field as text: numbers (27, 27.0) and one-element lists unwrapped, None empty."""
    if value is None:
        return ""
    if isinstance(value, list):
        if len(value) != 1:
            raise InputError(path, f"{what}: expected one element, got {len(value)}", line=lineno)
        value = value[0]
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise InputError(path, f"{what}: expected text, got {type(value).__name__}", line=lineno)
    return str(value)


class _RowReader:
    """Turns the rows of one file into samples, numbering id-less rows per problem."""

    def __init__(self, path: Path, task: Task, answer_key: str, response_key: str) -> None:
        self.path, self.task = path, task
        self.answer_key, self.response_key = answer_key, response_key
        self.counters: Counter[str] = Counter()
        self.data_meta: dict[str, dict[str, Any]] = {}

    def sample(self, lineno: int, row: dict[str, Any]) -> Sample:
        if self.response_key not in row:  # (a missing gold: the sample is not graded)
            raise InputError(self.path, f"no {self.response_key!r} field", line=lineno)
        gold = _text(row.get(self.answer_key), self.answer_key, self.path, lineno).strip()
        gen = _text(row[self.response_key], self.response_key, self.path, lineno)
        problem_id, sample_idx = self._ids(row, lineno)
        prompt = row.get("prompt")
        starts_in_think = isinstance(prompt, str) and prompt.rstrip().endswith(THINK_OPEN)
        reasoning = row.get("reasoning") or row.get("reasoning_content")
        output = (gen, reasoning if isinstance(reasoning, str) else None, starts_in_think)
        truncated = row.get("finish_reason") in TRUNCATED_REASONS
        pred = extract_choice(*output) if self.task.kind == "choice" else extract_math(*output)
        anchored = None  # the lenient policy's answer of a finished math output without a box
        if pred is None and self.task.kind == "math" and not truncated:
            anchored = extract_anchored(*output)
        usage = row.get("usage")
        tokens = usage.get("completion_tokens") if isinstance(usage, dict) else None
        return Sample(
            problem_id=problem_id,
            sample_idx=sample_idx,
            gold=gold,
            pred=pred,
            truncated=truncated,
            completion_tokens=token_count(tokens),
            meta=self._meta(problem_id, row),
            anchored=anchored,
        )

    def _meta(self, problem_id: str, row: dict[str, Any]) -> dict[str, Any]:
        """The row's metadata, completed from the task's data file (one look-up per problem)."""
        meta = dict(row["meta"]) if isinstance(row.get("meta"), dict) else {}
        for name in META_FIELDS:
            if name in row:
                meta.setdefault(name, row[name])
        if all(name in meta for name in META_FIELDS):
            return meta
        if problem_id not in self.data_meta:
            self.data_meta[problem_id] = problem_meta(self.task, problem_id, row.get("prompt"))
        return {**self.data_meta[problem_id], **meta}

    def _ids(self, row: dict[str, Any], lineno: int) -> tuple[str, int]:
        """(problem id, sample index): ours, upstream's, or numbered in order per prompt."""
        pid = row.get("problem_id", row.get("doc_id"))
        if pid is None:
            prompt = row.get("prompt")
            if not isinstance(prompt, str):
                raise InputError(self.path, "no problem_id, doc_id or prompt", line=lineno)
            pid = "prompt-" + hashlib.sha1(prompt.encode()).hexdigest()[:12]
        pid = str(pid)
        idx = row.get("sample_idx", row.get("sample_index"))
        if idx is None:
            idx = self.counters[pid]
        if isinstance(idx, bool) or not isinstance(idx, int) or idx < 0:
            raise InputError(self.path, f"bad sample index {idx!r}", line=lineno)
        self.counters[pid] = max(self.counters[pid], idx + 1)
        return pid, idx


def read_input(
    path: Path, task_flag: str | None, answer_key: str = "answer", response_key: str = "gen"
) -> InputFile:
    """Read one generation file; the first of duplicate (problem, sample) rows is kept."""
    spec = read_spec(path)
    task = resolve_task(path, task_flag, spec)
    result = InputFile(path, task, spec_n=spec.n_samples if spec else None)
    reader = _RowReader(path, task, answer_key, response_key)
    seen: dict[tuple[str, int], int] = {}
    first_repeat, rejected = "", 0
    for lineno, row in read_dicts(path):
        if row.get("finish_reason") == CONTEXT_REJECTED:  # not a sample (see records)
            rejected += 1
            continue
        sample = reader.sample(lineno, row)
        pair = (sample.problem_id, sample.sample_idx)
        if pair in seen:
            if not result.duplicates:
                first_repeat = f"{path}:{lineno}: {pair[0]}#{pair[1]} (first: {seen[pair]})"
            result.duplicates += 1
            continue
        seen[pair] = lineno
        result.samples.append(sample)
        if isinstance(row.get("prompt"), str):
            result.prompts.setdefault(sample.problem_id, row["prompt"])
    if not result.samples:
        raise InputError(path, "no samples in the file (empty)")
    if not any(s.gold for s in result.samples):
        raise InputError(path, f"no row has a gold answer ({answer_key!r})")
    if rejected:
        log.warning(
            "%s: %d rows are empty samples an older infer wrote when the server refused them for "
            "context length: counted as missing; rerun infer to ask for them", path, rejected,
        )  # fmt: skip
    if result.duplicates:
        count = result.duplicates
        log.warning(
            "%s; %d repeated (problem, sample) rows, each counted once", first_repeat, count
        )
    return result
