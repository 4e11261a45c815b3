"""The sample reader of `eval`: the rows of a generation file as slim samples. Rows are ours
(`Generation`), upstream LLMEval's (`prompt`, `answer`, `gen` as a string or a one-element
list, optional `doc_id`/`sample_index`) or other harnesses' (a list of n outputs in the
response field, other keys named by flags). Big texts are dropped after extraction unless
the report asks for them. One file is read here (another harness's as written: `layouts.py`;
which rows are one sample: `runs.samples`); a run of several files is `reading.py`'s."""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llmeval import thinking
from llmeval.errors import InputError
from llmeval.evaluate.discover import META_FIELDS
from llmeval.evaluate.extract import TRUNCATED_REASONS, stops_mid_sentence
from llmeval.evaluate.layouts import (
    MISSING,
    RowKeys,
    RowSource,
    explicit_index,
    missing_fields,
    nested,
    no_fields,
    reasoning_of,
    seconds,
    text_field,
    token_counts,
)
from llmeval.evaluate.policy_answers import read_answers
from llmeval.evaluate.tool_use import ToolUse, answer_in_output, tool_use
from llmeval.records import CONTEXT_REJECTED, RunSpec
from llmeval.runs.samples import (
    Found,
    IndexedRows,
    Unnumbered,
    contradiction,
    describe,
    fingerprint,
    structural_copies,
)
from llmeval.runs.spec import UNRECORDED, history
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
    drawn: str = UNRECORDED  # the id of the settings it was drawn under (its file's history)
    digest: int | None = None  # of its texts, to compare runs within one eval (never stored)
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


@dataclass(frozen=True, slots=True)
class _RowFacts:
    """What every output of one row shares."""

    problem_id: str
    gold: str
    meta: dict[str, Any]
    problem_text: str | None
    reasoning: str | None
    starts_in_think: bool
    finish: Any


