"""Files: stream JSONL records (a torn last line tolerated: see `appender`), and JSON files
written whole (a temporary file and a rename). Only regular files are opened: a FIFO or a
device is refused before it can block.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

import pydantic_core
from pydantic import BaseModel, ValidationError

from llmeval.errors import InputError, OutputError

log = logging.getLogger("llmeval")

M = TypeVar("M", bound=BaseModel)


def open_regular(path: str | Path, flags: int = os.O_RDONLY) -> int:
    """A descriptor on the regular file `path`; a folder, FIFO or device is refused without
    blocking (O_NONBLOCK). Errors name the path: `InputError` reading, `OutputError` writing."""
    writing = flags & (os.O_WRONLY | os.O_RDWR)
    try:
        fd = os.open(path, flags | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        if isinstance(exc, IsADirectoryError):
            raise InputError(path, "is a folder, expected a file") from None
        if writing:
            raise OutputError(f"{path}: cannot open for writing: {exc.strerror}") from None
        missing = isinstance(exc, FileNotFoundError)
        raise InputError(
            path, "no such file" if missing else f"cannot read: {exc.strerror}"
        ) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        what = "a folder" if stat.S_ISDIR(mode) else "a pipe or a device"
        raise InputError(path, f"is {what}, expected a file")
    return fd


def read_file(path: str | Path) -> bytes:
    """The bytes of a regular file (errors as `open_regular`'s)."""
    with open(open_regular(path), "rb") as handle:
        return handle.read()


def make_folder(path: str | Path) -> None:
    """Create a folder and its parents; an `OutputError` naming it if that is not possible."""
    try:
        Path(path).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{path}: cannot create the folder: {exc.strerror}") from None


def iter_lines(path: str | Path) -> Iterator[tuple[int, bytes, bool]]:
    """Yield (line number, raw line without newline, is_unterminated) for non-blank lines.

    Only the file's last line can be unterminated. A missing file is an `InputError`.
    """
    # lines are long: 8 KB reads cost 4x
    with open(open_regular(path), "rb", buffering=1 << 20) as handle:
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


def is_torn(body: bytes) -> bool:
    """An unterminated line is torn when it is not a complete JSON value."""
    try:
        loads_text(body)
    except (ValueError, UnicodeDecodeError):
        return True
    return False


@contextlib.contextmanager
def atomic_file(path: str | Path) -> Iterator[BinaryIO]:
    """A file written whole or not at all: a temporary file beside `path` (its folder made if
    missing), synced and renamed over it when the block ends without error (an earlier file
    stays otherwise)."""
    path = Path(path)
    make_folder(path.parent)
    try:
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
    """Write JSON to `path` whole or not at all (`atomic_file`); lone surrogates (from a file
    name that is not UTF-8) are written as U+FFFD."""
    try:
        if isinstance(data, BaseModel):
            text = data.model_dump_json(indent=indent)
        else:
            text = json.dumps(data, indent=indent, ensure_ascii=False)
        raw = text.encode()
    except (pydantic_core.PydanticSerializationError, UnicodeEncodeError):
        data = data.model_dump(mode="json") if isinstance(data, BaseModel) else data
        raw = json.dumps(_replace_surrogates(data), indent=indent, ensure_ascii=False).encode()
    with atomic_file(path) as handle:
        handle.write(raw + b"\n")


def _mode_for(path: Path) -> int:
    """The permissions of the file replaced, else what a new file gets under the umask (a
    temporary file is rw-------)."""
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
