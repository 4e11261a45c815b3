"""The sample reader of `eval`: the rows of a generation file as slim samples. Rows are ours
(`Generation`), upstream LLMEval's (`prompt`, `answer`, `gen` as a string or a one-element
list, optional `doc_id`/`sample_index`) or other harnesses' (a list of n outputs in the
response field, other keys named by flags). Big texts are dropped after extraction unless
the report asks for them. One file is read here (another harness's as written: `layouts.py`);
a run of several files is `runs.py`'s."""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llmeval import thinking
from llmeval.errors import InputError
from llmeval.evaluate.copies import Copies, count_repeats, fingerprint
from llmeval.evaluate.discover import META_FIELDS
from llmeval.evaluate.extract import TRUNCATED_REASONS, stops_mid_sentence
from llmeval.evaluate.layouts import (
    MISSING,
    RowKeys,
    RowSource,
    explicit_index,
    missing_fields,
    nested,
    output_tokens,
    reasoning_of,
    seconds,
    text_field,
)
from llmeval.evaluate.policy_answers import read_answers
from llmeval.evaluate.tool_use import ToolUse, answer_in_output, tool_use
from llmeval.records import CONTEXT_REJECTED, token_count
from llmeval.shards import Pair
from llmeval.tasks import Task

log = logging.getLogger("llmeval")
Golds = dict[str, str] | None  # {problem id: the gold its rows are read for} (None: their own)
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
    """What scoring needs of one generation: ids, gold, the answer each policy reads, the
    ending."""

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
    prompt_tokens: int | None = None  # usage.prompt_tokens, where the row has it
    unfinished: bool = False  # no finish reason recorded; the text looks cut (counted truncated)
    tools: ToolUse | None = None  # drawn with tools: its calls (the answer read after them)

    def answer_for(self, policy: str) -> str | None:
        """The answer a policy judges: the boxed one (`pred`); under lenient, its own reading
        (`anchored`) where it has one."""
        if policy == "lenient" and self.anchored is not None:
            return self.anchored
        return self.pred

    def correct(self, policy: str) -> bool:
        """What every figure counts as right: verified correct, and not cut off."""
        return self.status[policy] == "correct" and not self.truncated


def _tokens(row: dict[str, Any], position: int) -> tuple[int | None, int | None, int | None]:
    """The completion tokens of a row's output at `position` (a harness's per-output counts,
    else the row's `usage`), the reasoning tokens among them (ours record
    `usage.reasoning_tokens`; a server's raw usage nests them in `completion_tokens_details`)
    and the prompt tokens, each when it is a sane count (servers send garbage)."""
    usage = row.get("usage")
    if not isinstance(usage, dict):
        return output_tokens(row, position), None, None
    reasoning = usage.get("reasoning_tokens")
    details = usage.get("completion_tokens_details")
    if reasoning is None and isinstance(details, dict):
        reasoning = details.get("reasoning_tokens")
    prompt = token_count(usage.get("prompt_tokens"))
    return output_tokens(row, position), token_count(reasoning), prompt


