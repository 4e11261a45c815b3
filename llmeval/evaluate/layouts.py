"""Other harnesses' files as they are written: each layout is recognised by its first row and its
rows are given the fields the sample reader knows (`gen`, `answer`, `problem_id`, `prompt`),
keeping their own: lm-evaluation-harness `samples_*.jsonl` (a row per document and filter),
SkyThought's result files (one JSON document: `skythought.py`), NeMo-Skills
`output-rs<seed>.jsonl`, LIMO (`generated_responses`), the Qwen2.5-Math harness (`code`).
`RowKeys` name the fields (`doc.ID` reads a nested one, `doc.id` too); the field readers say
what to do with a field that is not one."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from llmeval.errors import InputError, UsageError
from llmeval.evaluate import skythought
from llmeval.jsonl import read_dicts
from llmeval.records import token_count

log = logging.getLogger("llmeval")
MISSING = object()
Row = dict[str, Any]


def nested(row: Row, key: str) -> Any:
    """The value of `key` in a row, a dotted key (`doc.ID`, `resps.0`) reading nested objects
    and lists, a name matching the one key that differs from it only in case (lm-eval's aime24
    documents hold `ID`, its aime25 ones `id`); `MISSING` when there is none."""
    if key in row:
        return row[key]
    value: Any = row
    for part in key.split("."):
        if isinstance(value, dict):
            if part not in value:
                alike = [k for k in value if isinstance(k, str) and k.casefold() == part.casefold()]
                if len(alike) != 1:
                    return MISSING
                part = alike[0]
            value = value[part]
        elif (
            isinstance(value, list) and part.isascii() and part.isdigit() and int(part) < len(value)
        ):
            value = value[int(part)]
        else:
            return MISSING
    return value


class HarnessRow(dict[str, Any]):
    """A harness's row with the reader's fields added; `written`: the keys its file wrote."""

    written: frozenset[str] = frozenset()


def as_written(row: Row, written: Iterable[str] | None = None) -> HarnessRow:
    """A harness's row, remembering the keys its file wrote (`written`, default its own)."""
    out = HarnessRow(row)
    out.written = frozenset(row if written is None else written)
    return out


def row_keys(row: Row, most: int = 40) -> str:
    """The keys a row has as its file wrote them, nested ones dotted (`doc.ID`), in file order:
    what an error lists for the flags to name."""
    found: list[str] = []
    written = getattr(row, "written", None)
    pending = [(k, v) for k, v in row.items() if written is None or k in written]
    pending += [(k, None) for k in sorted(written or ()) if k not in row]
    while pending and len(found) <= most:
        key, value = pending.pop(0)
        if isinstance(value, dict) and value and key.count(".") < 3:
            pending[:0] = [(f"{key}.{k}", v) for k, v in value.items()]
        else:
            found.append(key)
    return ", ".join(found[:most]) + (", ..." if len(found) > most else "")


def no_fields(path: Path, lineno: int, row: Row, missing: list[str]) -> InputError:
    """The error of a row lacking fields: each with its flag, and the keys the row has."""
    return InputError(
        path,
        f"no field {', no field '.join(missing)} (the row has: {row_keys(row)}); name them "
        "with those flags",
        line=lineno,
    )


def _lm_eval(row: Row) -> Row:
    """lm-evaluation-harness: `resps` holds one list of outputs per request (a generation task
    has one request per document, its `repeats` outputs in it), the gold is `target`, the
    prompt the first request's first argument."""
    resps = row.get("resps")
    if isinstance(resps, list) and len(resps) == 1 and isinstance(resps[0], list):
        row.setdefault("gen", resps[0])
    elif isinstance(resps, list) and resps:
        raise ValueError(
            f"`resps` holds {len(resps)} requests per document (a loglikelihood task?): not "
            "generations; eval scores generate_until tasks"
        )
    row.setdefault("answer", row.get("target"))
    prompt = nested(row, "arguments.gen_args_0.arg_0")
    if prompt is MISSING:  # (older versions: a list of argument lists)
        prompt = nested(row, "arguments.0.0")
    if isinstance(prompt, str):
        row.setdefault("prompt", prompt)
    return row


