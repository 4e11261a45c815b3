"""A run's files on disk: its output, its shards' files by N and K (in `<run>.shards/`, or
copied flat into one folder), NeMo-Skills' seed files; beside each file its run spec and its
verdict cache. Names only: what the files hold is read by `spec` and the stages.

The run `out/aime24.jsonl` keeps its shards in `out/aime24.shards/`, one `K-of-N.jsonl` each
(with its own lock, spec and cache); the run is the union of the file and its shards, whatever
N each was written with. A file reached through a symbolic link has its spec, cache and shards
beside its target, where every reader finds them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from llmeval.runs.pairs import Shard

SHARDS_SUFFIX = ".shards"
SPEC_SUFFIX = ".spec.json"
CACHE_SUFFIX = ".verdicts.jsonl"
TOOLS_SUFFIX = ".tools.jsonl"  # the results of a run's tool calls (sandbox/cache.py)
SIDE_SUFFIXES = (CACHE_SUFFIX, SPEC_SUFFIX, TOOLS_SUFFIX)  # beside a run's, never generation files
_SHARD_FILE = re.compile(r"(\d{1,9})-of-(\d{1,9})\.jsonl")
_SEED_FILE = re.compile(r"output-rs(\d{1,9})\.jsonl")  # NeMo-Skills: a file per seed


def resolved(path: str | Path) -> Path:
    """Where a path leads (symbolic links followed, the file itself need not exist)."""
    return Path(os.path.realpath(path))


def spec_path(file: str | Path) -> Path:
    """The run spec of a generation file: `<file>.spec.json` beside it (beside its target)."""
    return Path(f"{resolved(file)}{SPEC_SUFFIX}")


def cache_path(file: str | Path) -> Path:
    """The default verdict cache of a generation file: `<file>.verdicts.jsonl` beside it."""
    return Path(f"{resolved(file)}{CACHE_SUFFIX}")


def shards_folder(output: str | Path) -> Path:
    """Where the shards of the run `output` live: `out/aime24.jsonl` -> `out/aime24.shards`."""
    path = resolved(output)
    return path.with_name(path.name.removesuffix(".jsonl") + SHARDS_SUFFIX)


def shard_file(output: str | Path, shard: Shard) -> Path:
    """The generation file of one shard of the run `output`."""
    return shards_folder(output) / shard.file_name


def shard_named(path: str | Path) -> Shard | None:
    """The shard a file's name says it is (`K-of-N.jsonl`, wherever it lies), or None."""
    match = _SHARD_FILE.fullmatch(Path(path).name)
    try:
        return Shard(int(match[1]), int(match[2])) if match else None
    except ValueError:
        return None


def shard_of(path: str | Path) -> Shard | None:
    """The shard a file is in its run's shards folder (`<run>.shards/K-of-N.jsonl`), or None."""
    path = Path(path)
    return shard_named(path) if path.parent.name.endswith(SHARDS_SUFFIX) else None


def run_output(path: str | Path) -> Path:
    """The unsharded output a file belongs to: itself, or for a shard its run's file
    (`out/aime24.shards/0-of-4.jsonl` -> `out/aime24.jsonl`)."""
    path = Path(path)
    if shard_of(path) is None:
        return path
    folder = path.parent
    return folder.with_name(folder.name.removesuffix(SHARDS_SUFFIX) + ".jsonl")


def seed_files(path: Path) -> list[Path] | None:
    """NeMo-Skills' files of one run beside `path` (`output-rs<seed>.jsonl`, by seed), or None
    when `path` is not one of them."""
    if not _SEED_FILE.fullmatch(path.name):
        return None
    found = ((_SEED_FILE.fullmatch(p.name), p) for p in path.parent.glob("output-rs*.jsonl"))
    return [p for m, p in sorted((int(m[1]), p) for m, p in found if m)]


def is_seed_run(paths: Iterable[Path]) -> bool:
    """Whether the files are NeMo-Skills' seed files of one run (two or more)."""
    paths = list(paths)
    return len(paths) > 1 and all(_SEED_FILE.fullmatch(path.name) for path in paths)


def _by_shard(paths: Iterable[Path]) -> list[Path]:
    """Shard files by N, then K."""
    shards = [(s, p) for p in paths if (s := shard_named(p)) is not None]
    return [p for s, p in sorted(shards, key=lambda sp: (sp[0].count, sp[0].index, sp[1]))]


@dataclass(frozen=True)
class RunFiles:
    """The generation files of one run that exist, and the output they belong to: the run's
    unsharded file (which may not exist), the folder shard files were copied flat into, or
    `<folder>/output-rs*.jsonl` for seed files."""

    output: Path
    files: tuple[Path, ...]
    flat: bool = False  # shard files lying outside a `<run>.shards/` folder

    @classmethod
    def of(cls, output: str | Path) -> RunFiles:
        """The run `output` (its unsharded file's path): the file itself, then its shards'
        files by N and K (shards of several N: a run resharded half-way)."""
        path = Path(output)
        found = [path] if path.is_file() else []
        folder = shards_folder(path)
        if folder.is_dir():
            found += _by_shard(p for p in folder.iterdir() if p.is_file())
        return cls(path, tuple(found))

    def shard(self, file: Path) -> Shard | None:
        """The shard a file of this run is (None: the unsharded file, a seed file)."""
        return shard_named(file) if self.flat else shard_of(file)

    @property
    def seeds(self) -> bool:
        """Whether the run is NeMo-Skills' seed files."""
        return is_seed_run(self.files)


def group(paths: Iterable[Path], is_shard: Callable[[Path], bool]) -> list[RunFiles]:
    """The runs among `paths`, in the order first named: any file of a run (or a folder holding
    it) brings every file of that run; NeMo-Skills' seed files of a folder are one run; files
    named `K-of-N.jsonl` outside a shards folder for which `is_shard` holds (their specs say
    they are that shard) are one run per folder."""
    runs: dict[Path, list[Path]] = {}
    flat: set[Path] = set()
    for path in paths:
        seeds = seed_files(path)
        if seeds:
            output, files = path.parent / "output-rs*.jsonl", seeds
        elif shard_of(path) is None and shard_named(path) and is_shard(path):
            output = path.parent
            flat.add(output)
            siblings = (p for p in path.parent.iterdir() if p.is_file() and shard_named(p))
            files = [p for p in _by_shard(siblings) if is_shard(p)]
        else:
            output = run_output(path)
            files = list(RunFiles.of(output).files)
        if output not in runs:
            runs[output] = files
        if path not in runs[output]:  # not a regular file: reading it says why
            runs[output].insert(0, path)
    return [RunFiles(out, tuple(files), out in flat) for out, files in runs.items()]
