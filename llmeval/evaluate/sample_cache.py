"""The samples cache of `eval`: what reading a generation file gave (ids, gold, extracted
answer, ending; never the texts), kept beside it as `<file>.samples.json`.

Generation files only grow. The cache records how many bytes of whole lines it covers and
their xxh3-128 digest: when the file's first bytes still hash to it, their samples are reused and
only the lines after them are read. Anything else (another llmeval, other keys or task, a
changed data file, a rewritten file) reads the whole file again. The cache only saves time:
one that cannot be read or written is ignored.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import xxhash

from llmeval import __version__
from llmeval.errors import OutputError
from llmeval.files import Position
from llmeval.json_files import write_json_atomic
from llmeval.tasks import Task

log = logging.getLogger("llmeval")

SUFFIX = ".samples.json"
FORMAT = 1
# the modules whose code decides what a row reads as: a change to any of them is a miss
_SOURCES = ("eval_input.py", "eval_files.py", "extract.py", "tasks.py", "sample_cache.py")
_BLOCK = 1 << 20


def cache_path_for(path: Path) -> Path:
    """The samples cache of a generation file: `<file>.samples.json` beside it."""
    return path.with_name(path.name + SUFFIX)


@lru_cache(maxsize=1)
def _code_digest() -> str:
    """A digest of the reading and extraction code (and the version) of this llmeval."""
    digest = hashlib.sha256(__version__.encode())
    for name in _SOURCES:
        digest.update((Path(__file__).parent / name).read_bytes())
    return digest.hexdigest()[:16]


def context_key(task: Task, answer_key: str, response_key: str) -> str | None:
    """What else decides the samples of a file besides its bytes; None: do not cache."""
    try:
        code = _code_digest()
        data = task.data_file.stat() if task.data_file.exists() else None
    except OSError:
        return None
    stamp = f"{data.st_size}:{data.st_mtime_ns}" if data else "-"
    return f"{FORMAT}|{code}|{task.name}|{answer_key}|{response_key}|{stamp}"


@dataclass
class Cached:
    """A valid cache: where its lines end (digest ready to go on), its rows, duplicates."""

    position: Position
    rows: list[list[Any]]  # one per kept sample, in file order; see `eval_input.Sample`
    duplicates: int
    first_repeat: str


def load(path: Path, key: str) -> Cached | None:
    """The cache of `path` if it was made under `key` and the file still starts with the
    bytes it covers; else None."""
    try:
        data = json.loads(cache_path_for(path).read_bytes())
        if not isinstance(data, dict) or data.get("key") != key:
            return None
        offset, lines, rows = int(data["offset"]), int(data["lines"]), data["rows"]
        if not isinstance(rows, list) or not all(map(_row_ok, rows)):
            return None
        digest = _prefix_digest(path, offset)
        if digest is None or digest.hexdigest() != data["xxh3_128"]:
            return None
        return Cached(
            Position(offset, lines, digest),
            rows,
            int(data["duplicates"]),
            str(data["first_repeat"]),
        )
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return None


def _row_ok(row: Any) -> bool:
    """Whether a cached row has the shape `eval_input` writes (a damaged cache is a miss)."""
    if type(row) is not list or len(row) != 8:
        return False
    pid, idx, gold, pred, truncated, tokens, meta, lineno = row
    return (
        type(pid) is str
        and type(idx) is int
        and type(gold) is str
        and (pred is None or type(pred) is str)
        and type(truncated) is bool
        and (tokens is None or type(tokens) is int)
        and type(meta) is dict
        and type(lineno) is int
    )


def _prefix_digest(path: Path, size: int) -> Any:
    """The xxh3-128 digest of the first `size` bytes of `path`, or None if it is shorter."""
    digest = xxhash.xxh3_128()
    buffer = bytearray(_BLOCK)
    view = memoryview(buffer)
    left = size
    with path.open("rb", buffering=0) as handle:
        while left:
            got = handle.readinto(view[: min(left, _BLOCK)])
            if not got:
                return None
            digest.update(view[:got])
            left -= got
    return digest


def new_position() -> Position:
    """The start of a file, with a fresh digest."""
    return Position(0, 0, xxhash.xxh3_128())


def save(path: Path, key: str, at: Position, rows: list[list[Any]], dup: int, first: str) -> None:
    """Write the cache of `path`: `rows` are the samples of its first `at.offset` bytes."""
    data = {
        "key": key,
        "offset": at.offset,
        "lines": at.lines,
        "xxh3_128": at.digest.hexdigest(),
        "duplicates": dup,
        "first_repeat": first,
        "rows": rows,
    }
    with contextlib.suppress(OutputError, OSError):
        write_json_atomic(cache_path_for(path), data, indent=None)
        return
    log.debug("%s: samples cache not written", cache_path_for(path))
