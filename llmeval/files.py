"""Whole files: only regular files are opened (a FIFO or a device is refused before it can
block), folders made with a clear error, and files written whole or not at all (a temporary
file and a rename). JSONL files are `jsonl`'s."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import pydantic_core
from pydantic import BaseModel

from llmeval.errors import InputError, LlmevalError, OutputError


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


_WIDE = ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"),
         (b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16"))  # fmt: skip


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of a regular file's bytes, read in chunks (errors as `open_regular`'s)."""
    with open(open_regular(path), "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def without_bom(head: bytes, path: str | Path) -> bytes:
    """The start of a text file without a UTF-8 byte-order mark; a file in UTF-16 or UTF-32
    (by its mark, or NUL bytes between ASCII characters) is an `InputError` naming it."""
    if head.startswith(b"\xef\xbb\xbf"):
        return head[3:]
    name = next((name for mark, name in _WIDE if head.startswith(mark)), None)
    if name is None and len(head) >= 8 and b"\0" * 4 in (head[1:8:2], head[0:8:2]):
        name = "UTF-16"
    if name is not None:
        raise InputError(path, f"is {name} text, not UTF-8: save it as UTF-8", line=1)
    return head


def link_out_of_folder(path: str | Path) -> str | None:
    """Where `path` leads when it is a symbolic link out of its own folder (a run spec or a
    verdict cache in someone else's results folder pointing elsewhere): None otherwise."""
    if not os.path.islink(path):
        return None
    folder, target = os.path.realpath(Path(path).parent), os.path.realpath(path)
    return None if os.path.commonpath([folder, target]) == folder else target


# What a file holds, told by its content, never its name: the keys of its first JSON object.
_KINDS = (
    ("verdicts", {"key", "status"}),
    ("a run spec", {"model", "n_samples"}),
    ("a score report", {"tasks", "verifier"}),
    ("a verdict export", {"status", "correct", "pred"}),  # (and no `gen`: a row's own)
)
OWN_OUTPUTS = ("a score report", "a verdict export")  # what an output may replace
_CAP = 64 << 20  # bytes read to tell a file: a longer first line is one row (JSON) or no JSON


def file_kind(path: str | Path) -> str | None:
    """What the regular file `path` holds, told by its content: 'verdicts', 'a run spec', 'a
    score report', 'a verdict export', 'JSON rows' (generation rows, problems, another tool's
    samples) or 'a JSON document'; None for no file, an empty one, or one that is not JSON
    (an HTML report, other text)."""
    try:
        with open(open_regular(path), "rb") as handle:
            head = without_bom(handle.readline(_CAP), path)
            json_like = head.lstrip().startswith((b"{", b"["))
            if len(head) >= _CAP:
                return "JSON rows" if json_like else None
            try:
                first, rows = json.loads(head), True
            except ValueError:  # not one line of JSON: a whole JSON document, or none
                rest = handle.read(_CAP)
                if len(rest) >= _CAP:
                    return "a JSON document" if json_like else None
                first, rows = json.loads(head + rest), False
    except (LlmevalError, OSError, ValueError, RecursionError):
        return None
    if isinstance(first, dict):
        keys = first.keys() - ({"status"} if "gen" in first else set())
        kind = next((kind for kind, wanted in _KINDS if wanted <= keys), None)
        if kind is not None:
            return kind
    elif not isinstance(first, list):
        return None
    return "JSON rows" if rows else "a JSON document"


def make_folder(path: str | Path) -> None:
    """Create a folder and its parents; an `OutputError` naming it if that is not possible."""
    try:
        Path(path).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{path}: cannot create the folder: {exc.strerror}") from None


@contextlib.contextmanager
def atomic_file(path: str | Path) -> Iterator[BinaryIO]:
    """A file written whole or not at all: a temporary file beside `path` (its folder made if
    missing), synced and renamed over it when the block ends without error (an earlier file
    stays otherwise). Through a symlink its target is written; a folder, pipe or device there is
    refused, never replaced."""
    given, path = Path(path), Path(os.path.realpath(path))
    if given.exists() and not given.is_file():
        raise OutputError(f"{given}: not a regular file (a folder, pipe or device); not replaced")
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


def write_json_atomic(path: str | Path, data: BaseModel | dict[str, Any] | list[Any]) -> None:
    """Write JSON to `path`, indented, whole or not at all (`atomic_file`); lone surrogates
    (from a file name that is not UTF-8) are written as U+FFFD."""
    try:
        if isinstance(data, BaseModel):
            text = data.model_dump_json(indent=2)
        else:
            text = json.dumps(data, indent=2, ensure_ascii=False)
        raw = text.encode()
    except (pydantic_core.PydanticSerializationError, UnicodeEncodeError):
        data = data.model_dump(mode="json") if isinstance(data, BaseModel) else data
        raw = json.dumps(replace_surrogates(data), indent=2, ensure_ascii=False).encode()
    with atomic_file(path) as handle:
        handle.write(raw + b"\n")


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def replace_surrogates(value: Any) -> Any:
    """`value` with every lone surrogate in its strings replaced by U+FFFD."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {replace_surrogates(k): replace_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [replace_surrogates(v) for v in value]
    return value


def _mode_for(path: Path) -> int:
    """The permissions of the file replaced, else what a new file gets under the umask (a
    temporary file is rw-------)."""
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
