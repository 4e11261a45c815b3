"""The sample reader of `eval`: the rows of a generation file as slim samples. Rows are ours
(`Generation`), upstream LLMEval's (`prompt`, `answer`, `gen` as a string or a one-element
list, optional `doc_id`/`sample_index`) or other harnesses' (a list of n outputs in the
response field, other keys named by flags). Big texts are dropped after extraction unless
the report asks for them. One file is read here; a run of several files is `runs.py`'s."""

from __future__ import annotations

import hashlib
import logging
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llmeval.errors import InputError
from llmeval.evaluate.answers import read_answers
from llmeval.evaluate.discover import META_FIELDS
from llmeval.evaluate.extract import THINK_OPEN, TRUNCATED_REASONS
from llmeval.evaluate.options import RowKeys
from llmeval.jsonl import read_dicts
from llmeval.records import CONTEXT_REJECTED, token_count
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
    reasoning_tokens: int | None = None  # of completion_tokens, where the server said

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


def _text(value: Any, what: str, path: Path, lineno: int) -> str:
    """A text field as text: numbers (27, 27.0) as text, None and NaN empty."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise InputError(path, f"{what}: expected text, got {type(value).__name__}", line=lineno)
    return str(value)


def _seconds(value: Any) -> float | None:
    """A time a row records, when it is a sane one (a file may hold 400 digits or NaN)."""
    ok = isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < 1e9
    return float(value) if ok else None


def _tokens(row: dict[str, Any]) -> tuple[int | None, int | None]:
    """The completion tokens a row reports and the reasoning tokens among them (ours record
    `usage.reasoning_tokens`; a server's raw usage nests them in `completion_tokens_details`),
    each when it is a sane count (servers send garbage)."""
    usage = row.get("usage")
    if not isinstance(usage, dict):
        return None, None
    reasoning = usage.get("reasoning_tokens")
    details = usage.get("completion_tokens_details")
    if reasoning is None and isinstance(details, dict):
        reasoning = details.get("reasoning_tokens")
    return token_count(usage.get("completion_tokens")), token_count(reasoning)


def no_field(
    path: str | Path, what: str, row: dict[str, Any], advice: str, line: int | None = None
) -> InputError:
    """A row lacks a field: the error names the row's keys, the flags of the Qwen2.5-Math
    harness layout when the row is that, and `advice`."""
    hint = f"the row has: {', '.join(sorted(row)[:20])}"
    if isinstance(row.get("code"), list) and {"gt", "idx"} <= row.keys():
        hint += "; a Qwen2.5-Math harness file: --response-key code --answer-key gt --id-key idx"
    return InputError(path, f"{what} ({hint}); {advice}", line=line)


class RowReader:
    """Turns the rows of one file into samples, numbering id-less rows per problem."""

    def __init__(self, path: Path, task: Task, keys: RowKeys, keep_texts: bool) -> None:
        self.path, self.task, self.keys, self.keep_texts = path, task, keys, keep_texts
        self.counters: Counter[str] = Counter()

    def samples(self, lineno: int, row: dict[str, Any]) -> list[Sample]:
        """The samples of one row: one, or one per output when the response field is a list."""
        key = self.keys.response
        if key not in row:  # (a missing gold: the sample is not graded)
            raise no_field(
                self.path, f"no {key!r} field", row, "name it with --response-key", lineno
            )
        outputs = row[key] if isinstance(row[key], list) else [row[key]]
        if not outputs:
            raise InputError(self.path, f"{key}: an empty list of outputs", line=lineno)
        gold = _text(row.get(self.keys.answer), self.keys.answer, self.path, lineno).strip()
        problem_id = self._problem_id(row, lineno)
        first = self._first_index(row, problem_id, len(outputs), lineno)
        meta = dict(row["meta"]) if isinstance(row.get("meta"), dict) else {}
        meta.update({name: row[name] for name in META_FIELDS if name in row})
        return [
            self._sample(row, _text(out, key, self.path, lineno), problem_id, first + j, gold, meta)
            for j, out in enumerate(outputs)
        ]

    def _sample(
        self, row: dict[str, Any], gen: str, pid: str, idx: int, gold: str, meta: dict[str, Any]
    ) -> Sample:
        prompt = row.get("prompt")
        starts_in_think = isinstance(prompt, str) and prompt.rstrip().endswith(THINK_OPEN)
        reasoning = row.get("reasoning") or row.get("reasoning_content")
        reasoning = reasoning if isinstance(reasoning, str) else None
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
                _seconds(row.get("latency_s")),
                _seconds(row.get("ttft_s")),
                endpoint if isinstance(endpoint, str) else None,
            )
        tokens, reasoning = _tokens(row)
        sample = Sample(pid, idx, gold, pred, truncated, tokens, meta, anchored, texts)
        sample.reasoning_tokens = reasoning
        return sample

    def _problem_id(self, row: dict[str, Any], lineno: int) -> str:
        """The id under --id-key, else ours or upstream's, else derived from the problem text."""
        if self.keys.id is not None:
            if self.keys.id not in row:
                raise no_field(self.path, f"no {self.keys.id!r} field", row, "see --id-key", lineno)
            return _text(row[self.keys.id], self.keys.id, self.path, lineno)
        pid = row.get("problem_id", row.get("doc_id"))
        if pid is not None:
            return _text(pid, "problem_id", self.path, lineno)
        text = problem_text(row)
        if text is None:
            what = "no problem_id, doc_id or prompt"
            raise no_field(self.path, what, row, "see --id-key", lineno)
        return "prompt-" + hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()[:12]

    def _first_index(self, row: dict[str, Any], pid: str, outputs: int, lineno: int) -> int:
        """The sample index of the row's first output: its own, else the next free one."""
        idx = row.get("sample_idx", row.get("sample_index"))
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


Pair = tuple[str, int]  # (problem id, sample index)


@dataclass
class FileRows:
    """What reading one file found besides its samples: its first row, the rows' models, the
    pairs it repeats itself, and the pairs another file of the run already held (by file)."""

    first_row: dict[str, Any] | None = None
    models: Counter[str] = field(default_factory=Counter)
    duplicates: int = 0
    across: dict[Path, list[Any]] = field(default_factory=dict)  # file -> [count, first pair]


def read_rows(
    path: Path,
    reader: RowReader,
    samples: list[Sample],
    prompts: dict[str, str],
    seen: dict[Pair, tuple[Path, int]],
) -> FileRows:
    """Append the samples of one file to `samples` (and problem texts to `prompts`); a pair
    `seen` before, in this file or another of the run, is counted and left out."""
    found = FileRows()
    first_repeat, rejected = "", 0
    for lineno, row in read_dicts(path):
        found.first_row = found.first_row or row
        if row.get("finish_reason") == CONTEXT_REJECTED:  # not a sample (see records)
            rejected += 1
            continue
        if isinstance(row.get("model"), str):
            found.models[row["model"]] += 1
        for sample in reader.samples(lineno, row):
            pair = (sample.problem_id, sample.sample_idx)
            if pair in seen:
                where, line = seen[pair]
                if where != path:
                    found.across.setdefault(where, [0, f"{pair[0]}#{pair[1]}"])[0] += 1
                elif not found.duplicates:
                    first_repeat = f"{path}:{lineno}: {pair[0]}#{pair[1]} (first: {line})"
                found.duplicates += where == path
                continue
            seen[pair] = (path, lineno)
            samples.append(sample)
            text = problem_text(row)
            if text is not None:
                prompts.setdefault(sample.problem_id, text)
    if rejected:
        log.warning(
            "%s: %d rows are empty samples an older infer wrote when the server refused them for "
            "context length: counted as missing; rerun infer to ask for them",
            path,
            rejected,
        )
    if found.duplicates:
        count = found.duplicates
        log.warning(
            "%s; %d repeated (problem, sample) rows, each counted once", first_repeat, count
        )
    return found
