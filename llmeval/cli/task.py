"""`llmeval task add NAME --from PATH --date YYYY-MM-DD`: a contest's files -> a user task that
`infer --task NAME`, `eval` and `report` then use like a shipped one."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from llmeval.errors import UsageError
from llmeval.tasks import TASKS_ENV, iso_date

log = logging.getLogger("llmeval")


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `task` parser and its `add` subcommand."""
    parser = sub.add_parser(
        "task",
        help="add a contest as a task of your own (llmeval tasks lists them all)",
        description="Turn a contest into a task: its golds checked by the verifier, its problems "
        f"kept with their SHA-256 in your task folder (${TASKS_ENV}, default "
        "$XDG_DATA_HOME/llmeval/tasks).",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = actions.add_parser(
        "add",
        help="add a contest's files as task NAME",
        description="PATH: a MathArena folder (problems/<i>.tex, answers.csv, optional "
        "config.yaml with its instruction and date), a CSV or JSONL with problem and answer "
        "columns, or a generation file in any layout eval reads.",
    )
    add.add_argument("name", metavar="NAME", help="the task's name (lowercase: hmmt26, ...)")
    add.add_argument("--from", dest="path", type=Path, required=True, metavar="PATH")
    add.add_argument("--date", metavar="YYYY-MM-DD",
                     help="the day the contest was held (default: config.yaml's date)")  # fmt: skip
    add.add_argument("--accept-unreadable", action="store_true",
                     help="keep golds the verifier cannot read (compared as text)")  # fmt: skip
    add.add_argument("--workers", type=int, default=1, help="verifier processes (default 1)")
    add.add_argument("--timeout", type=float, default=20.0,
                     help="seconds of CPU per gold (default %(default)g)")  # fmt: skip
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Add the task; say where it is kept and how to run it."""
    from llmeval.contests.add import add_task  # (the verifier loads only when a task is added)

    try:
        date = None if args.date is None else iso_date(args.date)
    except ValueError as exc:
        raise UsageError(f"--date: {exc}") from None
    if not args.path.exists():
        raise UsageError(f"--from {args.path}: no such file or folder")
    if args.workers < 1 or not 0 < args.timeout < 86_400:
        raise UsageError("--workers must be at least 1 and --timeout between 0 and a day")
    added = add_task(args.name, args.path, date, accept_unreadable=args.accept_unreadable,
                     workers=args.workers, timeout=args.timeout)  # fmt: skip
    task, count = added.task, len(added.contest.problems)
    for problem, why in added.unreadable:
        log.warning("%s: gold %r: %s", problem.id, problem.answer, why)
    if added.already:
        print(f"task {task.name}: already there with the same {count} problems "
              f"(SHA-256 {task.sha256}), in {task.data_file}")  # fmt: skip
        return 0
    print(f"task {task.name}: {count} problems from {args.path} ({added.contest.form}), held "
          f"{task.date}, SHA-256 {task.sha256}")  # fmt: skip
    print(f"kept in {task.data_file}")
    print(f"run it: llmeval infer --task {task.name} --output output/MODEL/{task.name}.jsonl ...")
    return 0
