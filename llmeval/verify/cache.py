"""The verdict cache: append-only JSONL of `Verdict`s keyed by (verifier id, kind, gold, answer).

Each distinct pair is verified once; new verdicts are appended as they arrive, so an
interrupted eval keeps its progress. A `timeout` is retried under a longer deadline.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from llmeval.appender import JsonlAppender
from llmeval.files import read_models
from llmeval.records import Verdict

SUFFIX = ".verdicts.jsonl"


def cache_path_for(path: Path) -> Path:
    """The default cache of a generation file: `<file>.verdicts.jsonl` beside it."""
    return path.with_name(path.name + SUFFIX)


class VerdictCache:
    """Verdicts loaded from one or more cache files; new ones go to the files that need them."""

    def __init__(self, paths: list[Path], timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self._known: dict[Path, set[str]] = {}
        self.verdicts: dict[str, Verdict] = {}
        for path in paths:
            self._known[path] = set()
            if not path.exists():
                continue
            for _, verdict in read_models(path, Verdict):
                self.verdicts[verdict.key] = verdict
                self._known[path].add(verdict.key)
        self._writers: dict[Path, JsonlAppender] = {}

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
            self._writer(path).write(verdict)
            known.add(verdict.key)

    def _writer(self, path: Path) -> JsonlAppender:
        writer = self._writers.get(path)
        if writer is None:  # appends lock the file: two evals may share one cache
            writer = self._writers[path] = JsonlAppender(path)
        return writer

    def mark_current(self) -> None:
        """Touch every existing cache file: newer than its input means "nothing to verify",
        which lets the next eval skip booting the verifier early."""
        for path in self._known:
            with contextlib.suppress(OSError):
                os.utime(path)

    def close(self) -> None:
        """Close the files appended to."""
        for writer in self._writers.values():
            writer.close()
        self._writers.clear()
