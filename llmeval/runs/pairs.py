"""The pairs of a run, (problem id, sample index): which shard K of N owns each, and the pairs
a run plans, misses, and holds beyond its n.

A pair belongs to the shard its stable hash (sha256 of the problem id and sample index, never
Python's per-process `hash()`) selects, so the samples of one problem spread over every shard
and any N splits one plan. `--shard K/N` and a Slurm array's variables are read by one rule.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

Pair = tuple[str, int]  # (problem id, sample index): what a shard owns, a run holds once
_NUMBER = re.compile(r"\s*(\d{1,9})\s*")  # a shard number: at most 9 digits
_FLAG = re.compile(r"\s*(\d{1,9})\s*/\s*(\d{1,9})\s*")


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
    """`K/N` (0 <= K < N, each at most 9 digits) as a Shard; ValueError with the reason."""
    match = _FLAG.fullmatch(text)
    if not match:
        raise ValueError(f"{text[:40]!r} is not K/N (shard K of N, K from 0 to N-1)")
    return Shard(int(match[1]), int(match[2]))


def _number(env: Mapping[str, str], name: str, default: int | None = None) -> int:
    """A Slurm variable read as a shard number is (`_NUMBER`); ValueError naming it."""
    text = env.get(name)
    if not text and default is not None:
        return default
    match = _NUMBER.fullmatch(text or "")
    if not match:
        raise ValueError(f"{name}={(text or '')[:40]!r} is not a number of at most 9 digits")
    return int(match[1])


def slurm_shard(env: Mapping[str, str]) -> Shard | None:
    """The shard of a Slurm array task (`SLURM_ARRAY_TASK_ID` less the array's first id, over
    its step, of `SLURM_ARRAY_TASK_COUNT`), or None outside an array; ValueError for values the
    --shard rule refuses and for an array whose ids are not a plain range (`--array=1,5,9`)."""
    if env.get("SLURM_ARRAY_TASK_ID") is None or env.get("SLURM_ARRAY_TASK_COUNT") is None:
        return None
    task_id, count = _number(env, "SLURM_ARRAY_TASK_ID"), _number(env, "SLURM_ARRAY_TASK_COUNT")
    first = _number(env, "SLURM_ARRAY_TASK_MIN", 0)
    step = _number(env, "SLURM_ARRAY_TASK_STEP", 1)
    offset = task_id - first
    if step < 1 or offset % step or not 0 <= offset // step < count:
        raise ValueError(
            f"Slurm array task {task_id} (first {first}, step {step}, {count} tasks) is not "
            "shard K of N: give --shard K/N"
        )
    return Shard(offset // step, count)


def missing_pairs(problems: Iterable[str], n: int, present: set[Pair]) -> list[Pair]:
    """The planned pairs (`problems` x samples 0..n-1) the run does not hold."""
    return [(pid, idx) for pid in problems for idx in range(n) if (pid, idx) not in present]


def beyond(present: Iterable[Pair], n: int) -> list[Pair]:
    """The pairs held at a sample index the run does not plan (n or more), sorted."""
    return sorted(pair for pair in present if pair[1] >= n)


def missing_by_shard(pairs: list[Pair], counts: Iterable[int]) -> dict[str, int]:
    """Missing pairs counted by the shard that owns each, for each N the run's shard files
    were written with ("K/N" -> pairs); {} for a run without shards."""
    ns = sorted(set(counts))
    owners: Counter[Shard] = Counter()
    for pid, idx in pairs if ns else ():
        digest = pair_hash(pid, idx)
        owners.update(Shard(digest % count, count) for count in ns)
    return {str(s): owners[s] for s in sorted(owners, key=lambda s: (s.count, s.index))}
