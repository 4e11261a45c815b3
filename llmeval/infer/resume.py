"""Resuming an output file: the done (problem, sample) pairs and the run spec (the output
itself is locked by its `JsonlAppender`). File I/O only; what to request next is planned by
the pure `infer.run.plan`.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from pydantic import ValidationError

from llmeval.errors import InputError, UsageError
from llmeval.files import link_out_of_folder, read_file, without_bom
from llmeval.jsonl import read_models
from llmeval.records import CONTEXT_REJECTED, RunSpec, SampleKey

log = logging.getLogger("llmeval")


def spec_path(output: str | Path) -> Path:
    """Where the run spec of an output lives: `<output>.spec.json` beside the file the samples
    go to (through a symlink: beside its target, where eval reads it); a spec that is a link
    out of that folder is refused, never followed."""
    path = Path(f"{os.path.realpath(output)}.spec.json")
    target = link_out_of_folder(path)
    if target is not None:
        raise InputError(path, f"a link out of its folder (to {target}): not followed; remove it")
    return path


def done_keys(output: str | Path) -> set[tuple[str, int]]:
    """The (problem_id, sample_idx) pairs already in the output (none if it does not exist); a
    row an older infer wrote for a context-length rejection is not one: it is asked again."""
    if not Path(output).exists():
        return set()
    rows = read_models(output, SampleKey)
    return {(r.problem_id, r.sample_idx) for _, r in rows if r.finish_reason != CONTEXT_REJECTED}


def check_spec(output: str | Path, spec: RunSpec, *, force: bool, has_output: bool) -> None:
    """Refuse a resume whose sample-changing parameters differ from the existing spec."""
    path = spec_path(output)
    if not path.exists():
        if has_output:
            log.warning("%s has no run spec beside it; writing one now", path.with_suffix(""))
        return
    try:
        diffs = RunSpec.read(without_bom(read_file(path), path)).differences(spec)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(map(str, error["loc"])) or "the file"
        raise InputError(path, f"not a valid run spec ({where}: {error['msg']})") from None
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
