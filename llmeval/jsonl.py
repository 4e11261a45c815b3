"""JSONL files: a line is whole or ignored. Reading streams records (a torn last line is
skipped with a warning; any other bad line names file and line); appending writes each line
with one unbuffered `os.write`, so a killed process leaves at most one torn line at the end,
which `repair_tail` cuts away before the next append."""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import mmap
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

import pydantic_core
from pydantic import BaseModel, ValidationError

from llmeval.errors import InputError, OutputError, UsageError
from llmeval.files import open_regular, replace_surrogates, without_bom

log = logging.getLogger("llmeval")

M = TypeVar("M", bound=BaseModel)


def iter_lines(path: str | Path) -> Iterator[tuple[int, bytes, bool]]:
    """Yield (line number, raw line, is_unterminated) for non-blank lines. A line keeps its
    newline (JSON reads past it: a copy of every line cut would cost more than the parse's
    own string building); only the file's last line can be unterminated. A missing file is an
    `InputError`."""
    # lines are long: 8 KB reads cost 4x
    with open(open_regular(path), "rb", buffering=1 << 20) as handle:
        for lineno, raw in enumerate(handle, start=1):
            body = raw if lineno > 1 else without_bom(raw, path)
            if body and not body.isspace():
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
            if unterminated and is_torn(body):
                _warn_torn(path, lineno)
                return
            record = None
            if _SURROGATE_ESCAPE.search(body):
                with contextlib.suppress(ValueError):  # (a ValidationError is one)
                    record = model.model_validate(loads_text(body))
            if record is None:
                raise InputError(path, _short(exc), line=lineno) from None
            yield lineno, record


def read_dicts(path: str | Path, skip_torn: bool = True) -> Iterator[tuple[int, dict[str, Any]]]:
    """Stream JSON objects from a JSONL file as (line number, dict); same rules as read_models
    (without `skip_torn`, a torn last line is a bad line like any other)."""
    for lineno, body, unterminated in iter_lines(path):
        try:
            value = loads_text(body)
        except (ValueError, UnicodeDecodeError) as exc:
            if unterminated and skip_torn:
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
        return replace_surrogates(json.loads(body))
    except RecursionError:  # 100,000 nested brackets: a bad line, not a crash
        raise ValueError("nested too deeply") from None


# `\ud800`-`\udfff` escapes: what Python's json.dumps writes for a lone surrogate.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _warn_torn(path: str | Path, lineno: int) -> None:
    log.warning("%s:%d: torn last line skipped (interrupted write)", path, lineno)


def is_torn(body: bytes) -> bool:
    """An unterminated line is torn when it is not a complete JSON value."""
    try:
        loads_text(body)
    except (ValueError, UnicodeDecodeError):
        return True
    return False


