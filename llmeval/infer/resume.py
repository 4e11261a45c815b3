"""Resuming an output file: an exclusive lock, the done (problem, sample) pairs, the run spec.

File I/O only; what to request next is planned by the pure `infer.plan`.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
from pathlib import Path

from pydantic import ValidationError

from llmeval.errors import InputError, OutputError, UsageError
from llmeval.files import read_models, write_json_atomic
from llmeval.records import RunSpec, SampleKey

log = logging.getLogger("llmeval")


def spec_path(output: str | Path) -> Path:
    """Where the run spec of an output lives: `<output>.spec.json`."""
    return Path(f"{output}.spec.json")


class OutputLock:
    """An exclusive `flock` on `<output>.lock`: two runs never append to one file."""

    def __init__(self, output: str | Path) -> None:
        self.path = Path(f"{Path(output).resolve()}.lock")  # one lock whatever the path spelling
        self._fd = -1

    def __enter__(self) -> OutputLock:
        try:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise OutputError(f"{self.path}: cannot create the lock file: {exc.strerror}") from None
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(self._fd)
            self._fd = -1
            raise UsageError(
                f"another llmeval infer is writing {self.path.with_suffix('')} "
                f"(it holds {self.path}); wait for it or use another --output"
            ) from None
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fd >= 0:
            os.close(self._fd)  # closing releases the lock; the file stays (unlinking races)
            self._fd = -1


def done_keys(output: str | Path) -> set[tuple[str, int]]:
    """The (problem_id, sample_idx) pairs already in the output (none if it does not exist)."""
    if not Path(output).exists():
        return set()
    return {(r.problem_id, r.sample_idx) for _, r in read_models(output, SampleKey)}


def read_spec(output: str | Path) -> RunSpec | None:
    """The run spec beside an output, or None if there is none."""
    path = spec_path(output)
    try:
        return RunSpec.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        return None
    except (ValidationError, ValueError) as exc:
        raise InputError(path, f"not a valid run spec ({str(exc).splitlines()[0]})") from None


def check_spec(output: str | Path, spec: RunSpec, *, force: bool, has_output: bool) -> None:
    """Refuse a resume whose sample-changing parameters differ from the existing spec."""
    old = read_spec(output)
    if old is None:
        if has_output:
            log.warning("%s has no run spec beside it; writing one now", output)
        return
    diffs = old.differences(spec)
    if not diffs:
        return
    shown = "; ".join(f"{k}: {_short(a)} -> {_short(b)}" for k, (a, b) in diffs.items())
    if not force:
        raise UsageError(
            f"{output} was made with other parameters ({shown}); "
            "use another --output, or --force to continue with the new ones"
        )
    log.warning("--force: continuing %s with changed parameters (%s)", output, shown)


def write_spec(output: str | Path, spec: RunSpec) -> None:
    """Write the run spec atomically beside the output."""
    write_json_atomic(spec_path(output), spec)


def _short(value: object, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."
