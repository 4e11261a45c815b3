"""JSONL files: stream records (a torn last line tolerated), repair a torn tail, append; and
JSON files written whole (a temporary file and a rename).

A line is whole or ignored: appends go through one unbuffered `os.write` per line, so a
killed process leaves at most one torn line at the end, which readers skip with a
warning and `repair_tail` cuts away before the next append.
"""

from __future__ import annotations

import contextlib
import json
import logging
import mmap
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

import pydantic_core
from pydantic import BaseModel, ValidationError

from llmeval.errors import InputError, OutputError

log = logging.getLogger("llmeval")

M = TypeVar("M", bound=BaseModel)


def iter_lines(path: str | Path) -> Iterator[tuple[int, bytes, bool]]:
    """Yield (line number, raw line without newline, is_unterminated) for non-blank lines.

    Only the file's last line can be unterminated. A missing file is an `InputError`.
    """
    path = Path(path)
    try:
        handle = path.open("rb", buffering=1 << 20)  # lines are long: 8 KB reads cost 4x
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    except IsADirectoryError:
        raise InputError(path, "is a folder, expected a JSONL file") from None
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from None
    with handle:
        for lineno, raw in enumerate(handle, start=1):
            body = raw.rstrip(b"\r\n")
            if body.strip():
                yield lineno, body, not raw.endswith(b"\n")


def _short(exc: ValidationError) -> str:
    """The first problem pydantic found, in one line."""
    err = exc.errors(include_url=False)[0]
    where = ".".join(str(p) for p in err.get("loc", ())) or "line"
    msg = err.get("msg", "invalid")
    if err.get("type") in {"json_invalid", "json_type"}:
        return f"not valid JSON ({msg})"
    if err.get("type") == "model_type" or where == "line":
        return f"expected a JSON object ({msg})"
    return f"field {where!r}: {msg}"


def read_models(path: str | Path, model: type[M]) -> Iterator[tuple[int, M]]:
    """Stream `model` records from a JSONL file as (line number, record).

    A torn last line (unterminated and unparseable) is skipped with a warning; any other
    bad line raises `InputError` naming the file and line. Lone-surrogate escapes (which
    pydantic refuses) are read by `loads_text`.
    """
    for lineno, body, unterminated in iter_lines(path):
        try:
            yield lineno, model.model_validate_json(body)
        except ValidationError as exc:
            if unterminated and _is_torn(body):
                _warn_torn(path, lineno)
                return
            record = None
            if _SURROGATE_ESCAPE.search(body):
                with contextlib.suppress(ValueError):  # (a ValidationError is one)
                    record = model.model_validate(loads_text(body))
            if record is None:
                raise InputError(path, _short(exc), line=lineno) from None
            yield lineno, record


def read_dicts(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Stream JSON objects from a JSONL file as (line number, dict); same rules as read_models."""
    for lineno, body, unterminated in iter_lines(path):
        try:
            value = loads_text(body)
        except (ValueError, UnicodeDecodeError) as exc:
            if unterminated:
                _warn_torn(path, lineno)
                return
            raise InputError(path, f"not valid JSON ({exc})", line=lineno) from None
        if not isinstance(value, dict):
            raise InputError(
                path, f"expected a JSON object, got {type(value).__name__}", line=lineno
            )
        yield lineno, value


def loads_text(body: bytes) -> Any:
    """A JSON value, parsed by pydantic-core (twice as fast as `json`); lone surrogates (which
    Python's json writes as `\\ud800`) are read by `json` and replaced by U+FFFD: such strings
    could be neither encoded nor written again."""
    try:
        return pydantic_core.from_json(body)
    except ValueError:
        if not _SURROGATE_ESCAPE.search(body):
            raise
    try:
        return _replace_surrogates(json.loads(body))
    except RecursionError:  # 100,000 nested brackets: a bad line, not a crash
        raise ValueError("nested too deeply") from None


# `\ud800`-`\udfff` escapes: what Python's json.dumps writes for a lone surrogate.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _replace_surrogates(value: Any) -> Any:
    """`value` with every lone surrogate in its strings replaced by U+FFFD."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_replace_surrogates(k): _replace_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace_surrogates(v) for v in value]
    return value


def _warn_torn(path: str | Path, lineno: int) -> None:
    log.warning("%s:%d: torn last line skipped (interrupted write)", path, lineno)


def _is_torn(body: bytes) -> bool:
    """An unterminated line is torn when it is not a complete JSON value."""
    try:
        loads_text(body)
    except (ValueError, UnicodeDecodeError):
        return True
    return False


def repair_tail(path: str | Path) -> int:
    """Make `path` end on a whole line before appending; return the bytes cut away.

    An unterminated last line that is complete JSON gets its newline; a torn one is
    truncated away with a warning. A missing or empty file needs nothing.
    """
    path = Path(path)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return 0
    if size == 0:
        return 0
    with path.open("rb+") as handle:
        handle.seek(size - 1)
        if handle.read(1) == b"\n":
            return 0
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as view:
            start = view.rfind(b"\n") + 1  # just after the last newline (0 if none)
        handle.seek(start)
        tail = handle.read()
        if tail.strip() and not _is_torn(tail):
            handle.seek(size)
            handle.write(b"\n")
            return 0
        handle.truncate(start)
    log.warning(
        "%s: cut a torn last line of %d bytes (an interrupted write); its sample will be redone",
        path,
        size - start,
    )
    return size - start


class JsonlAppender:
    """Appends one whole line per record with a single unbuffered write; one writer per file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:
            raise OutputError(f"{self.path}: cannot open for writing: {exc.strerror}") from None
        self.lines_written = 0

    def write(self, record: BaseModel | dict[str, Any]) -> None:
        """Append `record` as one JSON line."""
        if isinstance(record, BaseModel):
            data = record.model_dump_json(exclude_none=True).encode()
        else:
            data = json.dumps(record, ensure_ascii=False).encode()
        self.write_raw(data + b"\n")

    def write_raw(self, data: bytes) -> None:
        """Append bytes that already form whole lines."""
        view = memoryview(data)
        try:
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
        except OSError as exc:
            self._cut_partial(len(data) - len(view))
            raise OutputError(f"{self.path}: cannot write: {exc.strerror}") from None
        self.lines_written += data.count(b"\n")

    def _cut_partial(self, written: int) -> None:
        """After a failed write (disk full), cut the part of a line that did get written, so
        the file still ends on a whole line."""
        if written:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, os.fstat(self._fd).st_size - written)

    def close(self) -> None:
        """Close the file; safe to call twice."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> JsonlAppender:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextlib.contextmanager
def atomic_file(path: str | Path) -> Iterator[BinaryIO]:
    """A file written whole or not at all: a temporary file beside `path` (its folder made if
    missing), synced and renamed over it when the block ends without error (an earlier file
    stays otherwise)."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise OutputError(f"{path}: cannot write: {exc.strerror}") from None
    try:
        os.fchmod(fd, _mode_for(path))
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise OutputError(f"{path}: cannot write: {exc.strerror or exc}") from None
        raise


def write_json_atomic(
    path: str | Path, data: BaseModel | dict[str, Any] | list[Any], indent: int | None = 2
) -> None:
    """Write JSON to `path` whole or not at all (`atomic_file`)."""
    if isinstance(data, BaseModel):
        text = data.model_dump_json(indent=indent)
    else:
        text = json.dumps(data, indent=indent, ensure_ascii=False)
    with atomic_file(path) as handle:
        handle.write(text.encode() + b"\n")


def _mode_for(path: Path) -> int:
    """The permissions of the file replaced, else what a new file gets under the umask (a
    temporary file is rw-------)."""
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
