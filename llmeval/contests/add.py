"""Adding a contest as a user task: every gold checked by the verifier (against itself, in its
worker processes under eval's deadline), the problems and the registry entry written to the user
task folder with the problems' SHA-256; a name that exists is refused unless the checksums match."""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from llmeval import __version__
from llmeval.contests.read import Contest, read_contest
from llmeval.errors import InputError, UsageError
from llmeval.files import atomic_file, file_sha256, write_json_atomic
from llmeval.records import Problem
from llmeval.tasks import (
    MATH_TEMPLATE,
    NAME,
    PLACEHOLDER,
    Source,
    Task,
    meta_file,
    taken,
    user_task,
    user_tasks_dir,
)
from llmeval.verify.pool import VerifyPool
from llmeval.verify.queue import VerifyResult, VerifyTask
from llmeval.verify.verifier import GOLD_UNPARSED

log = logging.getLogger("llmeval")


@dataclass
class Added:
    """A task added (or found already there, the same), with the golds kept unreadable."""

    task: Task
    contest: Contest
    unreadable: list[tuple[Problem, str]]
    already: bool = False


def problems_bytes(problems: list[Problem]) -> bytes:
    """The task's data file: one problem a line in data/'s format (the same problems give the
    same bytes, hence the same checksum)."""
    rows = (p.model_dump(exclude_none=True) for p in problems)
    return b"".join(json.dumps(row, ensure_ascii=False).encode() + b"\n" for row in rows)


def check_golds(problems: list[Problem], workers: int, timeout: float) -> list[tuple[Problem, str]]:
    """The problems whose gold the verifier cannot read or does not find equal to itself (or
    not within `timeout` seconds), each with why: what eval would grade as text, or wrongly."""
    golds = list(dict.fromkeys(p.answer for p in problems))
    tasks = [VerifyTask(str(i), "math", gold, gold) for i, gold in enumerate(golds)]
    results: dict[str, VerifyResult] = {}
    VerifyPool(workers, timeout).run(tasks, lambda result: results.__setitem__(result.key, result))
    why: dict[str, str] = {}
    for task in tasks:
        result = results[task.key]
        if result.detail == GOLD_UNPARSED:
            why[task.gold] = "the verifier cannot read it (eval would compare it as text)"
        elif result.status != "correct":
            detail = f" ({result.detail})" if result.detail else ""
            why[task.gold] = f"{result.status} against itself{detail}"
    return [(p, why[p.answer]) for p in problems if p.answer in why]


def template_of(contest: Contest) -> str:
    """The prompt: the contest's own instruction before the problem, as MathArena sends it;
    else the math template."""
    if contest.instruction is None:
        return MATH_TEMPLATE
    return f"{contest.instruction}\n\n{PLACEHOLDER}"


def add_task(
    name: str,
    path: Path,
    date: str | None,
    *,
    accept_unreadable: bool = False,
    workers: int = 1,
    timeout: float = 20.0,
) -> Added:
    """Read the contest at `path`, check its golds and keep it as the user task `name`."""
    if not NAME.fullmatch(name):
        raise UsageError(f"task name {name!r}: lowercase letters, digits, '_' and '-' (at most "
                         "64, starting with a letter or digit)")  # fmt: skip
    if taken(name):
        raise UsageError(f"{name!r} is a shipped task's name (or one of its aliases); pick "
                         "another (hmmt26, mycontest-2026, ...)")  # fmt: skip
    contest = read_contest(path, name)
    if date and contest.date and date != contest.date:
        log.warning("%s says the contest was held on %s; --date %s is kept", path, contest.date,
                    date)  # fmt: skip
    date = date or contest.date
    if date is None:
        raise UsageError(f"{path} gives no date: say when the contest was held (--date "
                         "YYYY-MM-DD)")  # fmt: skip
    data = problems_bytes(contest.problems)
    sha256 = hashlib.sha256(data).hexdigest()
    folder = user_tasks_dir()
    existing = user_task(name, folder)
    if existing is not None:
        return _again(existing, contest, data, sha256)
    unreadable = check_golds(contest.problems, workers, timeout)
    if unreadable and not accept_unreadable:
        shown = "; ".join(f"{p.id}: {p.answer!r}: {why}" for p, why in unreadable[:20])
        raise InputError(path, f"{len(unreadable)} golds would not be graded as maths: {shown} "
                         "(fix them, or --accept-unreadable to keep them)")  # fmt: skip
    source = Source("", str(path.resolve()), form=contest.form)
    task = Task(name, "math", template_of(contest), date, "held", "", source, sha256, folder)
    with atomic_file(folder / f"{name}.jsonl") as handle:  # the problems first, the entry last
        handle.write(data)
    write_json_atomic(meta_file(name, folder), _entry(task, len(contest.problems)))
    return Added(task, contest, unreadable)


def _again(existing: Task, contest: Contest, data: bytes, sha256: str) -> Added:
    """A name taken by a user task: the same problems are a no-op (a data file changed since is
    written back), other problems are refused."""
    assert existing.data_file is not None
    if existing.sha256 != sha256:
        raise UsageError(
            f"task {existing.name!r} exists with other problems (SHA-256 {existing.sha256}; "
            f"these {sha256}): pick another name, or delete {meta_file(existing.name)} to "
            "replace it"
        )
    try:
        unchanged = file_sha256(existing.data_file) == sha256
    except InputError:
        unchanged = False
    if not unchanged:
        log.warning("%s was changed or removed since it was added: written again",
                    existing.data_file)  # fmt: skip
        with atomic_file(existing.data_file) as handle:
            handle.write(data)
    return Added(existing, contest, [], already=True)


def _entry(task: Task, problems: int) -> dict[str, object]:
    """The task's registry entry, as `tasks.user_task` reads it back."""
    assert task.source is not None
    return {
        "name": task.name,
        "kind": task.kind,
        "template": task.template,
        "date": task.date,
        "date_kind": task.date_kind,
        "source": {"repository": "", "path": task.source.path, "form": task.source.form},
        "sha256": task.sha256,
        "problems": problems,
        "added": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "llmeval_version": __version__,
    }