def repair_tail(fd: int, path: str | Path) -> int:
    """Make the file open as `fd` (its name `path`) end on a whole line before appending; return
    the bytes cut away. An unterminated last line that is complete JSON gets its newline; a
    torn one is truncated away with a warning. An empty file needs nothing."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return 0
    try:
        with mmap.mmap(fd, size, access=mmap.ACCESS_READ) as view:
            start = view.rfind(b"\n") + 1  # just after the last newline (0 if none)
            tail = view[start:]
        if tail.strip() and not is_torn(tail):
            os.write(fd, b"\n")  # (appended: the descriptor is O_APPEND)
            return 0
        os.ftruncate(fd, start)
    except OSError as exc:  # a full disk
        raise OutputError(f"{path}: cannot end its last line: {exc.strerror}") from None
    log.warning("%s: cut a torn last line of %d bytes (an interrupted write)", path, size - start)
    return size - start


class JsonlAppender:
    """Appends whole lines, one unbuffered write each, under an `flock` on the file's own
    descriptor (so no other name, hard link or deleted lock file gets around it): held from
    open to close when `exclusive` (a second writer is refused at once), else taken around
    each append, which first repairs a tail another writer left torn (two evals appending to
    one verdict cache). The tail is repaired before the first append in either case."""

    def __init__(self, path: str | Path, *, exclusive: bool = False) -> None:
        self.path, self.exclusive = Path(path), exclusive
        self._whole = False  # the tail was checked (exclusive: nobody else appends)
        self._created = not self.path.exists()
        while True:
            self._fd = open_regular(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
            if not exclusive:
                break
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(self._fd)
                raise UsageError(
                    f"another llmeval infer is writing {self.path}; wait for it or use another "
                    "--output"
                ) from None
            if os.fstat(self._fd).st_nlink > 0:
                break
            os.close(self._fd)  # a run that wrote nothing removed the file meanwhile: reopen
        self._real = os.path.realpath(self.path)  # the file the samples go to (links followed)

    def write(self, record: BaseModel) -> None:
        """Append `record` as one JSON line."""
        self.write_raw(record.model_dump_json(exclude_none=True).encode() + b"\n")

    def write_raw(self, data: bytes) -> None:
        """Append bytes that already form whole lines."""
        if not self.exclusive:
            self._lock_current()
        view = memoryview(data)
        if self.exclusive:
            self._still_there()
        try:
            if not self._whole:
                repair_tail(self._fd, self.path)
                self._whole = self.exclusive
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
        except OSError as exc:
            self._cut_partial(len(data) - len(view))
            raise OutputError(f"{self.path}: cannot write: {exc.strerror}") from None
        finally:
            if not self.exclusive:
                fcntl.flock(self._fd, fcntl.LOCK_UN)

    def _still_there(self) -> None:
        """The path must still name the file appended to (a run of hours is long enough for a
        clean-up to delete it): deleted, it is made again from what the open file holds, so
        nothing is lost; replaced by another file, appending stops (exit 5)."""
        mine = os.fstat(self._fd)
        try:
            there = os.stat(self._real)
        except FileNotFoundError:
            there = None
        if there is not None and (there.st_dev, there.st_ino) == (mine.st_dev, mine.st_ino):
            return
        if there is not None:
            raise OutputError(
                f"{self.path} was replaced by another file while this run wrote to it: stopped "
                f"(the {mine.st_size} bytes written before are in the file it replaced)"
            )
        try:  # (its folder too, if that went as well; O_EXCL: nobody else's new file)
            os.makedirs(os.path.dirname(self._real), exist_ok=True)
            fd = open_regular(self._real, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_EXCL)
            for offset in range(0, mine.st_size, 1 << 20):
                os.write(fd, os.pread(self._fd, 1 << 20, offset))
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except (OSError, OutputError) as exc:
            why = exc.strerror if isinstance(exc, OSError) else str(exc).rpartition(": ")[2]
            raise OutputError(f"{self.path} was deleted while this run wrote to it and "
                              f"cannot be made again: {why}") from None  # fmt: skip
        os.close(self._fd)
        self._fd = fd
        log.warning(
            "%s was deleted while this run wrote to it: made again with the %d bytes it held",
            self.path,
            mine.st_size,
        )

    def _lock_current(self) -> None:
        """Lock the file the name holds now: one rewritten meanwhile (a verdict cache cleared of
        stale verdicts is a new file put in its place) is opened again, so no line goes to the
        replaced one."""
        while True:
            fcntl.flock(self._fd, fcntl.LOCK_EX)
            if same_file(self.path, self._fd):
                return
            os.close(self._fd)  # (closing drops the lock)
            self._fd = open_regular(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
            self._whole = False

    def _cut_partial(self, written: int) -> None:
        """After a failed write (disk full), cut the part of a line that did get written, so
        the file still ends on a whole line."""
        if written:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, os.fstat(self._fd).st_size - written)

    def close(self) -> None:
        """Close the file (an exclusive appender's file it created and left empty is removed:
        a run that wrote nothing leaves nothing); safe to call twice."""
        if self._fd < 0:
            return
        if self.exclusive and os.fstat(self._fd).st_size:
            self._still_there()  # deleted after the last line: made again
        mine, target = os.fstat(self._fd), self._real
        if self.exclusive and self._created and mine.st_size == 0:
            with contextlib.suppress(OSError):
                if os.stat(target).st_ino == mine.st_ino:
                    os.unlink(target)
        os.close(self._fd)
        self._fd = -1

    def __enter__(self) -> JsonlAppender:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def same_file(path: str | Path, fd: int) -> bool:
    """Whether `path` names the file open as `fd` (not one put in its place since)."""
    try:
        named, mine = os.stat(path), os.fstat(fd)
    except OSError:
        return False
    return (named.st_dev, named.st_ino) == (mine.st_dev, mine.st_ino)


@contextlib.contextmanager
def locked(path: str | Path) -> Iterator[int]:
    """The file `path` names, open for reading under the exclusive `flock` appenders take (so
    nothing is appended meanwhile); opened again if it was replaced while waiting."""
    while True:
        fd = open_regular(path, os.O_RDONLY)
        fcntl.flock(fd, fcntl.LOCK_EX)
        if same_file(path, fd):
            break
        os.close(fd)
    try:
        yield fd
    finally:
        os.close(fd)


def held_by_writer(path: str | Path) -> bool:
    """Whether an exclusive `JsonlAppender` (a running infer) holds the file now: a shared
    lock, taken and let go at once, cannot be had."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
    return False
