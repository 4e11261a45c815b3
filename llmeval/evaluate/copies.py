"""Rows that are not distinct samples. An exact copy of an earlier row (same problem, same text,
same seed or none: a file appended twice) is one sample, counted once; a row reusing an earlier
row's (problem, sample index) with another text or seed is another sample under a taken index,
left out. Rows with an index are compared only where an index repeats (a second pass over the
file), so files without repeats pay nothing."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from llmeval.evaluate.layouts import RowSource, explicit_index, nested, reasoning_of, text_field
from llmeval.shards import Pair

log = logging.getLogger("llmeval")


def fingerprint(gen: str, reasoning: str | None, seed: Any) -> bytes:
    """What makes two outputs the same sample: their texts and seed."""
    digest = hashlib.blake2b(digest_size=16)
    for part in (gen, reasoning or "", repr(seed if isinstance(seed, int) else None)):
        digest.update(part.encode("utf-8", "surrogatepass") + b"\x00")
    return digest.digest()


@dataclass
class Copies:
    """The bookkeeping of one file: which pairs and unnumbered outputs were seen (and on which
    line), the copies dropped and the indices repeated."""

    pairs: dict[Pair, int] = field(default_factory=dict)  # pair -> the line of its first row
    unnumbered: dict[tuple[str, int, bytes], int] = field(default_factory=dict)
    copies: list[tuple[int, int, str]] = field(default_factory=list)  # (line, first line, id)
    repeats: list[tuple[int, Pair]] = field(default_factory=list)  # (line, pair) taken before

    def is_copy(self, pid: str, position: int, mark: bytes, lineno: int) -> bool:
        """Whether the output at `position` of a row without an index copies an earlier row's
        (same problem, same position in its row, same texts and seed)."""
        first = self.unnumbered.setdefault((pid, position, mark), lineno)
        if first != lineno:
            self.copies.append((lineno, first, pid))
        return first != lineno

    def is_new(self, pair: Pair, lineno: int) -> bool:
        """Whether `pair` is free; a pair taken before is recorded as a repeat (decided later)."""
        first = self.pairs.setdefault(pair, lineno)
        if first != lineno:
            self.repeats.append((lineno, pair))
        return first == lineno

    def settle(self, marks: dict[int, dict[Pair, bytes]]) -> list[tuple[int, int, str]]:
        """Split the repeats into copies (appended to `copies`) and rows under a taken index
        (returned as (line, first line, problem id)), given the fingerprints `marks` of the
        lines involved: {line: {pair: fingerprint}}."""
        taken: list[tuple[int, int, str]] = []
        for lineno, pair in self.repeats:
            first = self.pairs[pair]
            mine, theirs = marks.get(lineno, {}).get(pair), marks.get(first, {}).get(pair)
            same = mine is not None and mine == theirs
            (self.copies if same else taken).append((lineno, first, pair[0]))
        return taken

    def lines_to_mark(self) -> set[int]:
        """The lines whose fingerprints `settle` needs."""
        return {line for line, _ in self.repeats} | {self.pairs[p] for _, p in self.repeats}


def describe(found: Iterable[tuple[int, int, str]], path: object) -> str:
    """The first of some rows, for a message: `FILE:31 (problem 7, as line 1)`."""
    line, first, pid = next(iter(found))
    return f"{path}:{line} (problem {pid}, as line {first})"


def count_repeats(
    copies: Copies, rows: RowSource, response: str, problem_id: Callable[[dict, int], str]
) -> tuple[int, int]:
    """(copies, rows under a taken index) of a file read, each kind said in a warning; the rows
    that repeated an index are fingerprinted by a second pass over the file (`rows` again)."""
    taken: list[tuple[int, int, str]] = []
    if copies.repeats:
        wanted, marks = copies.lines_to_mark(), {}
        for lineno, row in rows:
            if lineno in wanted and explicit_index(row) is not None:
                pair = (problem_id(row, lineno), explicit_index(row))
                gen = text_field(nested(row, response), response, rows.path, lineno)
                marks[lineno] = {pair: fingerprint(gen, reasoning_of(row), row.get("seed"))}
        taken = copies.settle(marks)
    if taken:
        log.warning(
            "%s: %d rows reuse an earlier row's (problem, sample index) with another text or seed "
            "(two runs in one file?), first %s: left out, the first row of each is scored",
            rows.path,
            len(taken),
            describe(taken, rows.path),
        )
    if copies.copies:
        log.warning(
            "%s: %d rows are exact copies of earlier rows (same problem, text and seed: a file "
            "appended twice?), first %s: each counted once",
            rows.path,
            len(copies.copies),
            describe(copies.copies, rows.path),
        )
    return len(copies.copies), len(taken)
