"""Inputs of `eval`: find generation files, resolve their task, read rows into slim samples.

Rows are ours (`Generation`) or upstream LLMEval's (`prompt`, `answer`, `gen` as a string or
a one-element list, optional `doc_id`/`sample_index`). Big texts are dropped after extraction.
"""

from __future__ import annotations

import glob
import hashlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from llmeval.errors import InputError, UsageError
from llmeval.extract import THINK_OPEN, extract_choice, extract_math, is_truncated
from llmeval.jsonl import read_dicts, read_models
from llmeval.records import RunSpec
from llmeval.tasks import Task, get_task, task_from_filename

SIDE_SUFFIXES = (".verdicts.jsonl", ".spec.json")


@dataclass(slots=True)
class Sample:
    """What scoring needs of one generation: ids, gold, the extracted answer, the ending."""

    problem_id: str
    sample_idx: int
    gold: str
    pred: str | None
    truncated: bool
    completion_tokens: int | None
    meta: dict[str, Any]


@dataclass
class InputFile:
    """One generation file read: its task, samples, the run spec's n, duplicates dropped."""

    path: Path
    task: Task
    samples: list[Sample] = field(default_factory=list)
    spec_n: int | None = None
    duplicates: int = 0


def discover(paths: list[str]) -> list[Path]:
    """Files named, `*.jsonl` files in folders named, glob matches; caches and exports skipped."""
    found: list[Path] = []
    for raw in paths:
        matches = sorted(glob.glob(raw)) if glob.has_magic(raw) else [raw]
        if not matches:
            raise InputError(raw, "no file matches this pattern")
        for match in matches:
            path = Path(match)
            if path.is_dir():
                found.extend(p for p in sorted(path.glob("*.jsonl")) if _is_generation_file(p))
            elif not glob.has_magic(raw) or _is_generation_file(path):
                found.append(path)
    unique = list(dict.fromkeys(p.resolve() for p in found))
    if not unique:
        raise InputError(", ".join(paths), "no generation files (*.jsonl) found")
    return unique


def _is_generation_file(path: Path) -> bool:
    name = path.name
    return name.endswith(".jsonl") and not name.startswith(".") and not name.endswith(SIDE_SUFFIXES)


def read_spec(path: Path) -> RunSpec | None:
    """The run spec beside a generation file (`<file>.spec.json`), if there is one."""
    spec_path = path.with_name(path.name + ".spec.json")
    if not spec_path.exists():
        return None
    try:
        return RunSpec.model_validate_json(spec_path.read_bytes())
    except ValidationError as exc:
        raise InputError(spec_path, f"not a run spec ({exc.errors()[0]['msg']})") from None


def resolve_task(path: Path, flag: str | None, spec: RunSpec | None) -> Task:
    """The task from `--task`, else the run spec, else the file name; else a clear error."""
    if flag:
        task = get_task(flag)
        if task is None:
            raise UsageError(f"unknown task {flag!r}")
        return task
    if spec is not None and spec.task:
        task = get_task(spec.task)
        if task is not None:
            return task
    task = task_from_filename(path)
    if task is None:
        raise InputError(path, "cannot tell the task from the file name; pass --task NAME")
    return task


def _text(value: Any, what: str, path: Path, lineno: int) -> str:
    """A text field as text: numbers (27, 27.0) and one-element lists are unwrapped."""
    if isinstance(value, list):
        if len(value) != 1:
            raise InputError(path, f"{what}: expected one element, got {len(value)}", line=lineno)
        value = value[0]
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise InputError(path, f"{what}: expected text, got {type(value).__name__}", line=lineno)
    return value if isinstance(value, str) else str(value)


class _RowReader:
    """Turns the rows of one file into samples, numbering id-less rows per problem."""

    def __init__(self, path: Path, task: Task, answer_key: str, response_key: str) -> None:
        self.path, self.task = path, task
        self.answer_key, self.response_key = answer_key, response_key
        self.counters: Counter[str] = Counter()

    def sample(self, lineno: int, row: dict[str, Any]) -> Sample:
        for key in (self.answer_key, self.response_key):
            if key not in row:
                raise InputError(self.path, f"no {key!r} field", line=lineno)
        gold = _text(row[self.answer_key], self.answer_key, self.path, lineno)
        gen = row[self.response_key]
        gen = "" if gen is None else _text(gen, self.response_key, self.path, lineno)
        problem_id, sample_idx = self._ids(row, lineno)
        prompt = row.get("prompt")
        starts_in_think = isinstance(prompt, str) and prompt.rstrip().endswith(THINK_OPEN)
        reasoning = row.get("reasoning") or row.get("reasoning_content")
        extract = extract_choice if self.task.kind == "choice" else extract_math
        usage = row.get("usage")
        tokens = usage.get("completion_tokens") if isinstance(usage, dict) else None
        return Sample(
            problem_id=problem_id,
            sample_idx=sample_idx,
            gold=gold,
            pred=extract(gen, reasoning if isinstance(reasoning, str) else None, starts_in_think),
            truncated=is_truncated(row.get("finish_reason")),
            completion_tokens=tokens if isinstance(tokens, int) else None,
            meta=_meta(row),
        )

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


class _Row(BaseModel):
    """The fields `eval` reads from a row (ours or upstream); parsing only these is fast."""

    model_config = ConfigDict(extra="ignore")

    problem_id: Any = None
    sample_idx: Any = None
    doc_id: Any = None
    sample_index: Any = None
    prompt: Any = None
    answer: Any = None
    gen: Any = None
    reasoning: Any = None
    reasoning_content: Any = None
    finish_reason: Any = None
    usage: Any = None
    meta: Any = None
    subject: Any = None
    level: Any = None


def _rows(path: Path, answer_key: str, response_key: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Rows as dicts; with the default keys only the fields eval reads are parsed."""
    if (answer_key, response_key) != ("answer", "gen"):
        yield from read_dicts(path)
        return
    for lineno, row in read_models(path, _Row):
        yield lineno, row.model_dump(exclude_unset=True)


def _meta(row: dict[str, Any]) -> dict[str, Any]:
    meta = dict(row["meta"]) if isinstance(row.get("meta"), dict) else {}
    for name in ("subject", "level"):
        if name in row and name not in meta:
            meta[name] = row[name]
    return meta


def read_input(
    path: Path, task_flag: str | None, answer_key: str = "answer", response_key: str = "gen"
) -> InputFile:
    """Read one generation file; the first of duplicate (problem, sample) rows is kept."""
    spec = read_spec(path)
    task = resolve_task(path, task_flag, spec)
    result = InputFile(path, task, spec_n=spec.n_samples if spec else None)
    reader = _RowReader(path, task, answer_key, response_key)
    seen: set[tuple[str, int]] = set()
    for lineno, row in _rows(path, answer_key, response_key):
        sample = reader.sample(lineno, row)
        key = (sample.problem_id, sample.sample_idx)
        if key in seen:
            result.duplicates += 1
            continue
        seen.add(key)
        result.samples.append(sample)
    return result
