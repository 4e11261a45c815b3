"""The verdict cache: append-only JSONL of `Verdict`s keyed by (verifier id, kind, gold, answer).

Each distinct pair is verified once; new verdicts are appended as they arrive, so an
interrupted eval keeps its progress. A `timeout` is retried under a longer deadline.
"""

from __future__ import annotations

import logging
from pathlib import Path

from llmeval.errors import OutputError
from llmeval.files import link_out_of_folder
from llmeval.jsonl import JsonlAppender, read_models
from llmeval.records import Verdict

SUFFIX = ".verdicts.jsonl"
log = logging.getLogger("llmeval")


def cache_path_for(path: Path) -> Path:
    """The default cache of a generation file: `<file>.verdicts.jsonl` beside it."""
    return path.with_name(path.name + SUFFIX)


class VerdictCache:
    """Verdicts loaded from one or more cache files; new ones go to the files that need them."""

    def __init__(self, paths: list[Path], timeout_s: float) -> None:
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
            for _, verdict in read_models(path, Verdict):
                self.verdicts[verdict.key] = verdict
                self._known[path].add(verdict.key)

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