def _renamed(row: Row, gen: str, answer: str) -> Row:
    """A harness's outputs and gold under the reader's names, its `id` the problem's: LIMO's
    eval (`question`, `generated_responses`, `gold_answer`, `id`), NeMo-Skills (below)."""
    row.setdefault("gen", row.get(gen))
    row.setdefault("answer", row.get(answer))
    if "id" in row:
        row.setdefault("problem_id", row["id"])
    return row


def _nemo_skills(row: Row) -> Row:
    """NeMo-Skills: `generation`, `expected_answer`, `id` and `num_generated_tokens`."""
    if "num_generated_tokens" in row:
        row.setdefault("usage", {"completion_tokens": row["num_generated_tokens"]})
    return _renamed(row, "generation", "expected_answer")


def _qwen_math(row: Row) -> Row:
    """The Qwen2.5-Math evaluation harness (SkyThought's, PRIME's, simpleRL's figures):
    `idx`, `question`, `gt`, `code` (n outputs)."""
    row.setdefault("gen", row.get("code"))
    row.setdefault("answer", row.get("gt"))
    row.setdefault("problem_id", row.get("idx"))
    return row


@dataclass(frozen=True)
class Layout:
    """A harness's row layout: its name, the fields that tell it, what its rows become."""

    name: str
    marks: frozenset[str]
    normalise: Callable[[Row], Row]


_LIMO = partial(_renamed, gen="generated_responses", answer="gold_answer")
LAYOUTS = (
    Layout("lm-evaluation-harness samples", frozenset({"doc_id", "doc", "resps"}), _lm_eval),
    Layout("NeMo-Skills", frozenset({"generation", "expected_answer"}), _nemo_skills),
    Layout("LIMO", frozenset({"generated_responses", "gold_answer"}), _LIMO),
    Layout("Qwen2.5-Math harness", frozenset({"idx", "gt", "code"}), _qwen_math),
)


def detect(row: Row) -> Layout | None:
    """The layout a first row has, if any (our own and upstream LLMEval rows have none)."""
    if "gen" in row:
        return None
    return next((layout for layout in LAYOUTS if layout.marks <= row.keys()), None)


@dataclass
class RowSource:
    """The rows of one generation file, as the sample reader knows them; `layout` names the
    harness that wrote it (None: ours or upstream's)."""

    path: Path
    lm_filter: str | None = None  # lm-evaluation-harness: the filter whose rows are read
    layout: str | None = None
    filters: dict[str, int] = field(default_factory=dict)  # lm-eval filter -> rows

    def __iter__(self) -> Iterator[tuple[int, Row]]:
        if (doc := skythought.document(self.path)) is not None:
            return (yield from self._entries(doc))
        found: Layout | None = None
        first = True
        self.filters.clear()  # (a second pass counts them again)
        for lineno, row in read_dicts(self.path):
            if first:  # the first row tells the layout
                found, first = detect(row), False
                self.layout = found.name if found else ""
            if found is None:
                yield lineno, row
                continue
            if "filter" in row and not self._wanted(row["filter"]):
                continue
            try:
                yield lineno, found.normalise(as_written(row))
            except ValueError as exc:
                raise InputError(self.path, f"{found.name}: {exc}", line=lineno) from None

    def said(self) -> None:
        """After reading: which harness wrote the file, which lm-eval filter's (SkyThought
        temperature's) samples were read; a --filter the file lacks is an error."""
        if self.layout:
            log.info("%s: read as %s", self.path, self.layout)
        what = "temperatures" if self.layout == skythought.LAYOUT else "filters"
        if self.filters and self.lm_filter not in self.filters:
            raise UsageError(f"--filter {self.lm_filter}: {self.path} has the {what} "
                             f"{', '.join(self.filters)}")  # fmt: skip
        if len(self.filters) > 1:
            others = ", ".join(repr(f) for f in self.filters if f != self.lm_filter)
            log.info("%s: the samples of %s %r scored; those of %s are left out (--filter NAME "
                     "picks another)", self.path, what[:-1], self.lm_filter, others)  # fmt: skip

    def _wanted(self, name: Any) -> bool:
        """lm-eval writes one row per (document, filter), alike but for the filter: the rows of
        one filter are read (--filter, default the first in the file), the others counted."""
        name = str(name)
        self.filters[name] = self.filters.get(name, 0) + 1
        if self.lm_filter is None:
            self.lm_filter = name
        return name == self.lm_filter

    def _entries(self, doc: Any) -> Iterator[tuple[int, Row]]:
        """A SkyThought result file (of several temperatures, one: --filter, else the first)."""
        skythought.check_results(doc, self.path)
        self.layout = skythought.LAYOUT
        self.filters = dict.fromkeys(skythought.temperatures(doc), 0)
        if self.filters and self.lm_filter is None:
            self.lm_filter = next(iter(self.filters))
        log.info("%s: a SkyThought result file (one JSON document, not JSON Lines): %d "
                 "problems", self.path, len(doc))  # fmt: skip
        for number, written, row in skythought.rows(doc, lambda t: t == self.lm_filter):
            yield number, as_written(row, written)


