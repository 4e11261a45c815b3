"""Shards of one run: which (problem, sample) pairs shard K of N owns, and where it writes.

A pair belongs to the shard its stable hash (sha256 of the problem id and sample index, never
Python's per-process `hash()`) selects, so the samples of one problem spread over every shard
and any N splits one plan. The run `out/aime24.jsonl` keeps its shards in `out/aime24.shards/`,
one `K-of-N.jsonl` each (with its own lock and run spec); the run is the union of the file
and its shards, whatever N each was written with.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

SHARDS_SUFFIX = ".shards"
_FLAG = re.compile(r"\s*(\d{1,9})\s*/\s*(\d{1,9})\s*")
_FILE = re.compile(r"(\d{1,9})-of-(\d{1,9})\.jsonl")
Pair = tuple[str, int]  # (problem id, sample index): what a shard owns, a run holds once


def pair_hash(problem_id: str, sample_idx: int) -> int:
    """A stable 64-bit hash of one (problem id, sample index) pair."""
    key = f"{problem_id}\0{sample_idx}".encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big")


@dataclass(frozen=True, order=True)
class Shard:
    """Shard `index` (K, from 0) of `count` (N)."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if not 0 <= self.index < self.count:
            raise ValueError(f"shard {self.index}/{self.count}: K must be from 0 to N-1")

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    @property
    def file_name(self) -> str:
        """The name of this shard's generation file: `K-of-N.jsonl`."""
        return f"{self.index}-of-{self.count}.jsonl"

    def owns(self, problem_id: str, sample_idx: int) -> bool:
        """Whether this shard asks for the pair."""
        return pair_hash(problem_id, sample_idx) % self.count == self.index


def parse_shard(text: str) -> Shard:
    """`K/N` (0 <= K < N) as a Shard; ValueError with the reason otherwise."""
    match = _FLAG.fullmatch(text)
    if not match:
        raise ValueError(f"{text!r} is not K/N (shard K of N, K from 0 to N-1)")
    return Shard(int(match[1]), int(match[2]))


def slurm_shard(env: Mapping[str, str]) -> Shard | None:
    """The shard of a Slurm array task (`SLURM_ARRAY_TASK_ID` less the array's first id, over
    its step, of `SLURM_ARRAY_TASK_COUNT`), or None outside an array; ValueError for an array
    whose ids are not a plain range (`--array=1,5,9`)."""
    task_id, count = env.get("SLURM_ARRAY_TASK_ID"), env.get("SLURM_ARRAY_TASK_COUNT")
    if task_id is None or count is None:
        return None
    try:
        first = int(env.get("SLURM_ARRAY_TASK_MIN") or 0)
        step = int(env.get("SLURM_ARRAY_TASK_STEP") or 1)
        offset, n = int(task_id) - first, int(count)
    except ValueError:
        raise ValueError(f"SLURM_ARRAY_TASK_ID={task_id!r} or its count is not a number") from None
    if step < 1 or offset % step or not 0 <= offset // step < n:
        raise ValueError(
            f"Slurm array task {task_id} (first {first}, step {step}, {n} tasks) is not shard "
            "K of N: give --shard K/N"
        )
    return Shard(offset // step, n)


def shards_folder(output: str | Path) -> Path:
    """Where the shards of the run `output` live: `out/aime24.jsonl` -> `out/aime24.shards`."""
    path = Path(output)
    return path.with_name(path.name.removesuffix(".jsonl") + SHARDS_SUFFIX)


def shard_file(output: str | Path, shard: Shard) -> Path:
    """The generation file of one shard of the run `output`."""
    return shards_folder(output) / shard.file_name


def shard_of(path: str | Path) -> Shard | None:
    """The shard a file is (`<run>.shards/K-of-N.jsonl`), or None."""
    path = Path(path)
    match = _FILE.fullmatch(path.name)
    if not match or not path.parent.name.endswith(SHARDS_SUFFIX):
        return None
    try:
        return Shard(int(match[1]), int(match[2]))
    except ValueError:
        return None


def run_output(path: str | Path) -> Path:
    """The unsharded output a file belongs to: itself, or for a shard its run's file
    (`out/aime24.shards/0-of-4.jsonl` -> `out/aime24.jsonl`)."""
    path = Path(path)
    if shard_of(path) is None:
        return path
    folder = path.parent
    return folder.with_name(folder.name.removesuffix(SHARDS_SUFFIX) + ".jsonl")


def run_files(output: str | Path) -> list[Path]:
    """Every generation file of the run `output` that exists: the file itself, then its
    shards' files by N and K (shards of several N: a run resharded half-way)."""
    path = Path(output)
    found = [path] if path.is_file() else []
    folder = shards_folder(path)
    if folder.is_dir():
        shards = [(s, p) for p in folder.iterdir() if (s := shard_of(p)) is not None]
        found += [p for s, p in sorted(shards, key=lambda sp: (sp[0].count, sp[0].index))]
    return found
