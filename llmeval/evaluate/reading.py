"""The runs `eval` reads: the generation files of one run (`runs.layout`: its file, its shards,
or both; seed files; shard files copied flat) proved one run (`runs.spec.one_run`) and read into
one `InputRun`, each file's samples kept apart and each (problem, sample) pair once, so that
every figure is computed once over the union."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llmeval.errors import InputError
from llmeval.evaluate.discover import resolve_task
from llmeval.evaluate.layouts import RowKeys
from llmeval.evaluate.samples import Golds, RowReader, Sample, read_rows
from llmeval.jsonl import held_by_writer
from llmeval.records import RunSpec
from llmeval.runs.layout import RunFiles, group, shard_named, shards_folder
from llmeval.runs.names import model_folder
from llmeval.runs.pairs import Pair, Shard, beyond
from llmeval.runs.problems import ProblemMatch
from llmeval.runs.spec import one_run, read_spec, spec_files
from llmeval.tasks import Task, get_task

log = logging.getLogger("llmeval")


@dataclass
class RunPart:
    """One file of a run: its run spec, the shard it is (None: the run's unsharded file, a
    seed file), and the samples read from it (not those another file held first)."""

    path: Path
    spec: RunSpec | None = None
    shard: Shard | None = None
    samples: list[Sample] = field(default_factory=list)


@dataclass
class Reference:
    """The problems a run was scored against: their file and SHA-256, how the run's problems
    match them (`runs.problems`), and those asked without a sample."""

    file: str | None = None
    sha256: str | None = None
    match: ProblemMatch = field(default_factory=ProblemMatch)
    missing: list[str] = field(default_factory=list)


@dataclass
class InputRun:
    """One run read: one model on one task under one settings history, from one generation
    file or several; its samples are the union of its files', each (problem, sample) pair
    once."""

    path: Path  # the run's output: its file, the file its shards belong to, or their folder
    task: Task
    parts: list[RunPart] = field(default_factory=list)
    spec: RunSpec | None = None
    keys: RowKeys = field(default_factory=RowKeys)
    model: str = ""  # the run spec's, else the rows' `model`, else the folder's name
    prompts: dict[str, str] = field(default_factory=dict)  # problem id -> its text (judge)
    duplicates: int = 0  # rows under a pair another row held (another file, another text)
    copies: int = 0  # rows that repeated earlier rows: one sample, counted once
    beyond_n: list[Pair] = field(default_factory=list)  # held at an index the run does not plan
    being_written: bool = False  # a writer (infer) holds one of its files now
    seeds: bool = False  # NeMo-Skills' seed files: one sample per problem in each
    flat: bool = False  # shard files copied flat, outside a shards folder
    reference: Reference = field(default_factory=Reference)
    gold_unparsed: set[str] = field(default_factory=set)  # problems whose gold compared as text

    def __post_init__(self) -> None:
        if not self.parts:
            self.parts = [RunPart(self.path, self.spec)]

    @property
    def samples(self) -> tuple[Sample, ...]:
        """Every sample of the run, file by file (each file's list is its part's)."""
        return tuple(sample for part in self.parts for sample in part.samples)

    @property
    def files(self) -> list[Path]:
        """The generation files read."""
        return [part.path for part in self.parts]

    @property
    def shards(self) -> list[Shard]:
        """The shards among them."""
        return [part.shard for part in self.parts if part.shard is not None]

    @property
    def where(self) -> str:
        """Where messages say the run is: its one file, else its files in a few words."""
        if len(self.parts) == 1:
            return str(self.parts[0].path)
        if self.seeds:
            return f"{self.path} ({len(self.parts)} seeds)"
        if not self.shards or self.path.is_dir():
            return f"{self.path}/"
        folder = shards_folder(self.path)
        return f"{self.path} + {folder.name}/" if self.parts[0].shard is None else f"{folder}/"

    def by_file(self) -> list[tuple[Path, list[Sample]]]:
        """Each file with the samples read from it."""
        return [(part.path, part.samples) for part in self.parts]

    def drop_problems(self, problem_ids: set[str]) -> None:
        """Leave out every sample of these problems."""
        for part in self.parts:
            part.samples = [s for s in part.samples if s.problem_id not in problem_ids]


def group_runs(paths: list[Path]) -> list[RunFiles]:
    """The runs among `paths` (`runs.layout.group`): shard files copied flat into one folder
    are one run when their specs say they are those shards."""
    return group(paths, _spec_names_its_shard)


def _spec_names_its_shard(path: Path) -> bool:
    spec = read_spec(path)
    return spec is not None and spec.shard == str(shard_named(path))


def open_run(files: RunFiles, task_flag: str | None, keys: RowKeys | None = None) -> InputRun:
    """A run's files with their specs, proved one run, and its task: a run not read yet."""
    found = spec_files(files)
    parts = [RunPart(file.path, file.spec, file.shard) for file in found]
    spec = None if files.seeds else one_run(found)
    task = resolve_task(files.files[0], task_flag, spec)
    return InputRun(files.output, task, parts, spec, keys or RowKeys(), seeds=files.seeds,
                    flat=files.flat)  # fmt: skip


