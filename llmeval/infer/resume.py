"""Resuming a run: the done (problem, sample) pairs of every file of the run (its output and
its shards' files: `runs.layout`), the spec this process writes (the one-run rule and the
settings history: `runs.spec`), and whether another infer writes one of the run's files now.
File I/O only; what to request next is planned by the pure `infer.run.plan`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from pathlib import Path

from llmeval.errors import InputError, UsageError
from llmeval.files import link_out_of_folder
from llmeval.jsonl import held_by_writer, read_models
from llmeval.records import CONTEXT_REJECTED, RunSpec, SampleKey
from llmeval.runs.layout import RunFiles, spec_path
from llmeval.runs.pairs import Pair, Shard
from llmeval.runs.samples import contradiction
from llmeval.runs.spec import SpecFile, continued, one_run, spec_files

log = logging.getLogger("llmeval")


def writable_spec(own: Path) -> Path:
    """Where the spec of the file this process writes goes (`runs.layout.spec_path`); one that
    is a link out of its folder is refused, never followed."""
    path = spec_path(own)
    target = link_out_of_folder(path)
    if target is not None:
        raise InputError(path, f"a link out of its folder (to {target}): not followed; remove it")
    return path


def done_keys(path: Path, spec: RunSpec | None = None) -> set[Pair]:
    """The (problem_id, sample_idx) pairs already in a file (none if it does not exist); a row
    an older infer wrote for a context-length rejection is not one: it is asked again. A row
    whose model or task contradicts the file's spec is refused, naming its line."""
    if not path.exists():
        return set()
    done = set()
    for lineno, row in read_models(path, SampleKey):
        other_run = contradiction({"model": row.model, "task": row.task}, spec)
        if other_run is not None:
            raise InputError(path, f"a row of another run: {other_run}; move the file out of "
                             "this run", line=lineno)  # fmt: skip
        if row.finish_reason != CONTEXT_REJECTED:
            done.add((row.problem_id, row.sample_idx))
    return done


@dataclass
class ResumeScan:
    """The files of a run as this process found them, having locked its own."""

    run: RunFiles
    own: Path  # the file this process writes: the output or its shard's file
    specs: list[SpecFile]  # the run's files with their specs (own included)
    done: set[Pair]  # the pairs any of them holds
    own_rows: bool  # whether the own file holds any

    @property
    def where(self) -> str:
        """Where the run's samples are, as messages name it: its one file holding any (the own
        file is created empty), else `the run's K files`."""
        held = [f for f in self.run.files if f != self.own or self.own_rows]
        return (
            f"the run's {len(held)} files" if len(held) > 1 else f"{held[0] if held else self.own}"
        )


def scan_run(output: Path, own: Path, shard: Shard | None) -> ResumeScan:
    """The run's files, specs and done pairs (another writer's torn last line is skipped, its
    file left as it is), once no other writer could be asking for our pairs."""
    run = RunFiles.of(output)
    refuse_other_writers(run, own, shard)
    specs = spec_files(run)
    done = {file.path: done_keys(file.path, file.spec) for file in specs}
    union = set().union(*done.values())
    return ResumeScan(run, own, specs, union, bool(done.get(own)))


def present(output: Path) -> tuple[set[Pair], int]:
    """The pairs the run's files hold now, and how many files there are."""
    files = RunFiles.of(output).files
    return set().union(*(done_keys(path) for path in files)), len(files)


def refuse_other_writers(run: RunFiles, own: Path, shard: Shard | None) -> None:
    """Refuse while another infer writes a file of the run that may hold our pairs: the
    unsharded output, or a shard of another N (the shards of one N share no pair)."""
    for path in run.files:
        other = run.shard(path)
        if path == own or (other and shard and other.count == shard.count):
            continue
        if not held_by_writer(path):
            continue
        what = f"shard {other} of this run" if other else "the run's unsharded output"
        then = f", or run shard K/{other.count} beside it" if other else ""
        raise UsageError(
            f"another llmeval infer is writing {path} ({what}) now and may ask for the same "
            f"samples; wait for it to end{then}"
        )


def spec_to_write(scan: ResumeScan, requested: RunSpec, *, force: bool) -> RunSpec:
    """The spec of the file this process writes: `requested`, continuing the run its files are
    (`runs.spec`: the one-run rule, asked before anything is written; the history kept; other
    settings than the run's refused unless `force`)."""
    # (the own file's spec binds only with samples: one a killed run left beside none is not)
    recorded = [f for f in scan.specs if f.spec and (f.path != scan.own or scan.own_rows)]
    if scan.own_rows and not any(file.path == scan.own for file in recorded):
        log.warning("%s has no run spec beside it; writing one now", scan.own)
    if len(recorded) == 1:
        path = recorded[0].path
        where = str(path) if path == scan.own else f"{path}, a file of the same run,"
    else:
        where = f"the run's {len(recorded)} files"
    return continued(one_run(recorded) if recorded else None, requested, force=force, where=where)


def check_still_one_run(scan: ResumeScan, written: RunSpec) -> None:
    """Before the first sample is appended: the run's files, read again (a shard started at
    the same moment under other settings has written its spec since), are still one run with
    the spec this process wrote; else a UsageError (nothing of this process written)."""
    specs = spec_files(RunFiles.of(scan.run.output))
    specs = [replace(f, spec=written) if f.path == scan.own else f for f in specs]
    one_run([file for file in specs if file.spec is not None])
