"""JSON files written whole: through a temporary file and a rename, never half a file."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from llmeval.errors import OutputError


def write_json_atomic(
    path: str | Path, data: BaseModel | dict[str, Any] | list[Any], indent: int | None = 2
) -> None:
    """Write JSON to `path` through a temporary file and a rename: never half a file."""
    path = Path(path)
    if isinstance(data, BaseModel):
        text = data.model_dump_json(indent=indent)
    else:
        text = json.dumps(data, indent=indent, ensure_ascii=False)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise OutputError(f"{path}: cannot write: {exc.strerror}") from None
    try:
        os.fchmod(fd, _mode_for(path))
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise OutputError(f"{path}: cannot write: {exc.strerror}") from None


def _mode_for(path: Path) -> int:
    """The permissions of the file replaced, else rw-r--r-- (a temporary file is rw-------)."""
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        return 0o644
