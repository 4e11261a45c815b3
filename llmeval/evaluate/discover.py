"""Files of `eval`: find generation files, their run spec, task, and the folder that names a
run's model."""

from __future__ import annotations

import glob
import json
import logging
import os
import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from llmeval.errors import InputError, UsageError
from llmeval.files import link_out_of_folder, open_regular, read_file, without_bom
from llmeval.records import RunSpec
from llmeval.shards import SHARDS_SUFFIX, run_output, shard_of
from llmeval.tasks import GENERIC, TASKS, Task, get_task, task_from_filename, unknown_task

log = logging.getLogger("llmeval")
SIDE_SUFFIXES = (".verdicts.jsonl", ".spec.json", ".tools.jsonl")  # (sandbox/cache.py)
META_FIELDS = ("subject", "level")
SKYTHOUGHT = "results.json"  # SkyThought's run file, found in folders like *.jsonl
# NeMo-Skills writes one file per seed of a run, each sample 0 of every problem
_SEED_FILE = re.compile(r"output-rs(\d{1,9})\.jsonl")


def discover(paths: list[str]) -> list[Path]:
    """Files named, `*.jsonl` files (and SkyThought's `results.json`) in folders named (and the
    shard files of their runs' `<run>.shards/` folders), glob matches; caches and exports
    skipped. A path that exists is that path, even with glob characters in it."""
    found: list[Path] = []
    for raw in paths:
        pattern = glob.has_magic(raw) and not os.path.lexists(raw)
        matches = sorted(glob.glob(raw)) if pattern else [raw]
        if not matches:
            raise InputError(raw, "no file matches this pattern")
        for match in matches:
            path = Path(match)
            if path.is_dir():
                found.extend(p for p in sorted(path.glob("*.jsonl")) if _is_generation_file(p))
                shards = sorted(path.glob(f"*{SHARDS_SUFFIX}/*.jsonl"))
                found.extend(p for p in shards if shard_of(p) and _is_generation_file(p))
                if (path / SKYTHOUGHT).is_file():
                    found.append(path / SKYTHOUGHT)
            elif not pattern or _is_generation_file(path):
                found.append(path)
    unique = list(dict.fromkeys(p.resolve() for p in found))
    if not unique:
        nested = any(next(Path(p).glob("*/*.jsonl"), None) for p in paths if Path(p).is_dir())
        hint = " (a folder's subfolders are not searched: name output/<model>)" if nested else ""
        raise InputError(", ".join(paths), f"no generation files (*.jsonl) found{hint}")
    return unique


def _is_generation_file(path: Path) -> bool:
    """A `*.jsonl` found in a folder or by a glob that is neither a cache nor a verdict export
    (whose first row has status, correct and pred, and no gen)."""
    name = path.name
    if name == SKYTHOUGHT:
        return True
    if not name.endswith(".jsonl") or name.startswith(".") or name.endswith(SIDE_SUFFIXES):
        return False
    row = _first_row(path)
    return not ({"status", "correct", "pred"} <= row.keys() and "gen" not in row)


def _first_row(path: Path) -> dict[str, Any]:
    """The first line of a file as a JSON object; {} when it is not one."""
    try:
        with open(open_regular(path), "rb") as handle:
            row = json.loads(handle.readline().removeprefix(b"\xef\xbb\xbf") or b"{}")
    except (OSError, ValueError, RecursionError):
        return {}
    return row if isinstance(row, dict) else {}


def read_spec(path: Path) -> RunSpec | None:
    """The run spec beside a generation file (`<file>.spec.json`), if there is one."""
    spec_path = path.with_name(path.name + ".spec.json")
    target = link_out_of_folder(spec_path)
    if target is not None:
        log.warning("%s is a link out of its folder (to %s): not read", spec_path, target)
        return None
    if not spec_path.exists():
        return None
    try:
        spec = RunSpec.read(without_bom(read_file(spec_path), spec_path))
    except ValidationError as exc:
        raise InputError(spec_path, f"not a run spec ({exc.errors()[0]['msg']})") from None
    own = RunSpec.own_fields_in(spec.extra_body)
    if own:
        log.warning(
            "%s: its run's --extra-body replaced llmeval's own %s in every request (the "
            "per-sample seeds or settings the rows record were not sent)",
            spec_path,
            ", ".join(own),
        )
    return spec


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
            f"cannot tell the task from the file name; pass --task NAME ({', '.join(TASKS)}; "
            "math: any problems with a boxed answer)",
        )
    return task


# Folders named for a benchmark or a harness's results, never for a model: NeMo-Skills
# <model>/eval-results/<benchmark>/, LIMO outputs/<model>/<benchmark>/ (its data names).
_NOT_MODELS = {"eval-results", "aime", "amc", "math", "minerva", "gpqa", "gaokao", "kaoyan",
               "cn_math_2024", "grade_school_math"}  # fmt: skip


def seed_files(path: Path) -> list[Path] | None:
    """NeMo-Skills' files of one run beside `path` (`output-rs<seed>.jsonl`, by seed), or None
    when `path` is not one of them."""
    if not _SEED_FILE.fullmatch(path.name):
        return None
    found = ((_SEED_FILE.fullmatch(p.name), p) for p in path.parent.glob("output-rs*.jsonl"))
    return [p for m, p in sorted((int(m[1]), p) for m, p in found if m)]


def seed_run(paths: list[Path]) -> bool:
    """Whether the files are NeMo-Skills' seed files of one run (`seed_files`)."""
    return len(paths) > 1 and all(_SEED_FILE.fullmatch(path.name) for path in paths)


def model_folder(path: Path) -> str:
    """The model a file's folders name: the nearest folder that is not a benchmark's (a task
    or its alias, or a harness's results folder); else the file's own folder."""
    folders = [f.name for f in path.resolve().parents if f.name]
    for name in folders:
        if name.lower() not in _NOT_MODELS and get_task(name) is None:
            return name
    return folders[0] if folders else path.stem
