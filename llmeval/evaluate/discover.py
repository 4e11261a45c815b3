"""Files of `eval`: find generation files among the paths named (the run's layout on disk is
`runs.layout`'s), and the task a run is scored as."""

from __future__ import annotations

import glob
import json
import logging
import os
from pathlib import Path
from typing import Any

from llmeval.errors import InputError, UsageError
from llmeval.files import file_kind, open_regular
from llmeval.records import RunSpec
from llmeval.runs.layout import SHARDS_SUFFIX, SIDE_SUFFIXES, run_output, shard_of
from llmeval.tasks import GENERIC, Task, get_task, task_from_filename, task_names, unknown_task

log = logging.getLogger("llmeval")
META_FIELDS = ("subject", "level")
SKYTHOUGHT = "results.json"  # SkyThought's run file, found in folders like *.jsonl


def discover(paths: list[str], cache: Path | None = None) -> list[Path]:
    """Files named, `*.jsonl` files (and SkyThought's `results.json`) in folders named (and the
    shard files of their runs' `<run>.shards/` folders), glob matches; caches (`cache`, the
    --cache file, whatever it holds) and exports skipped. A path that exists is that path, even
    with glob characters in it."""
    found: list[Path] = []
    for raw in paths:
        pattern = glob.has_magic(raw) and not os.path.lexists(raw)
        matches = sorted(glob.glob(raw)) if pattern else [raw]
        if not matches:
            raise InputError(raw, "no file matches this pattern")
        for match in matches:
            path = Path(match)
            if path.is_dir():  # (an empty file in a folder holds no run: a cache emptied)
                found.extend(p for p in sorted(path.glob("*.jsonl")) if _is_generation_file(p)
                             and _size(p))  # fmt: skip
                shards = sorted(path.glob(f"*{SHARDS_SUFFIX}/*.jsonl"))
                found.extend(p for p in shards if shard_of(p) and _is_generation_file(p))
                if (path / SKYTHOUGHT).is_file():
                    found.append(path / SKYTHOUGHT)
            elif not pattern or _is_generation_file(path):
                found.append(path)
    skipped = {cache.resolve()} if cache is not None else set()
    unique = [p for p in dict.fromkeys(p.resolve() for p in found) if p not in skipped]
    if not unique:
        nested = any(next(Path(p).glob("*/*.jsonl"), None) for p in paths if Path(p).is_dir())
        hint = " (a folder's subfolders are not searched: name output/<model>)" if nested else ""
        raise InputError(", ".join(paths), f"no generation files (*.jsonl) found{hint}")
    return unique


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 1  # (reading it says why)


def _is_generation_file(path: Path) -> bool:
    """A `*.jsonl` found in a folder or by a glob that is neither a verdict cache nor a verdict
    export, told by their names or their first row (`files.file_kind`: a cache's has key and
    status, an export's status, correct and pred; neither has gen)."""
    name = path.name
    if name == SKYTHOUGHT:
        return True
    if not name.endswith(".jsonl") or name.startswith(".") or name.endswith(SIDE_SUFFIXES):
        return False
    return file_kind(path) not in ("verdicts", "a verdict export")


def _first_row(path: Path) -> dict[str, Any]:
    """The first line of a file as a JSON object; {} when it is not one."""
    try:
        with open(open_regular(path), "rb") as handle:
            row = json.loads(handle.readline().removeprefix(b"\xef\xbb\xbf") or b"{}")
    except (OSError, ValueError, RecursionError):
        return {}
    return row if isinstance(row, dict) else {}


def resolve_task(path: Path, flag: str | None, spec: RunSpec | None) -> Task:
    """The task from `--task`, else the run spec, else the file name (a shard's run's), else
    the first row's `task` field; else a clear error naming the file."""
    if flag:
        task = get_task(flag)
        if task is None:
            raise UsageError(unknown_task(flag))
        return task
    if spec is not None and spec.task:
        task = get_task(spec.task)
        if task is not None:
            return task
    name = _first_row(path).get("task")  # our records carry `task`
    # the run's file name; else its folder's (NeMo-Skills eval-results/aime24/output-rs0.jsonl,
    # SkyThought <model>_aime24_<hash>/results.json)
    output = run_output(path)
    task = task_from_filename(output) or task_from_filename(output.resolve().parent)
    task = task or (get_task(name) if isinstance(name, str) else None)
    if task is None and spec is not None and spec.prompt_template == GENERIC.template:
        log.warning(
            "%s: its run names no task and asked for boxed answers: scored as the generic task "
            "'math' against its own input (--task NAME for another)",
            path,
        )
        return GENERIC
    if task is None:
        raise InputError(
            path,
            "cannot tell the task from the file name; pass --task NAME "
            f"({', '.join(task_names())}; math: any problems with a boxed answer)",
        )
    return task
