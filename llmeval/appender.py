"""Appending to JSONL files: a line is whole or ignored. Each append is one unbuffered
`os.write`, so a killed process leaves at most one torn line at the end, which readers skip
with a warning and `repair_tail` cuts away before the next append."""

from __future__ import annotations

import contextlib
import fcntl
import logging
import mmap
import os
from pathlib import Path

from pydantic import BaseModel

from llmeval.errors import OutputError, UsageError
from llmeval.files import is_torn, open_regular

log = logging.getLogger("llmeval")


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
        self._fd = -1
        while self._fd < 0:
            self._fd = open_regular(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
            if not exclusive:
                break
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                held = os.fstat(self._fd).st_nlink > 0  # else a run that wrote nothing removed it
            except BlockingIOError:
                held = None
            if not held:
                os.close(self._fd)
                self._fd = -1
            if held is None:
                raise UsageError(
                    f"another llmeval infer is writing {self.path}; wait for it or use another "
                    "--output"
                )

    def write(self, record: BaseModel) -> None:
        """Append `record` as one JSON line."""
        self.write_raw(record.model_dump_json(exclude_none=True).encode() + b"\n")

    def write_raw(self, data: bytes) -> None:
        """Append bytes that already form whole lines."""
        if not self.exclusive:
            fcntl.flock(self._fd, fcntl.LOCK_EX)
        view = memoryview(data)
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
        mine, target = os.fstat(self._fd), os.path.realpath(self.path)
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
