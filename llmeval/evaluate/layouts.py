"""Other harnesses' files as they are written: each layout is recognised by its first row and its
rows are given the fields the sample reader knows (`gen`, `answer`, `problem_id`, `prompt`),
keeping their own: lm-evaluation-harness `samples_*.jsonl` (a row per document and filter),
SkyThought `results.json` (one JSON document), NeMo-Skills `output-rs<seed>.jsonl`, LIMO
(`generated_responses`), the Qwen2.5-Math harness (`code`). `RowKeys` name the fields (`doc.ID`
reads a nested one); the field readers say what to do with a field that is not one."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from llmeval.errors import InputError, UsageError
from llmeval.files import read_file, without_bom
from llmeval.jsonl import iter_lines, loads_text, read_dicts
from llmeval.records import token_count

log = logging.getLogger("llmeval")
MISSING = object()
Row = dict[str, Any]


def nested(row: Row, key: str) -> Any:
    """The value of `key` in a row, a dotted key (`doc.ID`, `resps.0`) reading nested objects
    and lists; `MISSING` when there is none."""
    if key in row:
        return row[key]
    value: Any = row
    for part in key.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return MISSING
    return value


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


def _nemo_skills(row: Row) -> Row:
    """NeMo-Skills: `generation`, `expected_answer`, the problem's `id` and
    `num_generated_tokens`."""
    row.setdefault("gen", row.get("generation"))
    row.setdefault("answer", row.get("expected_answer"))
    if "id" in row:
        row.setdefault("problem_id", row["id"])
    if "num_generated_tokens" in row:
        row.setdefault("usage", {"completion_tokens": row["num_generated_tokens"]})
    return row


def _limo(row: Row) -> Row:
    """LIMO's eval: `question`, `generated_responses` (n outputs), `gold_answer`, `id`."""
    row.setdefault("gen", row.get("generated_responses"))
    row.setdefault("answer", row.get("gold_answer"))
    if "id" in row:
        row.setdefault("problem_id", row["id"])
    return row


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


LAYOUTS = (
    Layout("lm-evaluation-harness samples", frozenset({"doc_id", "doc", "resps"}), _lm_eval),
    Layout("NeMo-Skills", frozenset({"generation", "expected_answer"}), _nemo_skills),
    Layout("LIMO", frozenset({"generated_responses", "gold_answer"}), _limo),
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
        doc = _document(self.path)
        if doc is not MISSING:
            yield from self._entries(doc)
            return
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
                yield lineno, found.normalise(row)
            except ValueError as exc:
                raise InputError(self.path, f"{found.name}: {exc}", line=lineno) from None

    def said(self) -> None:
        """After reading: which harness wrote the file, which lm-eval filter's rows were read
        (a --filter the file lacks is an error naming those it has)."""
        if self.layout:
            log.info("%s: read as %s", self.path, self.layout)
        if self.filters and self.lm_filter not in self.filters:
            raise UsageError(f"--filter {self.lm_filter}: {self.path} has the filters "
                             f"{', '.join(self.filters)}")  # fmt: skip
        if len(self.filters) > 1:
            others = ", ".join(repr(f) for f in self.filters if f != self.lm_filter)
            log.info("%s: the rows of filter %r scored; those of %s hold the same outputs and "
                     "are left out (--filter NAME picks another)", self.path, self.lm_filter,
                     others)  # fmt: skip

    def _wanted(self, name: Any) -> bool:
        """lm-eval writes one row per (document, filter), alike but for the filter: the rows of
        one filter are read (--filter, default the first in the file), the others counted."""
        name = str(name)
        self.filters[name] = self.filters.get(name, 0) + 1
        if self.lm_filter is None:
            self.lm_filter = name
        return name == self.lm_filter

    def _entries(self, doc: Any) -> Iterator[tuple[int, Row]]:
        """A JSON document: SkyThought's results.json (problem -> its `responses`) is read;
        anything else is refused with what to do."""
        entries = list(doc.values()) if isinstance(doc, dict) else []
        if not entries or not all(isinstance(e, dict) and "responses" in e for e in entries):
            what = f"a list of {len(doc)} items" if isinstance(doc, list) else "an object"
            raise InputError(
                self.path,
                f"one JSON document ({what}), not JSON Lines (one object per line); a list of "
                f"rows as JSON Lines: jq -c '.[]' {self.path} > rows.jsonl",
            )
        self.layout = "SkyThought results.json"
        log.info("%s: a SkyThought results.json (one JSON document, not JSON Lines): %d "
                 "problems", self.path, len(entries))  # fmt: skip
        for i, (key, entry) in enumerate(doc.items(), start=1):
            yield i, _skythought(str(key), entry)


def _skythought(key: str, entry: Row) -> Row:
    """One problem of SkyThought's results.json: its `responses` ({content, correctness}) are
    its samples, `token_usages` their token counts; the problem's id is its key."""
    responses = entry["responses"]
    if isinstance(responses, list):
        entry.setdefault("gen", [r.get("content") if isinstance(r, dict) else r for r in responses])
    usages = entry.get("token_usages")
    if isinstance(usages, list):
        entry["output_tokens"] = [u.get("completion_tokens") if isinstance(u, dict) else None
                                  for u in usages]  # fmt: skip
    entry.setdefault("problem_id", key)
    return entry


def _document(path: Path) -> Any:
    """The file as one JSON document when it is one rather than JSON Lines (a `.json` name, a
    first line holding a list, or a first line that is no JSON value while the whole file is
    one: pretty-printed); else `MISSING`."""
    if path.name.endswith(".json"):
        return _parse_whole(path)
    for _, body, _ in iter_lines(path):
        try:
            first = loads_text(body)
        except (ValueError, UnicodeDecodeError):
            try:
                return _parse_whole(path)
            except InputError:
                return MISSING  # a bad line of JSON Lines: read_dicts names it
        return first if isinstance(first, list) else MISSING
    return MISSING


def _parse_whole(path: Path) -> Any:
    try:
        return loads_text(without_bom(read_file(path), path))
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(path, f"not valid JSON ({exc})") from None


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