def read_run(
    run: InputRun, keep_texts: bool = False, model: str | None = None, digests: bool = False
) -> InputRun:
    """Read the files of an opened run (`open_run`); a pair two files hold counts once (the
    first file's), named with both; samples at an index the run spec does not plan are left
    out and named. `model` (--model) names the run's model; `digests`: each sample keeps a
    digest of its texts (runs compared by `unchanged.py`)."""
    seen: dict[Pair, Path] = {}
    models: Counter[str] = Counter()
    first_row: dict[str, Any] | None = None
    for part, reader in _readers(run, keep_texts, digests=digests):
        found = read_rows(reader, run.prompts)
        first_row = first_row or found.first_row
        models.update(found.models)
        run.duplicates += found.duplicates
        run.copies += found.copies
        part.samples = _first_holders(found.samples, part.path, seen, run)
    if run.flat:
        log.warning(
            "%s: shard files of one run lie outside their run's shards folder: read as one "
            "run; keep them in <run>.shards/ beside the run's file",
            run.where,
        )
    _refuse_ungradable(run, first_row)
    run.model = model or _model(run.spec, models, run.path)
    _leave_out_beyond_n(run)
    run.being_written = any(held_by_writer(path) for path in run.files)
    return run


def _readers(
    run: InputRun, keep_texts: bool, golds: Golds = None, *, digests: bool = False
) -> Iterator[tuple[RunPart, RowReader]]:
    """Each file of a run with its row reader; NeMo-Skills' seed files share one sample
    counter (each seed's file numbers its samples on from the last one's)."""
    shared: Counter[str] | None = Counter() if run.seeds else None
    for part in run.parts:
        spec = part.spec if run.spec is not None else None
        reader = RowReader(part.path, run.task, run.keys, keep_texts, spec, golds, shared)
        reader.digests = digests
        yield part, reader


def _first_holders(
    samples: list[Sample], path: Path, seen: dict[Pair, Path], run: InputRun
) -> list[Sample]:
    """The samples of a file whose pair no earlier file of the run held; the others counted
    and named, per file that held them first."""
    kept, again = [], Counter[Path]()
    example: dict[Path, str] = {}
    for sample in samples:
        pair = (sample.problem_id, sample.sample_idx)
        other = seen.setdefault(pair, path)
        if other == path:
            kept.append(sample)
        else:
            again[other] += 1
            example.setdefault(other, f"{pair[0]}#{pair[1]}")
    for other, count in again.items():
        run.duplicates += count
        log.warning("%s and %s hold the same %d (problem, sample) pairs (first: %s): each "
                    "counted once, from %s", other, path, count, example[other],
                    other.name)  # fmt: skip
    return kept


def _refuse_ungradable(run: InputRun, first_row: dict[str, Any] | None) -> None:
    """A run without a row, or whose rows hold no gold under its answer key, is an error."""
    if first_row is None:
        what = "the file" if len(run.parts) == 1 else "its files"
        raise InputError(run.where, f"no samples in {what} (empty)")
    if not any(s.gold for s in run.samples):
        raise InputError(
            run.where,
            f"no row has a gold answer under {run.keys.answer!r} (a row has: "
            f"{', '.join(sorted(first_row)[:20])}); name it with --answer-key",
        )


def _leave_out_beyond_n(run: InputRun) -> None:
    """Samples at an index the run spec does not plan (n or more: a resume at a smaller n, a
    stray row) are left out of every figure and named: infer does not plan them either."""
    if run.spec is None:
        return
    n = run.spec.n_samples
    run.beyond_n = beyond(((s.problem_id, s.sample_idx) for s in run.samples), n)
    if run.beyond_n:
        for part in run.parts:
            part.samples = [s for s in part.samples if s.sample_idx < n]
        indices = sorted({idx for _, idx in run.beyond_n})
        shown = ", ".join(map(str, indices[:10])) + (", ..." if len(indices) > 10 else "")
        log.warning("%s: %d samples at sample indices %s, beyond the run spec's n = %d: left "
                    "out of its figures", run.where, len(run.beyond_n), shown, n)  # fmt: skip


def reread_run(run: InputRun, golds: dict[str, str]) -> None:
    """Give the problems of `golds` those golds, their answers read again for them: how an
    output is read depends on its gold (a gold of k parts takes the final k boxes, a letter an
    option's text), so one output has one verdict whatever gold its row held. The files are
    read as `read_run` read them; only pairs read then change."""
    fresh: dict[Pair, Sample] = {}
    for _, reader in _readers(run, False, golds):
        for sample in read_rows(reader, {}, quiet=True).samples:
            if sample.problem_id in golds:
                fresh.setdefault((sample.problem_id, sample.sample_idx), sample)
    for sample in run.samples:
        new = fresh.get((sample.problem_id, sample.sample_idx))
        if new is not None:
            sample.gold, sample.pred = new.gold, new.pred
            sample.anchored = None if sample.unfinished else new.anchored


def _model(spec: RunSpec | None, models: Counter[str], path: Path) -> str:
    """The run's model: the run spec's, else the rows' (warned when they differ), else the
    nearest folder of its file (or shards folder) that is not a benchmark's."""
    if spec is not None:
        return spec.model
    if len(models) > 1:
        named = ", ".join(f"{m} ({n} rows)" for m, n in models.most_common(5))
        log.warning("%s: rows of several models (%s), scored as one run", path, named)
    if models:
        return models.most_common(1)[0][0]
    return model_folder(path, lambda name: get_task(name) is not None)
