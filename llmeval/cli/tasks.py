"""`llmeval tasks`: every task, shipped and the user's own: name, problems, answer kind, date,
source and checksum, and where the user's tasks are kept."""

from __future__ import annotations

import argparse
import json
import os

from llmeval.errors import InputError
from llmeval.files import file_sha256
from llmeval.tasks import TASKS, TASKS_ENV, Task, user_tasks, user_tasks_dir

HEAD = ("task", "problems", "answer", "date", "SHA-256", "source")


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `tasks` parser."""
    parser = sub.add_parser(
        "tasks",
        help="list the tasks: problems, answer kind, date, source, checksum",
        description="Every task eval and infer know: the shipped ones and those added with "
        "`llmeval task add`.",
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per task")
    parser.set_defaults(func=run)


def _row(task: Task) -> dict[str, object]:
    """What is listed of a task; its file's checksum now, where it differs from the registry's."""
    assert task.data_file is not None
    try:
        lines = task.data_file.read_bytes().count(b"\n")
        now = file_sha256(task.data_file)
    except (OSError, InputError):
        lines, now = 0, "missing"
    when = "" if task.date_kind == "held" else f" ({task.date_kind})"
    return {
        "task": task.name,
        "problems": lines,
        "answer": task.kind,
        "date": f"{task.date}{when}",
        "SHA-256": task.sha256 if now == task.sha256 else f"{task.sha256} (file now: {now})",
        "source": str(task.source),
        "file": str(task.data_file),
        "title": task.title,
        "shipped": task.shipped,
    }


def run(args: argparse.Namespace) -> int:
    """Print the tasks, then where the user's own are kept."""
    rows = [_row(task) for task in (*TASKS.values(), *user_tasks())]
    if args.json:
        for row in rows:
            print(json.dumps(row, ensure_ascii=False))
        return 0
    shown = [[str(row[k]) if k != "SHA-256" else str(row[k])[:12] for k in HEAD] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in shown)) for i, h in enumerate(HEAD)]
    for cells in (list(HEAD), *shown):
        print("  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip())
    mine = sum(not row["shipped"] for row in rows)
    where = f"${TASKS_ENV}" if os.environ.get(TASKS_ENV) else f"the default; ${TASKS_ENV} moves it"
    print(f"\nyour tasks: {mine} in {user_tasks_dir()} ({where}); add one with llmeval task add "
          "NAME --from PATH --date YYYY-MM-DD")  # fmt: skip
    print(
        "dates: the day a contest was held (its first paper's), or the day a set gathered "
        "from older problems was published; SHA-256: its first 12 digits (--json: all)"
    )
    changed = [row["task"] for row in rows if "file now" in str(row["SHA-256"])]
    if changed:
        print(f"changed since listed: {', '.join(map(str, changed))} (--json shows both SHA-256)")
    return 0
