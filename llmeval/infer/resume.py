"""Resuming an output file: the done (problem, sample) pairs and the run spec (the output
itself is locked by its `JsonlAppender`). File I/O only; what to request next is planned by
the pure `infer.run.plan`.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from pydantic import ValidationError

from llmeval.errors import InputError, UsageError
from llmeval.files import read_file
from llmeval.infer.segments import continued
from llmeval.jsonl import read_models
from llmeval.records import CONTEXT_REJECTED, RunSpec, SampleKey

log = logging.getLogger("llmeval")


def spec_path(output: str | Path) -> Path:
    """Where the run spec of an output lives: `<output>.spec.json`."""
    return Path(f"{output}.spec.json")


def done_keys(output: str | Path) -> set[tuple[str, int]]:
    """The (problem_id, sample_idx) pairs already in the output (none if it does not exist); a
    row an older infer wrote for a context-length rejection is not one: it is asked again."""
    if not Path(output).exists():
        return set()
    rows = read_models(output, SampleKey)
    return {(r.problem_id, r.sample_idx) for _, r in rows if r.finish_reason != CONTEXT_REJECTED}


def check_spec(output: str | Path, spec: RunSpec, *, force: bool, has_output: bool) -> RunSpec:
    """Refuse a resume whose sample-changing parameters differ from the existing spec; the spec
    to write: `spec` continuing the stored one (with --force, each part's settings kept)."""
    path = spec_path(output)
    if not path.exists():
        if has_output:
            log.warning("%s has no run spec beside it; writing one now", output)
        return spec
    try:
        stored = RunSpec.read(read_file(path))
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(map(str, error["loc"])) or "the file"
        raise InputError(path, f"not a valid run spec ({where}: {error['msg']})") from None
    diffs = stored.differences(spec)
    if not diffs:
        return continued(spec, stored, changed=False)
    shown = "; ".join(f"{k}: {brief(a)} -> {brief(b)}" for k, (a, b) in diffs.items())
    if not force:
        raise UsageError(
            f"{output} was made with other parameters ({shown}); "
            "use another --output, or --force to continue with the new ones"
        )
    log.warning(
        "--force: continuing %s with changed parameters (%s); the run spec keeps the earlier "
        "ones for the samples drawn under them",
        output,
        shown,
    )
    return continued(spec, stored, changed=True)


def brief(value: object, limit: int = 60) -> str:
    """A value as short JSON for a message."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."
