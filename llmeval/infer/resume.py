"""Resuming a run: the done (problem, sample) pairs of every file of the run (its output and
its shards' files, `shards.run_files`), their run specs, and whether another infer writes one
of them now (each file is locked by its writer's `JsonlAppender`). File I/O only; what to
request next is planned by the pure `infer.run.plan`.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from llmeval.errors import InputError, UsageError
from llmeval.files import link_out_of_folder, read_file, without_bom
from llmeval.infer.segments import continued
from llmeval.jsonl import read_models
from llmeval.records import CONTEXT_REJECTED, RunSpec, SampleKey
from llmeval.shards import Pair, Shard, run_files, shard_of

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


def done_keys(output: str | Path) -> set[Pair]:
    """The (problem_id, sample_idx) pairs already in the output (none if it does not exist); a
    row an older infer wrote for a context-length rejection is not one: it is asked again."""
    if not Path(output).exists():
        return set()
    rows = read_models(output, SampleKey)
    return {(r.problem_id, r.sample_idx) for _, r in rows if r.finish_reason != CONTEXT_REJECTED}


@dataclass
class RunFiles:
    """The files of a run as this process found them, having locked its own."""

    output: Path  # the run's output (an unsharded run's file)
    own: Path  # the file this process writes: the output or its shard's file
    files: list[Path]  # every file of the run (own included)
    done: set[Pair]  # the pairs any of them holds
    own_rows: bool  # whether the own file holds any

    @property
    def where(self) -> str:
        """Where the run's samples are, as messages name it: its one file holding any (the own
        file is created empty), else `the run's K files`."""
        held = [f for f in self.files if f != self.own or self.own_rows]
        return (
            f"the run's {len(held)} files" if len(held) > 1 else f"{held[0] if held else self.own}"
        )


def scan_run(output: Path, own: Path, shard: Shard | None) -> RunFiles:
    """The run's files and done pairs (another writer's torn last line is skipped, its file
    left as it is), once no other writer could be asking for our pairs."""
    files = run_files(output)
    refuse_other_writers(files, own, shard)
    done = {path: done_keys(path) for path in files}
    union = set().union(*done.values())
    return RunFiles(output, own, files, union, bool(done.get(own)))


def present(output: Path) -> tuple[set[Pair], int]:
    """The pairs the run's files hold now, and how many files there are."""
    files = run_files(output)
    return set().union(*(done_keys(path) for path in files)), len(files)


def refuse_other_writers(files: list[Path], own: Path, shard: Shard | None) -> None:
    """Refuse while another infer writes a file of the run that may hold our pairs: the
    unsharded output, or a shard of another N (the shards of one N share no pair)."""
    for path in files:
        other = shard_of(path)
        if path == own or (other and shard and other.count == shard.count) or not _locked(path):
            continue
        what = f"shard {other} of this run" if other else "the run's unsharded output"
        then = f", or run shard K/{other.count} beside it" if other else ""
        raise UsageError(
            f"another llmeval infer is writing {path} ({what}) now and may ask for the same "
            f"samples; wait for it to end{then}"
        )


def _locked(path: Path) -> bool:
    """Whether a writer holds the file's lock now (a shared lock, taken and let go at once,
    cannot be had)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
    return False


def check_specs(
    own: Path, spec: RunSpec, files: list[Path], *, force: bool, has_output: bool
) -> RunSpec:
    """Refuse a run whose sample-changing parameters differ from the spec of its own file (a
    resume; n may grow) or of another file of the run (another shard, the unsharded output);
    the spec to write: `spec` continuing its own file's (with --force, each part's settings
    kept: `segments.continued`)."""
    written = spec
    for path in [own, *(f for f in files if f != own)]:
        stored = stored_spec(spec_path(path))
        if stored is None:
            if path == own and has_output:
                log.warning("%s has no run spec beside it; writing one now", own)
            continue
        diffs = stored.differences(spec)
        if path == own:
            written = continued(spec, stored, changed=bool(diffs))
        if not diffs:
            continue
        shown = "; ".join(f"{k}: {brief(a)} -> {brief(b)}" for k, (a, b) in diffs.items())
        made = f"{own} was" if path == own else f"{path}, a file of the same run, was"
        if not force:
            raise UsageError(
                f"{made} made with other parameters ({shown}); "
                "use another --output, or --force to continue with the new ones"
            )
        if path == own:
            log.warning("--force: continuing %s with changed parameters (%s); the run spec "
                        "keeps the earlier ones for the samples drawn under them", own,
                        shown)  # fmt: skip
        else:
            log.warning("--force: %s made with other parameters (%s): eval will not take "
                        "the run's files for one run until they agree", made, shown)  # fmt: skip
    return written


def stored_spec(path: Path) -> RunSpec | None:
    """The run spec stored at `path`, or None when there is none."""
    if not path.exists():
        return None
    try:
        return RunSpec.read(without_bom(read_file(path), path))
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(map(str, error["loc"])) or "the file"
        raise InputError(path, f"not a valid run spec ({where}: {error['msg']})") from None


def brief(value: object, limit: int = 60) -> str:
    """A value as short JSON for a message."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."
