"""The problems a run was asked: the run spec's input file, else the task's data file. A file's
problems are matched to them by id, else by their text inside the row's prompt; the match tells
which problems have no sample at all, completes metadata (MATH-500 subject and level) and
gives the current gold where a problem's rows hold another one."""

from __future__ import annotations

import hashlib
import logging
from functools import lru_cache
from pathlib import Path

from llmeval.errors import LlmevalError
from llmeval.evaluate.discover import META_FIELDS
from llmeval.evaluate.runs import InputRun, reread_run
from llmeval.evaluate.samples import Sample
from llmeval.files import read_file
from llmeval.problems import InputKeys, load_problems
from llmeval.records import Problem, RunSpec

log = logging.getLogger("llmeval")


@lru_cache(maxsize=8)
def _load(path: Path, keys: InputKeys, mtime: float) -> tuple[Problem, ...]:
    return tuple(load_problems(path, keys))


def reference_problems(source: InputRun) -> tuple[Path, tuple[Problem, ...]] | None:
    """The run spec's input (read with the spec's input keys) when it is still there (that of
    any file of the run: shards ran on other machines), else the task's data file; None when
    neither can be read."""
    inputs = {p.spec.input_file: p.spec for p in source.parts if p.spec and p.spec.input_file}
    own = set(InputKeys.model_fields)  # (another version may have other keys)
    candidates = []
    for name, spec in inputs.items():
        named = {k: v for k, v in spec.input_keys.items() if v is not None and k in own}
        candidates.append((Path(name), InputKeys(**named)))
    if source.task.data_file is not None:  # (the generic task: the file's own problems)
        candidates.append((source.task.data_file, InputKeys()))
    for path, keys in candidates:
        try:
            mtime = path.stat().st_mtime
            if path != source.task.data_file and not _same_file(path, mtime, source.spec):
                raise LlmevalError("not the file the run was given (its SHA-256 differs)")
            return path, _load(path.resolve(), keys, mtime)
        except (OSError, LlmevalError) as exc:
            if path != source.task.data_file:
                why = exc.strerror if isinstance(exc, OSError) else exc
                log.warning("%s: its run spec's input %s: %s", source.name, path, why)
    return None


def _same_file(path: Path, mtime: float, spec: RunSpec | None) -> bool:
    """Whether `path` is the input the spec recorded (by SHA-256, when it recorded one)."""
    return (
        spec is None or not spec.input_sha256 or _sha256(path.resolve(), mtime) == spec.input_sha256
    )


@lru_cache(maxsize=8)
def _sha256(path: Path, mtime: float) -> str:
    return hashlib.sha256(read_file(path)).hexdigest()


def squash(text: str) -> str:
    """Text with every run of whitespace one space, none at either end: how problems are
    compared across harnesses (one strips a leading newline, another joins lines)."""
    return " ".join(text.split())


def match_problems(problems: tuple[Problem, ...], texts: dict[str, str]) -> dict[str, str]:
    """{file problem id: reference id} by equal ids, else by the reference problem's text
    inside the file's problem text, whitespace squashed on both sides (another harness's prompt
    around the same problem; the longest such text, so that a short problem inside another's
    prompt does not win)."""
    ids = {p.id for p in problems}
    matched = {pid: pid for pid in texts if pid in ids}
    by_text = sorted(
        ((squash(p.problem or p.prompt or ""), p.id) for p in problems), key=lambda r: -len(r[0])
    )
    for pid, text in texts.items():
        if pid not in matched and text:
            text = squash(text)
            found = next((rid for ref, rid in by_text if ref and ref in text), None)
            if found is not None:
                matched[pid] = found
    return matched


