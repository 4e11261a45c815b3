"""The task table: names from flags and file names, prompts from templates."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from llmeval.tasks import (
    DATA_DIR,
    MATH_TEMPLATE,
    TASKS,
    get_task,
    iso_date,
    render_prompt,
    task_from_filename,
)


@pytest.mark.parametrize(
    ("name", "task"),
    [
        ("aime24_bz64.jsonl", "aime24"),
        ("out/model/math500.jsonl", "math500"),
        ("gpqa_diamond_n8.jsonl", "gpqa_diamond"),
        ("run3-aime25.jsonl", "aime25"),
        ("minerva_math.jsonl", "minerva_math"),
    ],
)
def test_task_from_filename(name: str, task: str) -> None:
    found = task_from_filename(name)
    assert found is not None and found.name == task


def test_unknown_file_name_has_no_task() -> None:
    assert task_from_filename("generations.jsonl") is None
    assert task_from_filename("aime240.jsonl") is None


def test_upstream_task_names() -> None:
    assert get_task("math_opensource/aime24") is TASKS["aime24"]
    assert get_task("nope") is None


def _rows(text: str, head: str) -> list[list[str]]:
    """The rows of the markdown table whose header line starts with `head`, as cells."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(head))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split(" | ")])
    return rows


def test_the_data_readme_lists_every_file_with_its_sha256() -> None:
    """Every data file's SHA-256 is in data/README.md and in the registry (issue 29.13, 41.1):
    a fix changes all three."""
    readme = (DATA_DIR / "README.md").read_text()
    listed = {row[0]: row[1] for row in _rows(readme, "| file | SHA-256 |")}
    assert sorted(listed) == sorted(path.name for path in DATA_DIR.glob("*.jsonl"))
    for name, digest in listed.items():
        assert hashlib.sha256((DATA_DIR / name).read_bytes()).hexdigest() == digest, name
        assert TASKS[name.removesuffix(".jsonl")].sha256 == digest, name


def test_the_data_readme_table_is_the_registry() -> None:
    """data/README.md's table says what the registry says of every task: its rows, date (and
    what the date means), source and licence (issue 41.1)."""
    readme = (DATA_DIR / "README.md").read_text()
    rows = _rows(readme, "| file | rows | date |")
    assert sorted(row[0] for row in rows) == sorted(f"{name}.jsonl" for name in TASKS)
    for file, count, date, source, licence, _ in rows:
        task = TASKS[file.removesuffix(".jsonl")]
        assert task.source is not None and task.data_file is not None
        assert int(count) == len(task.data_file.read_text().splitlines()), file
        assert date == f"{task.date} ({task.date_kind})", file
        src = task.source
        assert (source, licence) == (f"{src.repository}, {src.path}, {src.commit}", src.licence)


DOCS_PAGE = Path(__file__).resolve().parents[1] / "docs" / "tasks.md"


def test_the_docs_task_table_is_the_registry() -> None:
    """The docs' task table lists every task with what the registry says: its contest, problems,
    date, source and checksum (issue 41.1: the table shows the dates)."""
    rows = _rows(DOCS_PAGE.read_text(), "| task | contest | problems |")
    assert [row[0] for row in rows] == [f"`{name}`" for name in TASKS]
    assert "`math` (any problems with a boxed answer" in DOCS_PAGE.read_text()
    for name, contest, count, answers, date, source, digest in rows:
        task = TASKS[name.strip("`")]
        assert task.data_file is not None and task.sha256 is not None
        assert (contest, date, source) == (task.title, f"{task.date} ({task.date_kind})",
                                           str(task.source))  # fmt: skip
        assert int(count) == len(task.data_file.read_text().splitlines())
        assert digest == f"`{task.sha256[:12]}`"
        assert answers.startswith("letters") == (task.kind == "choice")


def test_every_task_has_its_data_file_and_a_date() -> None:
    for task in TASKS.values():
        assert task.data_file is not None and task.data_file.is_file(), task.data_file
        assert task.date is not None and iso_date(task.date) == task.date, task.name
        assert task.title and task.source is not None, task.name


def test_render_prompt_keeps_braces() -> None:
    text = render_prompt(MATH_TEMPLATE, "What is $1+1$?")
    assert (
        text
        == "What is $1+1$?\nPlease reason step by step, and put your final answer within \\boxed{}."
    )
