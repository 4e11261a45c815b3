"""The problems a run was asked: the run spec's input file, else the task's data file. A run's
problems are matched to them (`runs.problems`: by id, by text, by an earlier statement) into a
`Reference` record; applied, it tells which problems have no sample at all, leaves out those
the task does not hold, completes metadata (MATH-500 subject and level) and gives the current
gold where a problem's rows hold another one."""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from llmeval.errors import LlmevalError
from llmeval.evaluate.discover import META_FIELDS
from llmeval.evaluate.reading import InputRun, Reference, reread_run
from llmeval.evaluate.samples import Sample
from llmeval.files import file_sha256
from llmeval.problems import InputKeys, load_problems
from llmeval.records import Problem, RunSpec
from llmeval.runs.problems import match_problems, statements, text_key

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
                log.warning("%s: its run spec's input %s: %s", source.where, path, why)
    return None


def _same_file(path: Path, mtime: float, spec: RunSpec | None) -> bool:
    """Whether `path` is the input the spec recorded (by SHA-256, when it recorded one)."""
    return (
        spec is None or not spec.input_sha256 or _sha256(path.resolve(), mtime) == spec.input_sha256
    )


@lru_cache(maxsize=8)
def _sha256(path: Path, mtime: float) -> str:
    return file_sha256(path)  # (cached by path and mtime: a run of shards asks per file)


def match_reference(source: InputRun, found: tuple[Path, tuple[Problem, ...]] | None) -> Reference:
    """How the run's problems match the problems it was asked (`found`: their file and
    problems, `reference_problems`; None: no reference)."""
    if found is None:
        return Reference()
    path, problems = found
    pids = dict.fromkeys(s.problem_id for s in source.samples)
    match = match_problems(problems, {pid: source.prompts.get(pid, "") for pid in pids})
    covered = set(match.ids.values())
    missing = [p.id for p in problems if covered and p.id not in covered]
    return Reference(str(path), _sha256(path.resolve(), path.stat().st_mtime), match, missing)


def apply_reference(source: InputRun) -> None:
    """Match the run to its reference problems (`source.reference`) and apply it: problems the
    task does not hold left out (when some match), the ones without a sample said, metadata
    where the rows lack it, and the current gold where rows hold another."""
    found = reference_problems(source)
    source.reference = ref = match_reference(source, found)
    by_id = {p.id: p for p in found[1]} if found else {}
    _say_foreign(source, ref)
    if ref.match.ids and ref.match.foreign:
        source.drop_problems(set(ref.match.foreign))
    if ref.missing:
        log.warning(
            "%s: %d of the %d problems of %s have no sample (the run is incomplete): %s",
            source.where,
            len(ref.missing),
            len(by_id),
            ref.file,
            ", ".join(ref.missing[:10]),
        )
    by_problem: dict[str, list[Sample]] = {}
    for sample in source.samples:
        by_problem.setdefault(sample.problem_id, []).append(sample)
    current: dict[str, str] = {}

    def asked_alike(pid: str) -> bool:
        """Whether the row's prompt holds the problem's text (asked only where golds differ)."""
        prompt = text_key(source.prompts.get(pid, ""))
        text, before = statements(by_id[ref.match.ids[pid]])
        return any(key and key in prompt for key in map(text_key, [text, *before]))

    for pid, rid in ref.match.ids.items():
        problem = by_id[rid]
        current[pid] = problem.answer.strip()
        for sample in by_problem.get(pid, []):
            for name in META_FIELDS:
                if name in problem.extras:
                    sample.meta.setdefault(name, problem.extras[name])
    _settle_golds(source, by_problem, current, asked_alike, ref.file)


def _say_foreign(source: InputRun, ref: Reference) -> None:
    """Warn about the run's problems the reference does not hold: left out when some match
    (with how many did, and the generic task when most do not), else all counted."""
    foreign, total = ref.match.foreign, len(ref.match.foreign) + len(ref.match.ids)
    if not foreign:
        return
    hint = (
        "; its rows carry their own golds: --task math scores every problem against them"
        if 2 * len(foreign) > total
        else ""
    )
    if not ref.match.ids:
        log.warning("%s: none of its %d problems is in %s (by id, text or earlier statement): "
                    "whether problems are missing cannot be told%s", source.where, total,
                    ref.file, hint)  # fmt: skip
        return
    log.warning(
        "%s: %d of its %d problems are not in %s (by id, text or earlier statement; %d "
        "matched) and are left out of its figures: %s%s",
        source.where,
        len(foreign),
        total,
        ref.file,
        len(ref.match.ids),
        ", ".join(foreign[:10]),
        hint,
    )


def _settle_golds(
    source: InputRun,
    by_problem: dict[str, list[Sample]],
    current: dict[str, str],
    asked_alike: Callable[[str], bool],
    path: str | None,
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
                source.where,
                len(problems),
                path,
                "; ".join(problems[:5]),
            )


def _golds(
    source: InputRun,
    by_problem: dict[str, list[Sample]],
    current: dict[str, str],
    asked_alike: Callable[[str], bool],
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
        if differs and (len(golds) > 1 or asked_alike(pid)):
            changed.append(f"{pid} ({', '.join(map(repr, golds[:3]))} -> {gold!r})")
        elif differs:  # asked otherwise (another option order?): its own gold, said
            kept.append(f"{pid} ({golds[0]!r}, not {gold!r})")
            continue
        elif len(golds) > 1:
            gold = next(s.gold for s in reversed(samples) if s.gold)
            log.warning(
                "%s: problem %s has rows with %d different golds (%s); all graded against the "
                "latest row's gold %r",
                source.where,
                pid,
                len(golds),
                ", ".join(map(repr, golds[:4])),
                gold,
            )
        else:
            continue
        settled[pid] = gold
    return settled, changed, kept
