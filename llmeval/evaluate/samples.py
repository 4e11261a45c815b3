"""The sample reader of `eval`: the rows of a generation file as slim samples. Rows are ours
(`Generation`), upstream LLMEval's (`prompt`, `answer`, `gen` as a string or a one-element
list, optional `doc_id`/`sample_index`) or other harnesses' (a list of n outputs in the
response field, other keys named by flags). Big texts are dropped after extraction unless
the report asks for them."""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llmeval.errors import InputError
from llmeval.evaluate.answers import read_answers
from llmeval.evaluate.copies import Copies, count_repeats, fingerprint
from llmeval.evaluate.discover import META_FIELDS, model_folder, read_spec, resolve_task
from llmeval.evaluate.extract import THINK_OPEN, TRUNCATED_REASONS
from llmeval.evaluate.layouts import (
    MISSING,
    RowSource,
    explicit_index,
    missing_fields,
    nested,
    output_tokens,
    reasoning_of,
    seconds,
    text_field,
)
from llmeval.evaluate.options import RowKeys
from llmeval.records import CONTEXT_REJECTED, RunSpec
from llmeval.tasks import Task

log = logging.getLogger("llmeval")
PROBLEM_TEXT_KEYS = ("prompt", "problem", "question")  # where a row's problem text may be


@dataclass(frozen=True, slots=True)
class Texts:
    """What the report shows of a sample beyond its verdict (kept only when asked for)."""

    gen: str
    reasoning: str | None
    finish_reason: str | None
    latency_s: float | None
    ttft_s: float | None
    endpoint: str | None


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
    anchored: str | None = None  # the lenient policy's own reading (unboxed answer, letter)
    texts: Texts | None = None
    # set by eval: the verdict status under each policy (`ungraded` without a gold), and the
    # LLM judge's "yes" / "no" / "" (no verdict) with its reply, where it was asked
    status: dict[str, str] = field(default_factory=dict)
    judge: str | None = None
    judge_reply: str = ""

    @property
    def answer(self) -> str | None:
        """The answer under the lenient policy: its own reading, else the boxed one."""
        return self.anchored if self.anchored is not None else self.pred

    def answer_for(self, policy: str) -> str | None:
        """The answer a policy judges: the boxed one; under lenient, its own reading first."""
        return self.answer if policy == "lenient" else self.pred

    def correct(self, policy: str) -> bool:
        """What every figure counts as right: verified correct, and not cut off."""
        return self.status[policy] == "correct" and not self.truncated


@dataclass
class InputFile:
    """One generation file read: its task and model, samples, run spec, duplicates dropped."""

    path: Path
    task: Task
    samples: list[Sample] = field(default_factory=list)
    spec: RunSpec | None = None
    duplicates: int = 0  # rows under a (problem, sample index) another sample had: left out
    copies: int = 0  # rows that copy an earlier row exactly: one sample, counted once
    prompts: dict[str, str] = field(default_factory=dict)  # problem id -> its text (judge)
    model: str = ""  # the run spec's, else the rows' `model`, else the folder's name
    problems_missing: list[str] = field(default_factory=list)  # asked, but without a sample
    reference_ids: dict[str, str] = field(default_factory=dict)  # id -> the data file's id
    # the sample indices drawn under each settings id the rows record (None: rows without one)
    settings: dict[str | None, set[int]] = field(default_factory=dict)


