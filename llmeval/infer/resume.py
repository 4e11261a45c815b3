"""Resuming an output file: an exclusive lock, the done (problem, sample) pairs, the run spec.

File I/O only; what to request next is planned by the pure `infer.plan`.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path

from llmeval.errors import InputError, OutputError, UsageError
from llmeval.files import read_models
from llmeval.records import RunSpec, SampleKey

log = logging.getLogger("llmeval")


def spec_path(output: str | Path) -> Path:
    """Where the run spec of an output lives: `<output>.spec.json`."""
    return Path(f"{output}.spec.json")


@contextlib.contextmanager
def output_lock(output: str | Path) -> Iterator[None]:
    """An exclusive `flock` on `<output>.lock`: two runs never append to one file."""
    path = Path(f"{Path(output).resolve()}.lock")  # one lock whatever the path spelling
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise OutputError(f"{path}: cannot create the lock file: {exc.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise UsageError(
            f"another llmeval infer is writing {path.with_suffix('')} "
            f"(it holds {path}); wait for it or use another --output"
        ) from None
    try:
        yield
    finally:
        os.close(fd)  # closing releases the lock; the file stays (unlinking races)


def done_keys(output: str | Path) -> set[tuple[str, int]]:
    """The (problem_id, sample_idx) pairs already in the output (none if it does not exist)."""
    if not Path(output).exists():
        return set()
    return {(r.problem_id, r.sample_idx) for _, r in read_models(output, SampleKey)}


def check_spec(output: str | Path, spec: RunSpec, *, force: bool, has_output: bool) -> None:
    """Refuse a resume whose sample-changing parameters differ from the existing spec."""
    path = spec_path(output)
    try:
        diffs = RunSpec.model_validate_json(path.read_bytes()).differences(spec)
    except FileNotFoundError:
        if has_output:
            log.warning("%s has no run spec beside it; writing one now", output)
        return
    except ValueError as exc:  # pydantic's ValidationError included
        raise InputError(path, f"not a valid run spec ({str(exc).splitlines()[0]})") from None
    if not diffs:
        return
    shown = "; ".join(f"{k}: {_short(a)} -> {_short(b)}" for k, (a, b) in diffs.items())
    if not force:
        raise UsageError(
            f"{output} was made with other parameters ({shown}); "
            "use another --output, or --force to continue with the new ones"
        )
    log.warning("--force: continuing %s with changed parameters (%s)", output, shown)


def _short(value: object, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."