class RowReader:
    """Turns the rows of one file into samples, numbering id-less rows per problem; an exact
    copy of an earlier row without an index is left out here, pairs repeated with an index are
    settled by `read_rows`."""

    def __init__(
        self, path: Path, task: Task, keys: RowKeys, keep_texts: bool, golds: Golds = None
    ) -> None:
        self.path, self.task, self.keys, self.keep_texts = path, task, keys, keep_texts
        self.golds = golds  # settled golds: only these problems are read, with these golds
        self.counters: Counter[str] = Counter()
        self.copies = Copies()
        # samples of rows without a finish reason, reasoning field or `<think>`: closed one?
        self.closes: list[tuple[bool, Sample]] = []

    def samples(self, lineno: int, row: dict[str, Any]) -> list[Sample]:
        """The samples of one row: one, or one per output when the response field is a list."""
        key = self.keys.response
        value = nested(row, key)
        missing = missing_fields(row, self.keys, problem_text(row) is not None)
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
        if self.golds is not None:
            if problem_id not in self.golds:
                return []
            gold = gold and self.golds[problem_id]
        return [
            self._sample(row, gen, problem_id, first + i, gold, meta, j)
            for i, (j, gen) in enumerate(texts)
        ]

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
        starts_in_think = isinstance(prompt, str) and thinking.opens_reasoning(prompt)
        reasoning = reasoning_of(row)
        use = tool_use(row, gen)
        output = (use.answer_part if use else gen, reasoning, starts_in_think)
        finish = row.get("finish_reason")
        unfinished = finish is None and stops_mid_sentence(*output)
        truncated = finish in TRUNCATED_REASONS or unfinished
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
        tokens, thought, prompt_tokens = _tokens(row, position)
        sample = Sample(pid, idx, gold, pred, truncated, tokens, meta, anchored, texts)
        sample.reasoning_tokens, sample.prompt_tokens = thought, prompt_tokens
        sample.unfinished = unfinished
        if use is not None:
            use.in_output = pred is None and answer_in_output(row)
            sample.tools = use
        if finish is None and reasoning is None and thinking.OPEN.search(gen) is None:
            self.closes.append((thinking.CLOSE.search(gen) is not None, sample))
        return sample

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


@dataclass
class FileRows:
    """What reading one file found besides its samples: its first row, the rows' models, its
    exact copies of rows and its rows under a taken (problem, sample index), the pairs another
    file of the run already held (by file), and the sample indices under each settings id the
    rows record (None: rows without one)."""

    first_row: dict[str, Any] | None = None
    models: Counter[str] = field(default_factory=Counter)
    duplicates: int = 0
    copies: int = 0
    across: dict[Path, list[Any]] = field(default_factory=dict)  # file -> [count, first pair]
    settings: dict[str | None, set[int]] = field(default_factory=dict)


def read_rows(
    path: Path,
    reader: RowReader,
    samples: list[Sample],
    prompts: dict[str, str],
    seen: dict[Pair, tuple[Path, int]],
) -> FileRows:
    """Append the samples of one file, as written (ours, upstream's, another harness's), to
    `samples` (and problem texts to `prompts`); a pair another file of the run held is counted
    and left out, one this file repeats is an exact copy or another sample under a taken index
    (`copies.count_repeats`), left out and counted."""
    found = FileRows()
    rows, rejected = RowSource(path, reader.keys.lm_filter), 0
    for lineno, row in rows:
        found.first_row = found.first_row or row
        if row.get("finish_reason") == CONTEXT_REJECTED:  # not a sample (see records)
            rejected += 1
            continue
        if isinstance(row.get("model"), str):
            found.models[row["model"]] += 1
        drawn = row.get("settings") if isinstance(row.get("settings"), str) else None
        for sample in reader.samples(lineno, row):
            pair = (sample.problem_id, sample.sample_idx)
            if pair in seen and seen[pair][0] != path:
                where = seen[pair][0]
                found.across.setdefault(where, [0, f"{pair[0]}#{pair[1]}"])[0] += 1
                continue
            if not reader.copies.is_new(pair, lineno):  # settled below
                continue
            seen[pair] = (path, lineno)
            samples.append(sample)
            found.settings.setdefault(drawn, set()).add(sample.sample_idx)
            text = problem_text(row)
            if text is not None:
                prompts.setdefault(sample.problem_id, text)
    rows.said()
    if any(closed for closed, _ in reader.closes):  # the template opened `<think>`: these
        for sample in (sample for closed, sample in reader.closes if not closed):  # never closed
            sample.truncated, sample.unfinished, sample.anchored = True, True, None
    if rejected:
        log.warning(
            "%s: %d rows are empty samples an older infer wrote when the server refused them for "
            "context length: counted as missing; rerun infer to ask for them",
            path,
            rejected,
        )
    found.copies, found.duplicates = count_repeats(
        reader.copies, rows, reader.keys.response, reader.problem_id
    )
    return found
