"""Eval's verdict cache: append-only JSONL of `Verdict`s, the rules' (keyed by verifier id,
kind, gold and answer) and the LLM judge's (by prompt version, model and question).

Each distinct pair is verified once; new verdicts are appended as they arrive, so an
interrupted eval keeps its progress. A `timeout` is retried under a longer deadline. Every line
is hostile input (checked strictly); those llmeval did not write on this machine (no seal of
its key: `signing.py`) are used but counted. Verdicts of other verifier versions are kept for
them and not used; only lines a later line of the same key replaced are ever removed.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from pydantic import ConfigDict, Field, ValidationError

from llmeval.errors import InputError, LlmevalError, OutputError
from llmeval.evaluate.signing import seal, sealed_here
from llmeval.files import atomic_file, link_out_of_folder
from llmeval.jsonl import JsonlAppender, loads_text, locked, read_models
from llmeval.records import Verdict

# What made a verdict when it is provably not the current verifier (a policy id), else None.
Stale = Callable[[Verdict], str | None]

log = logging.getLogger("llmeval")


class CachedVerdict(Verdict):
    """A verdict as a cache line holds it, checked as hostile input (a cache may come with
    someone else's results): strict types, a finite positive deadline, and `mac`, its seal
    under this user's key when llmeval wrote it on this machine (`signing.seal`)."""

    model_config = ConfigDict(strict=True)

    timeout_s: float | None = Field(None, gt=0, allow_inf_nan=False)
    mac: str | None = None


class VerdictCache:
    """Verdicts loaded from one or more cache files; new ones go to the files that need them."""

    def __init__(self, paths: list[Path], timeout_s: float, stale: Stale | None = None) -> None:
        self.timeout_s = timeout_s
        self._known: dict[Path, set[str]] = {}
        self.verdicts: dict[str, Verdict] = {}
        self._source: dict[str, Path] = {}  # the file each verdict was read from
        self._here: dict[str, bool] = {}  # written here? (a seal is checked once it is used)
        self._foreign_used: dict[Path, set[str]] = {}
        self._writers: dict[Path, JsonlAppender | None] = {}
        for path in paths:
            self._known[path] = set()
            target = link_out_of_folder(path)
            if target is not None:  # never followed: nothing read, nothing created there
                log.warning("verdict cache %s is a link out of its folder (to %s): not used",
                            path, target)  # fmt: skip
                self._writers[path] = None
            elif path.exists():
                self._load(path, stale)

    def _load(self, path: Path, stale: Stale | None) -> None:
        """Read every line of `path`: this version's verdicts are used, other versions' kept
        in the file for them (said), lines a later line of their key replaced dropped."""
        others: dict[str, str] = {}
        lines = 0
        try:
            for _, line in read_models(path, CachedVerdict):
                lines += 1
                made_by = stale(line) if stale else None
                if made_by is not None:
                    others[line.key] = made_by
                    continue
                self.verdicts[line.key], self._source[line.key] = line, path
                self._known[path].add(line.key)
                self._here.pop(line.key, None)
        except InputError as exc:  # (a forged or broken line: the user decides)
            raise LlmevalError(f"{exc} (a verdict cache: --no-cache scores without it)") from None
        if others:
            what = ", ".join(f"{n} of {v}" for v, n in Counter(others.values()).most_common())
            log.info("verdict cache %s also holds %d verdicts of other verifier versions (%s): "
                     "kept in it for them, not used here", path, len(others), what)  # fmt: skip
        if lines > len(self._known[path]) + len(others):
            _drop_replaced(path)

    def get(self, key: str) -> Verdict | None:
        """The cached verdict of `key`; a timeout under a shorter deadline than now is a miss."""
        verdict = self.verdicts.get(key)
        if verdict is None:
            return None
        if verdict.status == "timeout" and (verdict.timeout_s or 0.0) < self.timeout_s:
            return None
        if not self._written_here(key):
            self._foreign_used.setdefault(self._source[key], set()).add(key)
        return verdict

    def _written_here(self, key: str) -> bool:
        """Whether the verdict of `key` was verified in this eval or read from a line that
        bears this machine's seal."""
        here = self._here.get(key)
        if here is None:
            verdict = self.verdicts[key]
            mac = verdict.mac if isinstance(verdict, CachedVerdict) else None
            here = self._here[key] = sealed_here(verdict, mac)
        return here

    def foreign(self) -> dict[str, int]:
        """{cache file: verdicts used from it that llmeval did not write on this machine}."""
        return {str(path): len(keys) for path, keys in self._foreign_used.items()}

    def add(self, verdict: Verdict, paths: list[Path], *, new: bool = False) -> None:
        """Remember `verdict` and append it to each of `paths` that lacks it (to all if `new`:
        a fresh verdict replaces a stale timeout; the last line of a key wins). A verdict read
        from a line without this machine's seal is copied without one."""
        self.verdicts[verdict.key] = verdict
        if new:  # verified now: neither foreign nor one used from the cache
            self._here[verdict.key] = True
            for used in self._foreign_used.values():
                used.discard(verdict.key)
        line = None
        for path in paths:
            known = self._known.setdefault(path, set())
            if verdict.key in known and not new:
                continue
            line = line or self._line(verdict)
            self._append(path, line)
            known.add(verdict.key)

    def _line(self, verdict: Verdict) -> CachedVerdict:
        """`verdict` as a cache line: sealed, unless it was read from a line without a seal."""
        fields = {name: getattr(verdict, name) for name in Verdict.model_fields}
        mac = seal(verdict) if self._written_here(verdict.key) else None
        return CachedVerdict.model_construct(**fields, mac=mac)

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


def _drop_replaced(path: Path) -> None:
    """Rewrite `path` without the lines a later line of the same key replaced (kept byte for
    byte otherwise: seals stay valid), whole or not at all, under the lock appenders take:
    lines another eval appended since it was read are kept, and its later appends wait, then go
    to the new file (`JsonlAppender` opens the name again). A cache that cannot be rewritten
    is left as it is (the last line of a key wins when it is read)."""
    try:
        with locked(path) as fd, open(fd, "rb", closefd=False) as handle:
            kept: dict[str, bytes] = {}
            for line in handle.read().splitlines():
                try:
                    key = Verdict.model_validate(loads_text(line)).key
                except (ValueError, ValidationError):  # a blank or torn line
                    continue
                kept.pop(key, None)  # the last line of a key wins
                kept[key] = line
            with atomic_file(path) as out:
                out.write(b"".join(line + b"\n" for line in kept.values()))
    except (OSError, OutputError):
        return