def text_field(value: Any, what: str, path: Path, lineno: int) -> str:
    """A text field as text: numbers (27, 27.0) as text, None and NaN empty, a one-element list
    its element; a list where text should be says what to do."""
    if value is MISSING or value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if isinstance(value, list):
        raise InputError(
            path,
            f"{what}: a list of {len(value)} where a text should be (a list of lists? "
            "lm-evaluation-harness samples files are read as written, without --response-key; "
            "else name a field of texts with --response-key, or of one gold with --answer-key)",
            line=lineno,
        )
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise InputError(path, f"{what}: expected text, got {type(value).__name__}", line=lineno)
    return str(value)


def seconds(value: Any) -> float | None:
    """A time a row records, when it is a sane one (a file may hold 400 digits or NaN)."""
    ok = isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < 1e9
    return float(value) if ok else None


def output_tokens(row: Row, position: int) -> int | None:
    """The completion tokens of a row's output at `position` (a harness's per-output counts, else
    the row's `usage`), when it is a sane count (servers send garbage)."""
    counts = row.get("output_tokens")
    if isinstance(counts, list):
        return token_count(counts[position]) if position < len(counts) else None
    usage = row.get("usage")
    return token_count(usage.get("completion_tokens")) if isinstance(usage, dict) else None


def token_counts(row: Row, position: int) -> tuple[int | None, int | None, int | None]:
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


class RowKeys(BaseModel):
    """Which row fields hold the gold, the output(s) and the problem id (None: detect)."""

    model_config = ConfigDict(frozen=True)

    answer: str = "answer"
    response: str = "gen"
    id: str | None = None
    lm_filter: str | None = None  # lm-evaluation-harness files: the filter whose rows are read


def missing_fields(row: Row, keys: RowKeys, has_text: bool) -> list[str]:
    """The fields a row lacks, each with the flag that names it (response, answer and id keys);
    without an id key, a row needs `problem_id`, `doc_id` or a problem text."""
    response, answer, id_key = keys.response, keys.answer, keys.id
    missing = [f"{k!r} ({flag})" for k, flag in ((response, "--response-key"),
               (answer, "--answer-key")) if nested(row, k) is MISSING]  # fmt: skip
    if id_key is not None and nested(row, id_key) is MISSING:
        missing.append(f"{id_key!r} (--id-key)")
    elif id_key is None and not ({"problem_id", "doc_id"} & row.keys() or has_text):
        missing.append("problem_id, doc_id or a prompt (--id-key)")
    return missing


def explicit_index(row: Row) -> Any:
    """The sample index a row gives (ours `sample_idx`, upstream `sample_index`), else None."""
    return row.get("sample_idx", row.get("sample_index"))


def reasoning_of(row: Row) -> str | None:
    """The reasoning a server split out of the answer, where the row has it."""
    reasoning = row.get("reasoning") or row.get("reasoning_content")
    return reasoning if isinstance(reasoning, str) else None