def apply_reference(source: InputRun) -> None:
    """Match the file to its reference problems: the ones without a sample, metadata where
    the rows lack it, and the current gold where rows hold another (a warning names them);
    a problem no reference holds whose rows disagree is graded against its latest row's."""
    by_problem: dict[str, list[Sample]] = {}
    for sample in source.samples:
        by_problem.setdefault(sample.problem_id, []).append(sample)
    current: dict[str, str] = {}
    asked_alike: set[str] = set()  # the row's prompt holds the current problem's text
    found = reference_problems(source)
    if found is not None:
        path, problems = found
        source.reference = str(path), _sha256(path.resolve(), path.stat().st_mtime)
        texts = {pid: source.prompts.get(pid, "") for pid in by_problem}
        source.reference_ids = match_problems(problems, texts)
        if not source.reference_ids:
            log.warning(
                "%s: none of its %d problems is in %s (by id or text): whether problems are "
                "missing cannot be told",
                source.name,
                len(texts),
                path,
            )
        _leave_out_foreign(source, by_problem, path)
        covered = set(source.reference_ids.values())
        source.problems_missing = [p.id for p in problems if covered and p.id not in covered]
        if source.problems_missing:
            missing = source.problems_missing
            log.warning(
                "%s: %d of the %d problems of %s have no sample (the run is incomplete): %s",
                source.name,
                len(missing),
                len(problems),
                path,
                ", ".join(missing[:10]),
            )
        by_id = {p.id: p for p in problems}
        for pid, rid in source.reference_ids.items():
            current[pid] = by_id[rid].answer.strip()
            text = by_id[rid].problem or by_id[rid].prompt
            if text and squash(text) in squash(source.prompts.get(pid, "")):
                asked_alike.add(pid)
            extras = by_id[rid].extras
            for sample in by_problem[pid]:
                for name in META_FIELDS:
                    if name in extras:
                        sample.meta.setdefault(name, extras[name])
    _settle_golds(source, by_problem, current, asked_alike, found[0] if found else None)


def _leave_out_foreign(source: InputRun, by_problem: dict[str, list[Sample]], path: Path) -> None:
    """Problems the reference does not hold (rows of another task appended?) are left out of
    the run's figures, and named; when none is found there, every problem counts."""
    if not source.reference_ids:
        return
    source.foreign = sorted(pid for pid in by_problem if pid not in source.reference_ids)
    if source.foreign:
        log.warning(
            "%s: %d problems are not in %s (by id or text) and are left out of its figures: %s",
            source.path,
            len(source.foreign),
            path,
            ", ".join(source.foreign[:10]),
        )
        for pid in source.foreign:
            del by_problem[pid]
        source.drop_problems(set(source.foreign))


def _settle_golds(
    source: InputRun,
    by_problem: dict[str, list[Sample]],
    current: dict[str, str],
    asked_alike: set[str],
    path: Path | None,
) -> None:
    """One gold per problem (`_golds`), the answers read again for each settled one, and a
    warning naming the problems whose rows hold another gold than the input's."""
    settled, changed, kept = _golds(source, by_problem, current, asked_alike)
    if settled:
        reread_run(source, settled)
    said = (
        (
            changed,
            "have rows whose gold is not the current one of %s (changed since they were "
            "written?); graded against the current gold",
        ),
        (
            kept,
            "have a gold other than %s's and prompts without its text (asked otherwise?); "
            "graded against their own gold",
        ),
    )
    for problems, what in said:
        if problems:
            log.warning(
                "%s: %d problems " + what + ": %s",
                source.name,
                len(problems),
                path,
                "; ".join(problems[:5]),
            )


def _golds(
    source: InputRun,
    by_problem: dict[str, list[Sample]],
    current: dict[str, str],
    asked_alike: set[str],
) -> tuple[dict[str, str], list[str], list[str]]:
    """The problems given another gold than their rows': the current input's (`current`) where
    their rows hold another and were asked alike or disagree among themselves, else the rows'
    own (kept, said); a problem no input holds whose rows disagree: the latest row's. With the
    changed and the kept, each as it is said."""
    changed, kept, settled = [], [], {}
    for pid, samples in by_problem.items():
        golds = list(dict.fromkeys(s.gold for s in samples if s.gold))
        gold = current.get(pid, "")
        differs = bool(gold) and any("".join(g.split()) != "".join(gold.split()) for g in golds)
        if differs and (len(golds) > 1 or pid in asked_alike):
            changed.append(f"{pid} ({', '.join(map(repr, golds[:3]))} -> {gold!r})")
        elif differs:  # asked otherwise (another option order?): its own gold, said
            kept.append(f"{pid} ({golds[0]!r}, not {gold!r})")
            continue
        elif len(golds) > 1:
            gold = next(s.gold for s in reversed(samples) if s.gold)
            log.warning(
                "%s: problem %s has rows with %d different golds (%s); all graded against the "
                "latest row's gold %r",
                source.name,
                pid,
                len(golds),
                ", ".join(map(repr, golds[:4])),
                gold,
            )
        else:
            continue
        settled[pid] = gold
    return settled, changed, kept
