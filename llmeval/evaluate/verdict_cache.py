"""Eval's verdict cache: append-only JSONL of `Verdict`s, the rules' (keyed by verifier id,
kind, gold and answer) and the LLM judge's (by prompt version, model and question).

Each distinct pair is verified once; new verdicts are appended as they arrive, so an
interrupted eval keeps its progress. A `timeout` is retried under a longer deadline. Verdicts
of another verifier version are never reused: said, and the cache rewritten without them.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from pydantic import ValidationError

from llmeval.errors import OutputError
from llmeval.files import atomic_file, link_out_of_folder
from llmeval.jsonl import JsonlAppender, loads_text, locked, read_models
from llmeval.records import Verdict

# What made a verdict when it is provably not the current verifier (a policy id), else None.
Stale = Callable[[Verdict], str | None]

log = logging.getLogger("llmeval")


class VerdictCache:
    """Verdicts loaded from one or more cache files; new ones go to the files that need them."""

    def __init__(self, paths: list[Path], timeout_s: float, stale: Stale | None = None) -> None:
        self.timeout_s = timeout_s
        self._known: dict[Path, set[str]] = {}
        self.verdicts: dict[str, Verdict] = {}
        self._writers: dict[Path, JsonlAppender | None] = {}
        for path in paths:
            self._known[path] = set()
            target = link_out_of_folder(path)
            if target is not None:  # never followed: nothing read, nothing created there
                log.warning("verdict cache %s is a link out of its folder (to %s): not used",
                            path, target)  # fmt: skip
                self._writers[path] = None
                continue
            if not path.exists():
                continue
            dropped: Counter[str] = Counter()
            for _, verdict in read_models(path, Verdict):
                made_by = stale(verdict) if stale else None
                if made_by is not None:
                    dropped[made_by] += 1
                    continue
                self.verdicts[verdict.key] = verdict
                self._known[path].add(verdict.key)
            if dropped and stale:
                _clear(path, dropped, stale)

    def get(self, key: str) -> Verdict | None:
        """The cached verdict of `key`; a timeout under a shorter deadline than now is a miss."""
        verdict = self.verdicts.get(key)
        if verdict is None:
            return None
        if verdict.status == "timeout" and (verdict.timeout_s or 0.0) < self.timeout_s:
            return None
        return verdict

    def add(self, verdict: Verdict, paths: list[Path], *, new: bool = False) -> None:
        """Remember `verdict` and append it to each of `paths` that lacks it (to all if `new`:
        a fresh verdict replaces a stale timeout; the last line of a key wins)."""
        self.verdicts[verdict.key] = verdict
        for path in paths:
            known = self._known.setdefault(path, set())
            if verdict.key in known and not new:
                continue
            self._append(path, verdict)
            known.add(verdict.key)

    def _append(self, path: Path, verdict: Verdict) -> None:
        """Append to `path`; a cache that cannot be written (no permission, disk full) is
        warned about once and left alone: the verdicts still count, they are only not kept."""
        try:
            if path not in self._writers:  # appends lock the file: evals may share one cache
                self._writers[path] = JsonlAppender(path)
            writer = self._writers[path]
            if writer is not None:
                writer.write(verdict)
        except (OSError, OutputError) as exc:
            why = exc.strerror if isinstance(exc, OSError) else str(exc).rpartition(": ")[2]
            log.warning("verdict cache %s cannot be written (%s): verdicts not kept", path, why)
            writer = self._writers.get(path)
            if writer is not None:
                writer.close()
            self._writers[path] = None

    def close(self) -> None:
        """Close the files appended to."""
        for writer in self._writers.values():
            if writer is not None:
                writer.close()
        self._writers.clear()


def _clear(path: Path, dropped: Counter[str], stale: Stale) -> None:
    """Say which verdicts of another verifier version were not reused, and rewrite the cache
    without them (and without lines a later one of the same key replaced)."""
    what = ", ".join(f"{n} of {made_by}" for made_by, n in dropped.most_common())
    try:
        _rewrite_without(path, stale)
        done = "removed from it"
    except (OSError, OutputError) as exc:
        done = f"they stay in it (cannot rewrite it: {getattr(exc, 'strerror', None) or exc})"
    log.warning(
        "verdict cache %s: %d verdicts of another verifier version (%s) were not reused (their "
        "pairs are verified again); %s",
        path,
        sum(dropped.values()),
        what,
        done,
    )


def _rewrite_without(path: Path, stale: Stale) -> None:
    """Rewrite `path` whole or not at all (a file put in its place) under the lock appenders
    take: lines another eval appended since it was read are kept, and its later appends wait,
    then go to the new file (`JsonlAppender` opens the name again)."""
    with locked(path) as fd, open(fd, "rb", closefd=False) as handle:
        kept: dict[str, bytes] = {}
        for line in handle.read().splitlines():
            try:
                verdict = Verdict.model_validate(loads_text(line))
            except (ValueError, ValidationError):  # a blank or torn line
                continue
            if stale(verdict) is None:
                kept.pop(verdict.key, None)  # the last line of a key wins
                kept[verdict.key] = line
        with atomic_file(path) as out:
            out.write(b"".join(line + b"\n" for line in kept.values()))
