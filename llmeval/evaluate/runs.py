"""The runs of `eval`: the generation files of one run (its file, its shards, or both: a run
moved to a cluster half-way) grouped, proved to be one run by their run specs, and read into
one `InputRun`, so that every figure is computed once over the union of their samples."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llmeval.errors import InputError, UsageError
from llmeval.evaluate.discover import model_folder, read_spec, resolve_task, seed_files, seed_run
from llmeval.evaluate.layouts import RowKeys, RowSource
from llmeval.evaluate.samples import Golds, RowReader, Sample, read_rows
from llmeval.records import CONTEXT_REJECTED, RunSpec
from llmeval.shards import (
    Pair,
    Shard,
    pair_hash,
    parse_shard,
    run_files,
    run_output,
    shard_of,
    shards_folder,
)
from llmeval.tasks import Task

log = logging.getLogger("llmeval")


@dataclass
class FilePart:
    """One file of a run: its run spec, the shard it is (None: the run's unsharded file), and
    its samples, `run.samples[start:stop]` (stop None: to the end)."""

    path: Path
    spec: RunSpec | None = None
    shard: Shard | None = None
    start: int = 0
    stop: int | None = None


@dataclass
class InputRun:
    """One run read: one model on one task under one run spec, from one generation file or
    several; its samples are the union of theirs, each (problem, sample) pair once."""

    path: Path  # the run's output: its file, or the file its shards belong to (`run_output`)
    task: Task
    samples: list[Sample] = field(default_factory=list)
    spec: RunSpec | None = None
    duplicates: int = 0  # pairs read again (across files, or with another text) and left out
    copies: int = 0  # rows that copied an earlier row of their file exactly: counted once
    prompts: dict[str, str] = field(default_factory=dict)  # problem id -> its text (judge)
    model: str = ""  # the run spec's, else the rows' `model`, else the folder's name
    problems_missing: list[str] = field(default_factory=list)  # asked, but without a sample
    reference_ids: dict[str, str] = field(default_factory=dict)  # id -> the data file's id
    foreign: list[str] = field(default_factory=list)  # not in the reference: left out
    parts: list[FilePart] = field(default_factory=list)  # its files (default: `path` alone)
    # the sample indices drawn under each settings id the rows record (None: rows without one)
    settings: dict[str | None, set[int]] = field(default_factory=dict)
    gold_unparsed: set[str] = field(default_factory=set)  # problems whose gold compared as text
    keys: RowKeys = field(default_factory=RowKeys)  # the fields its rows were read under
    reference: tuple[str, str] | None = None  # (file, SHA-256) of the problems scored against

    def __post_init__(self) -> None:
        if not self.parts:
            self.parts = [FilePart(self.path, self.spec, shard_of(self.path))]

    @property
    def files(self) -> list[Path]:
        """The generation files read."""
        return [part.path for part in self.parts]

    @property
    def shards(self) -> list[Shard]:
        """The shards among them."""
        return [part.shard for part in self.parts if part.shard is not None]

    @property
    def name(self) -> str:
        """What messages call the run: its one file, else its file and shards folder."""
        if len(self.parts) == 1:
            return str(self.parts[0].path)
        if seed_run(self.files):
            return f"{self.path.parent}/output-rs*.jsonl ({len(self.parts)} seeds)"
        folder = shards_folder(self.path)
        return f"{self.path} + {folder.name}/" if self.parts[0].shard is None else f"{folder}/"

    def by_file(self) -> list[tuple[Path, list[Sample]]]:
        """Each file with the samples read from it (not those another file held first)."""
        return [(part.path, self.samples[part.start : part.stop]) for part in self.parts]

    def drop_problems(self, problem_ids: set[str]) -> None:
        """Leave out every sample of these problems, each file's share kept in step."""
        kept: list[Sample] = []
        for part, (_, samples) in zip(self.parts, self.by_file(), strict=True):
            part.start = len(kept)
            kept += [s for s in samples if s.problem_id not in problem_ids]
            part.stop = len(kept)
        self.samples = kept


def group_runs(paths: list[Path]) -> list[list[Path]]:
    """The files of each run among `paths`, runs in the order first named: any file of a run
    (or a folder holding it) brings every file of that run (`shards.run_files`, or NeMo-Skills'
    `seed_files`)."""
    runs: dict[Path, list[Path]] = {}
    for path in paths:
        seeds = seed_files(path)
        output = path.parent / "output-rs*.jsonl" if seeds else run_output(path)
        if output not in runs:
            runs[output] = seeds or run_files(output)
        if path not in runs[output]:  # not a regular file: reading it says why
            runs[output].insert(0, path)
    return list(runs.values())


def read_run(
    paths: list[Path],
    task_flag: str | None,
    keys: RowKeys | None = None,
    keep_texts: bool = False,
    model: str | None = None,
) -> InputRun:
    """Read the files of one run (`group_runs`, proved one run by `check_one_run`); the first
    of duplicate (problem, sample) rows is kept, and a pair two files hold is named with both.
    `model` (--model) names the run's model."""
    keys = keys or RowKeys()
    parts = [FilePart(path, read_spec(path), shard_of(path)) for path in paths]
    spec = None if seed_run(paths) else check_one_run(parts)  # (NeMo-Skills writes no spec)
    task = resolve_task(paths[0], task_flag, spec)
    run = InputRun(run_output(paths[0]), task, spec=spec, parts=parts, keys=keys)
    seen: dict[Pair, tuple[Path, int]] = {}
    models: Counter[str] = Counter()
    first_row: dict[str, Any] | None = None
    for part, reader in _readers(parts, task, keys, keep_texts):
        part.start = len(run.samples)
        found = read_rows(part.path, reader, run.samples, run.prompts, seen)
        part.stop = len(run.samples)
        first_row = first_row or found.first_row
        models.update(found.models)
        run.duplicates += found.duplicates
        run.copies += found.copies
        for drawn, indices in found.settings.items():
            run.settings.setdefault(drawn, set()).update(indices)
        for other, (count, example) in found.across.items():
            run.duplicates += count
            log.warning(
                "%s and %s hold the same %d (problem, sample) pairs (first: %s): each counted "
                "once, from %s",
                other, part.path, count, example, other.name,
            )  # fmt: skip
    _refuse_ungradable(run, first_row)
    run.model = model or _model(spec, models, run.path)
    return run


def _readers(
    parts: list[FilePart], task: Task, keys: RowKeys, keep_texts: bool, golds: Golds = None
) -> Iterator[tuple[FilePart, RowReader]]:
    """Each file of a run with its row reader; NeMo-Skills' seed files share one sample
    counter (each seed's file numbers its samples on from the last one's)."""
    counters: Counter[str] = Counter()
    seeds = seed_run([part.path for part in parts])
    for part in parts:
        reader = RowReader(part.path, task, keys, keep_texts, golds)
        if seeds:
            reader.counters = counters
        yield part, reader


def _refuse_ungradable(run: InputRun, first_row: dict[str, Any] | None) -> None:
    """A run without a row, or whose rows hold no gold under its answer key, is an error."""
    if first_row is None:
        what = "the file" if len(run.parts) == 1 else "its files"
        raise InputError(run.name, f"no samples in {what} (empty)")
    if not any(s.gold for s in run.samples):
        raise InputError(
            run.name,
            f"no row has a gold answer under {run.keys.answer!r} (a row has: "
            f"{', '.join(sorted(first_row)[:20])}); name it with --answer-key",
        )


def reread_run(run: InputRun, golds: dict[str, str]) -> None:
    """Give the problems of `golds` those golds, their answers read again for them: how an
    output is read depends on its gold (a gold of k parts takes the final k boxes, a letter an
    option's text), so one output has one verdict whatever gold its row held. The files are
    read as `read_run` read them (the first of a repeated pair counts); only pairs read then
    change."""
    fresh: dict[Pair, Sample] = {}
    for part, reader in _readers(run.parts, run.task, run.keys, False, golds):
        for lineno, row in RowSource(part.path, run.keys.lm_filter):
            if row.get("finish_reason") != CONTEXT_REJECTED:
                for read in reader.samples(lineno, row):
                    fresh.setdefault((read.problem_id, read.sample_idx), read)
    for sample in run.samples:
        new = fresh.get((sample.problem_id, sample.sample_idx))
        if new is not None:
            sample.gold, sample.pred = new.gold, new.pred
            sample.anchored = None if sample.unfinished else new.anchored


def check_one_run(parts: list[FilePart]) -> RunSpec | None:
    """The run spec of a run's files once they are proved one run: with several files, each has
    a spec, a shard file's spec names its shard, and the specs differ only where files of one
    run may (`RunSpec.differences(merging=True)`, and n, which a resume may grow: the run's n
    is the largest); else one line naming the field and files."""
    first = parts[0]
    if len(parts) == 1:
        return first.spec
    for part in parts:
        other = parts[1 if part is first else 0].path
        if part.spec is None:
            raise InputError(
                part.path,
                f"no run spec beside it ({part.path.name}.spec.json): it cannot be shown to be "
                f"one run with {other}; move one of them out of the run",
            )
        if _named_shard(part.spec) != part.shard:
            raise InputError(
                part.path,
                f"its run spec is of shard {part.spec.shard or 'none'}, its name of shard "
                f"{part.shard or 'none'}: not a file of this run as written",
            )
    assert first.spec is not None  # (checked above)
    for part in parts[1:]:
        assert part.spec is not None
        diff = first.spec.differences(part.spec, merging=True)
        diff.pop("n_samples", None)  # a resume may grow n: seeds and requests do not depend on it
        if diff:
            (name, (mine, theirs)), *rest = diff.items()
            also = f"; also {', '.join(n for n, _ in rest)}" if rest else ""
            raise UsageError(
                f"{first.path} and {part.path} are not one run: their run specs differ in "
                f"{name} ({_short(mine)} vs {_short(theirs)}{also})"
            )
    ns = sorted({part.spec.n_samples for part in parts if part.spec is not None})
    if len(ns) > 1:
        log.warning(
            "%s: its files were written with n = %s (a resume grew it); the run plans n = %d",
            run_output(first.path),
            ", ".join(map(str, ns)),
            ns[-1],
        )
    return first.spec.model_copy(update={"n_samples": ns[-1]})


def _named_shard(spec: RunSpec) -> Shard | str | None:
    """The shard a run spec names (its text when that is no shard)."""
    try:
        return None if spec.shard is None else parse_shard(spec.shard)
    except ValueError:
        return spec.shard


def _short(value: Any, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _model(spec: RunSpec | None, models: Counter[str], path: Path) -> str:
    """The run's model: the run spec's, else the rows' (warned when they differ), else the
    nearest folder of its file (or shards folder) that is not a benchmark's."""
    if spec is not None:
        return spec.model
    if len(models) > 1:
        named = ", ".join(f"{m} ({n} rows)" for m, n in models.most_common(5))
        log.warning("%s: rows of several models (%s), scored as one run", path, named)
    return models.most_common(1)[0][0] if models else model_folder(path)


def missing_pairs(problems: Iterable[str], n: int, present: set[Pair]) -> list[Pair]:
    """The planned pairs (`problems` x samples 0..n-1) no file of the run holds."""
    return [(pid, idx) for pid in problems for idx in range(n) if (pid, idx) not in present]


def missing_by_shard(pairs: list[Pair], shards: list[Shard]) -> dict[str, int]:
    """Missing pairs counted by the shard that owns each, for each N the run's shard files
    were written with ("K/N" -> pairs); {} for a run without shards."""
    counts = sorted({shard.count for shard in shards})
    owners: Counter[Shard] = Counter()
    if counts:
        for pid, idx in pairs:
            digest = pair_hash(pid, idx)
            owners.update(Shard(digest % count, count) for count in counts)
    return {str(s): owners[s] for s in sorted(owners, key=lambda s: (s.count, s.index))}
