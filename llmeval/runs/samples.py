"""Which rows are one sample. A sample is (run, problem, sample index).

- Rows with an index: a row whose (problem, index) pair was seen before with the same texts
  and seed is a copy (counted once, reported); with other texts it is a conflict (left out,
  named). Files without a repeated pair pay nothing: only repeated lines are fingerprinted.
- Rows without an index (upstream LLMEval's, lm-eval's, other harnesses'): the index is the
  row's place among its problem's rows, and identical texts are distinct samples (a model at
  temperature 0, or one that answers briefly, repeats itself). The only copies are structural
  ones that prove themselves: a block of consecutive rows repeated whole, in order, that spans
  two problems and either covers every problem of the file (`cat a.jsonl a.jsonl`) or holds
  two different texts of one problem. Never a row because its text equals another's.
- A row whose own `model` or `task` contradicts the run spec it is read under belongs to
  another run: never taken into this one silently.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from llmeval.records import RunSpec
from llmeval.runs.pairs import Pair


def fingerprint(problem_id: str, texts: Sequence[str], reasoning: str | None, seed: Any) -> bytes:
    """What makes two rows the same sample: their problem, texts, reasoning and seed."""
    digest = hashlib.blake2b(digest_size=16)
    seed_part = repr(seed if isinstance(seed, int) else None)
    for part in (problem_id, *texts, reasoning or "", seed_part):
        digest.update(part.encode("utf-8", "surrogatepass") + b"\x00")
    return digest.digest()


Found = tuple[int, int, Pair]  # (line, the line first holding its pair, the pair)


@dataclass
class IndexedRows:
    """The rows with an index of one file: the line first holding each pair, and the lines
    that held a pair again (settled as copies or conflicts once their texts are known)."""

    first: dict[Pair, int] = field(default_factory=dict)
    repeats: list[tuple[int, Pair]] = field(default_factory=list)

    def is_new(self, pair: Pair, lineno: int) -> bool:
        """Whether `pair` is free; a pair taken before is recorded as a repeat."""
        first = self.first.setdefault(pair, lineno)
        if first != lineno:
            self.repeats.append((lineno, pair))
        return first == lineno

    def lines_to_mark(self) -> set[int]:
        """The lines whose fingerprints `settle` needs."""
        return {line for line, _ in self.repeats} | {self.first[p] for _, p in self.repeats}

    def settle(self, marks: Mapping[int, Mapping[Pair, bytes]]) -> tuple[list[Found], list[Found]]:
        """The repeats split into copies and conflicts, given the fingerprints of the lines
        involved: {line: {pair: fingerprint}}."""
        copies: list[Found] = []
        conflicts: list[Found] = []
        for lineno, pair in self.repeats:
            first = self.first[pair]
            mine, theirs = marks.get(lineno, {}).get(pair), marks.get(first, {}).get(pair)
            (copies if mine is not None and mine == theirs else conflicts).append(
                (lineno, first, pair)
            )
        return copies, conflicts


def describe(found: Sequence[Found], path: object) -> str:
    """The first of some repeated rows, for a message: `FILE:31 (problem 7, sample 0, as
    line 1)`."""
    line, first, (pid, idx) = found[0]
    return f"{path}:{line} (problem {pid}, sample {idx}, as line {first})"


@dataclass(frozen=True)
class Unnumbered:
    """A row without a sample index, as structural copies are told: its line, problem and
    fingerprint."""

    line: int
    problem_id: str
    mark: bytes


@dataclass(frozen=True)
class Repeat:
    """Rows `start`..`stop`-1 of a file's unnumbered rows (positions, not lines) repeat the
    rows `offset` places before them."""

    start: int
    stop: int
    offset: int


def structural_copies(rows: Sequence[Unnumbered]) -> list[Repeat]:
    """The blocks of consecutive rows that repeat an earlier block whole and in order and
    prove themselves (the module's docstring). A repeated block spanning two problems holds a
    problem boundary (two rows of different problems) met before: each boundary is looked up
    once, so the work is linear but for blocks found and refused."""
    problems = {row.problem_id for row in rows}
    marks = [row.mark for row in rows]
    seen: dict[tuple[bytes, bytes], int] = {}
    found: list[Repeat] = []
    done = 0  # rows before it are settled: in a repeat found, or its source
    refused: dict[int, int] = {}  # offset -> the end of a block refused at that offset
    for j in range(1, len(rows)):
        if j < done or rows[j].problem_id == rows[j - 1].problem_id:
            continue
        first = seen.setdefault((marks[j - 1], marks[j]), j)
        offset = j - first
        if not offset or j < refused.get(offset, 0):
            continue
        start, stop = j, j
        while start - 1 >= max(done, offset) and marks[start - 1] == marks[start - 1 - offset]:
            start -= 1
        while stop < len(rows) and marks[stop] == marks[stop - offset]:
            stop += 1
        if _proves_itself(rows[start:stop], problems):
            found.append(Repeat(start, stop, offset))
            done = stop
        else:
            refused[offset] = stop
    return found


def _proves_itself(block: Sequence[Unnumbered], problems: set[str]) -> bool:
    """Whether a repeated block is no chance: it covers every problem of its file, or holds
    two different texts of one problem."""
    texts: dict[str, bytes] = {}
    for row in block:
        if texts.setdefault(row.problem_id, row.mark) != row.mark:
            return True
    return len(texts) == len(problems)


def contradiction(row: Mapping[str, Any], spec: RunSpec | None) -> str | None:
    """`model 'Other-7B' (its run spec: 'Qwen3-8B')` when a row's own model or task is none
    of those its run spec records (the current settings and any earlier ones), else None."""
    if spec is None:
        return None
    segments = spec.segments
    for name in ("model", "task"):
        mine = row.get(name)
        recorded = {getattr(spec, name), *(s.fields.get(name) for s in segments)} - {None}
        if isinstance(mine, str) and recorded and mine not in recorded:
            said = ", ".join(repr(v) for v in sorted(map(str, recorded)))
            return f"{name} {mine!r} (its run spec: {said})"
    return None