class _RowReader:
    """Turns the rows of one file into samples, numbering id-less rows per problem; exact
    copies of earlier rows and rows under a taken (problem, sample index) are left out."""

    def __init__(self, path: Path, task: Task, keys: RowKeys, keep_texts: bool) -> None:
        self.path, self.task, self.keys, self.keep_texts = path, task, keys, keep_texts
        self.counters: Counter[str] = Counter()
        self.copies = Copies()

    def samples(self, lineno: int, row: dict[str, Any]) -> list[Sample]:
        """The samples of one row: one, or one per output when the response field is a list."""
        key = self.keys.response
        value = nested(row, key)
        missing = missing_fields(row, self.keys.fields, problem_text(row) is not None)
        if value is MISSING or any("--id-key" in m for m in missing):
            raise InputError(
                self.path,
                f"no field {', no field '.join(missing)} (the row has: "
                f"{', '.join(sorted(row)[:20])}); name them with those flags",
                line=lineno,
            )
        outputs = value if isinstance(value, list) else [value]
        if not outputs:
            raise InputError(self.path, f"{key}: an empty list of outputs", line=lineno)
        answer = nested(row, self.keys.answer)
        gold = text_field(answer, self.keys.answer, self.path, lineno).strip()
        problem_id = self.problem_id(row, lineno)
        meta = dict(row["meta"]) if isinstance(row.get("meta"), dict) else {}
        meta.update({name: row[name] for name in META_FIELDS if name in row})
        texts = [(j, text_field(out, key, self.path, lineno)) for j, out in enumerate(outputs)]
        if explicit_index(row) is None:  # an exact copy of an earlier row is no new sample
            seed, reasoning = row.get("seed"), reasoning_of(row)
            texts = [
                (j, gen)
                for j, gen in texts
                if not self.copies.is_copy(problem_id, j, fingerprint(gen, reasoning, seed), lineno)
            ]
        first = self._first_index(row, problem_id, len(texts), lineno)
        out = [
            self._sample(row, gen, problem_id, first + i, gold, meta, j)
            for i, (j, gen) in enumerate(texts)
        ]
        return [s for s in out if self.copies.is_new((problem_id, s.sample_idx), lineno)]

    def _sample(
        self,
        row: dict[str, Any],
        gen: str,
        pid: str,
        idx: int,
        gold: str,
        meta: dict[str, Any],
        position: int,
    ) -> Sample:
        prompt = row.get("prompt")
        starts_in_think = isinstance(prompt, str) and prompt.rstrip().endswith(THINK_OPEN)
        reasoning = reasoning_of(row)
        output = (gen, reasoning, starts_in_think)
        finish = row.get("finish_reason")
        truncated = finish in TRUNCATED_REASONS
        pred, anchored = read_answers(self.task.kind, output, truncated, gold, problem_text(row))
        texts = None
        if self.keep_texts:
            endpoint = row.get("endpoint")
            texts = Texts(
                gen,
                reasoning,
                finish if isinstance(finish, str) else None,
                seconds(row.get("latency_s")),
                seconds(row.get("ttft_s")),
                endpoint if isinstance(endpoint, str) else None,
            )
        tokens = output_tokens(row, position)
        return Sample(pid, idx, gold, pred, truncated, tokens, meta, anchored, texts)

    def problem_id(self, row: dict[str, Any], lineno: int) -> str:
        """The id under --id-key, else ours or upstream's, else derived from the problem text."""
        if self.keys.id is not None:
            return text_field(nested(row, self.keys.id), self.keys.id, self.path, lineno)
        pid = row.get("problem_id", row.get("doc_id"))
        if pid is not None:
            return text_field(pid, "problem_id", self.path, lineno)
        text = problem_text(row) or ""
        return "prompt-" + hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()[:12]

    def _first_index(self, row: dict[str, Any], pid: str, outputs: int, lineno: int) -> int:
        """The sample index of the row's first output: its own, else the next free one."""
        idx = explicit_index(row)
        if idx is not None and outputs > 1:
            raise InputError(self.path, f"a sample index and {outputs} outputs", line=lineno)
        if idx is None:
            idx = self.counters[pid]
        if isinstance(idx, bool) or not isinstance(idx, int) or idx < 0:
            raise InputError(self.path, f"bad sample index {idx!r}", line=lineno)
        self.counters[pid] = max(self.counters[pid], idx + outputs)
        return idx


def problem_text(row: dict[str, Any]) -> str | None:
    """The problem (or the prompt holding it) of a row, if it has one."""
    return next((row[k] for k in PROBLEM_TEXT_KEYS if isinstance(row.get(k), str)), None)


def _model(spec: RunSpec | None, models: Counter[str], path: Path) -> str:
    """The run's model: the run spec's, else the rows' (warned when they differ), else the
    nearest folder that is not a benchmark's."""
    if spec is not None:
        return spec.model
    if len(models) > 1:
        named = ", ".join(f"{m} ({n} rows)" for m, n in models.most_common(5))
        log.warning("%s: rows of several models (%s), scored as one run", path, named)
    return models.most_common(1)[0][0] if models else model_folder(path)


def read_input(
    path: Path,
    task_flag: str | None,
    keys: RowKeys | None = None,
    keep_texts: bool = False,
    model: str | None = None,
) -> InputFile:
    """Read one generation file (ours, upstream's or another harness's, as written); copies of
    rows and rows under a taken (problem, sample index) are left out and counted. `model`
    (--model) names the run's model."""
    keys = keys or RowKeys()
    spec = read_spec(path)
    result = InputFile(path, resolve_task(path, task_flag, spec), spec=spec)
    reader = _RowReader(path, result.task, keys, keep_texts)
    rows = RowSource(path, keys.lm_filter)
    first_row, rejected = None, 0
    models: Counter[str] = Counter()
    for lineno, row in rows:
        first_row = first_row or row
        if row.get("finish_reason") == CONTEXT_REJECTED:  # not a sample (see records)
            rejected += 1
            continue
        if isinstance(row.get("model"), str):
            models[row["model"]] += 1
        drawn = row.get("settings") if isinstance(row.get("settings"), str) else None
        for sample in reader.samples(lineno, row):
            result.samples.append(sample)
            result.settings.setdefault(drawn, set()).add(sample.sample_idx)
            text = problem_text(row)
            if text is not None:
                result.prompts.setdefault(sample.problem_id, text)
    rows.said()
    if first_row is None:
        raise InputError(path, "no samples in the file (empty)")
    if not any(s.gold for s in result.samples):
        raise InputError(
            path,
            f"no row has a gold answer under {keys.answer!r} (a row has: "
            f"{', '.join(sorted(first_row)[:20])}); name it with --answer-key",
        )
    if rejected:
        log.warning(
            "%s: %d rows are empty samples an older infer wrote when the server refused them for "
            "context length: counted as missing; rerun infer to ask for them",
            path,
            rejected,
        )
    result.copies, result.duplicates = count_repeats(reader.copies, rows, keys.response,
                                                     reader.problem_id)  # fmt: skip
    result.model = model or _model(spec, models, path)
    return result