class RowReader:
    """Turns the rows of one file, read under its run spec (None: none), into samples:
    numbering rows without an index per problem (on from `counters`: NeMo-Skills' seed files
    share one), keeping their fingerprints for `structural_copies`, refusing a row of another
    run. With `golds`, only those problems' answers are read (for those golds)."""

    def __init__(
        self,
        path: Path,
        task: Task,
        keys: RowKeys,
        keep_texts: bool,
        spec: RunSpec | None,
        golds: Golds = None,
        counters: Counter[str] | None = None,
    ) -> None:
        self.path, self.task, self.keys, self.keep_texts = path, task, keys, keep_texts
        self.spec, self.golds = spec, golds
        self.digests = False  # each sample keeps a digest of its texts (`unchanged.py`)
        self.counters = Counter() if counters is None else counters
        drawn = history(spec) if spec is not None else []
        self.drawn_ids = {s.id for s in drawn}
        self.first_drawn = drawn[0].id if drawn else UNRECORDED
        self.indexed = IndexedRows()
        self.unnumbered: list[tuple[Unnumbered, list[Sample]]] = []
        # samples of rows without a finish reason, reasoning field or `<think>`: closed one?
        self.closes: list[tuple[bool, Sample]] = []

    def samples(self, lineno: int, row: dict[str, Any]) -> list[Sample]:
        """The samples of one row: one, or one per output when the response field is a list."""
        key = self.keys.response
        value = nested(row, key)
        text = problem_text(row)
        if value is MISSING or not self._identified(row, text):
            missing = missing_fields(row, self.keys, text is not None)
            raise no_fields(self.path, lineno, row, missing)
        other_run = contradiction(row, self.spec)
        if other_run is not None:
            raise InputError(
                self.path,
                f"a row of another run: {other_run}; move the file out of this run",
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
        texts = [text_field(out, key, self.path, lineno) for out in outputs]
        first = self._first_index(row, problem_id, len(texts), lineno)
        wanted = self.golds is None or problem_id in self.golds
        if self.golds is not None and problem_id in self.golds:
            gold = gold and self.golds[problem_id]
        prompt = row.get("prompt")
        shared = _RowFacts(
            problem_id,
            gold,
            meta,
            text,
            reasoning_of(row),
            isinstance(prompt, str) and thinking.opens_reasoning(prompt),
            row.get("finish_reason"),
        )
        found = [
            self._sample(row, shared, gen, first + j, j, wanted) for j, gen in enumerate(texts)
        ]
        if explicit_index(row) is None:
            mark = fingerprint(problem_id, texts, shared.reasoning, row.get("seed"))
            self.unnumbered.append((Unnumbered(lineno, problem_id, mark), found))
        return found

    def _identified(self, row: dict[str, Any], text: str | None) -> bool:
        """Whether a row says which problem it is (`missing_fields` says what it lacks)."""
        if self.keys.id is not None:
            return nested(row, self.keys.id) is not MISSING
        return "problem_id" in row or "doc_id" in row or text is not None

    def _sample(
        self,
        row: dict[str, Any],
        shared: _RowFacts,
        gen: str,
        idx: int,
        position: int,
        wanted: bool = True,
    ) -> Sample:
        use = tool_use(row, gen)
        output = (use.answer_part if use else gen, shared.reasoning, shared.starts_in_think)
        finish = shared.finish
        unfinished = finish is None and stops_mid_sentence(*output)
        truncated = finish in TRUNCATED_REASONS or unfinished
        pred, anchored = (
            read_answers(self.task.kind, output, truncated, shared.gold, shared.problem_text)
            if wanted
            else (None, None)
        )
        texts = None
        if self.keep_texts:
            endpoint = row.get("endpoint")
            texts = Texts(
                gen,
                shared.reasoning,
                finish if isinstance(finish, str) else None,
                seconds(row.get("latency_s")),
                seconds(row.get("ttft_s")),
                endpoint if isinstance(endpoint, str) else None,
            )
        tokens, thought, prompt_tokens = token_counts(row, position)
        sample = Sample(
            shared.problem_id, idx, shared.gold, pred, truncated, tokens, shared.meta, anchored,
            texts,
        )  # fmt: skip
        sample.reasoning_tokens, sample.prompt_tokens = thought, prompt_tokens
        sample.unfinished = unfinished
        if self.digests:
            sample.digest = hash((gen, shared.reasoning))
        drawn = row.get("settings")
        sample.drawn = drawn if drawn in self.drawn_ids else self.first_drawn
        if use is not None:
            use.in_output = pred is None and answer_in_output(row)
            sample.tools = use
        if finish is None and shared.reasoning is None and thinking.OPEN.search(gen) is None:
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

    def drop_structural_copies(self, quiet: bool = False) -> int:
        """Leave out the rows without an index that repeat an earlier block whole and in order
        (`structural_copies`, each block said in a warning unless `quiet`), renumbering the
        rest of each problem's rows; how many rows were left out."""
        rows = [row for row, _ in self.unnumbered]
        repeats = structural_copies(rows)
        if not repeats:
            return 0
        copied = {i for r in repeats for i in range(r.start, r.stop)}
        for r in [] if quiet else repeats[:3]:
            log.warning(
                "%s: lines %s repeat lines %s whole, in order (a file appended to itself?): "
                "counted once",
                self.path,
                _lines(rows, r.start, r.stop),
                _lines(rows, r.start - r.offset, r.stop - r.offset),
            )
        if len(repeats) > 3 and not quiet:
            log.warning("%s: %d more blocks of rows repeat earlier ones", self.path,
                        len(repeats) - 3)  # fmt: skip
        firsts: dict[str, int] = {}
        for _, samples in self.unnumbered:
            for sample in samples:
                firsts.setdefault(sample.problem_id, sample.sample_idx)
        for i, (_, samples) in enumerate(self.unnumbered):
            if i in copied:
                samples.clear()  # (the lists are the row's own: the caller's see the change)
                continue
            for sample in samples:
                sample.sample_idx = firsts[sample.problem_id]
                firsts[sample.problem_id] += 1
        for pid, next_free in firsts.items():
            self.counters[pid] = next_free
        return len(copied)


def _lines(rows: list[Unnumbered], start: int, stop: int) -> str:
    """The lines of rows `start`..`stop`-1 as `21-40` (rows may lie on any lines)."""
    first, last = rows[start].line, rows[stop - 1].line
    return str(first) if first == last else f"{first}-{last}"


def problem_text(row: dict[str, Any]) -> str | None:
    """The problem (or the prompt holding it) of a row, if it has one."""
    return next((row[k] for k in PROBLEM_TEXT_KEYS if isinstance(row.get(k), str)), None)


@dataclass
class FileRows:
    """What reading one file found: its samples, its first row, the rows' models, its rows
    copied (counted once) and its rows under a taken (problem, sample index) (left out)."""

    samples: list[Sample] = field(default_factory=list)
    first_row: dict[str, Any] | None = None
    models: Counter[str] = field(default_factory=Counter)
    duplicates: int = 0
    copies: int = 0


def read_rows(reader: RowReader, prompts: dict[str, str], *, quiet: bool = False) -> FileRows:
    """The samples of one file, as written (ours, upstream's, another harness's), each once
    (`runs.samples`: copies counted, conflicts left out and said), with problem texts added to
    `prompts`; `quiet` when the file is read again (nothing said twice)."""
    found = FileRows()
    rows, rejected = RowSource(reader.path, reader.keys.lm_filter), 0
    by_row: list[list[Sample]] = []  # (a row's list of unnumbered samples is the reader's)
    for lineno, row in rows:
        found.first_row = found.first_row or row
        if row.get("finish_reason") == CONTEXT_REJECTED:  # not a sample (see records)
            rejected += 1
            continue
        if isinstance(row.get("model"), str):
            found.models[row["model"]] += 1
        samples = reader.samples(lineno, row)
        if explicit_index(row) is not None:
            samples = [s for s in samples if reader.indexed.is_new((s.problem_id, s.sample_idx),
                                                                   lineno)]  # fmt: skip
        by_row.append(samples)
        if samples and (text := problem_text(row)) is not None:
            prompts.setdefault(samples[0].problem_id, text)
    found.copies = reader.drop_structural_copies(quiet)
    found.samples = [sample for samples in by_row for sample in samples]
    if quiet:
        return found
    rows.said()
    if any(closed for closed, _ in reader.closes):  # the template opened `<think>`: these
        for sample in (sample for closed, sample in reader.closes if not closed):  # never closed
            sample.truncated, sample.unfinished, sample.anchored = True, True, None
    if rejected:
        log.warning(
            "%s: %d rows are empty samples an older infer wrote when the server refused them for "
            "context length: counted as missing; rerun infer to ask for them",
            reader.path,
            rejected,
        )
    copies, conflicts = _settle_repeats(reader, rows)
    found.copies += copies
    found.duplicates = conflicts
    return found


def _settle_repeats(reader: RowReader, rows: RowSource) -> tuple[int, int]:
    """(copies, conflicts) among the rows with an index that held a pair again, each kind said
    in a warning; those rows are fingerprinted by a second pass over the file."""
    if not reader.indexed.repeats:
        return 0, 0
    wanted, marks = reader.indexed.lines_to_mark(), {}
    for lineno, row in rows:
        idx = explicit_index(row)
        if lineno in wanted and idx is not None:
            pid = reader.problem_id(row, lineno)
            gen = text_field(nested(row, reader.keys.response), "gen", rows.path, lineno)
            marks[lineno] = {
                (pid, idx): fingerprint(pid, [gen], reasoning_of(row), row.get("seed"))
            }
    copies, conflicts = reader.indexed.settle(marks)
    said: tuple[tuple[list[Found], str], ...] = (
        (conflicts, "reuse an earlier row's (problem, sample index) with another text or seed "
                    "(two runs in one file?): left out, the first row of each is scored"),
        (copies, "repeat an earlier row's (problem, sample index) with the same text and seed "
                 "(a file appended twice?): each counted once"),
    )  # fmt: skip
    for found, what in said:
        if found:
            log.warning("%s: %d rows %s; first %s", reader.path, len(found), what,
                        describe(found, reader.path))  # fmt: skip
    return len(copies), len(conflicts)
