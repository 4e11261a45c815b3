"""The task table: names from flags and file names, prompts from templates."""

from __future__ import annotations

import hashlib
import re

import pytest

from llmeval.tasks import (
    DATA_DIR,
    MATH_TEMPLATE,
    TASKS,
    get_task,
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


def test_the_data_readme_lists_every_file_with_its_sha256() -> None:
    """Every data file's SHA-256 is in data/README.md (issue 29.13): a fix changes both."""
    readme = (DATA_DIR / "README.md").read_text()
    listed = dict(re.findall(r"^\| (\w+\.jsonl) \| ([0-9a-f]{64}) \|", readme, re.M))
    assert sorted(listed) == sorted(path.name for path in DATA_DIR.glob("*.jsonl"))
    for name, digest in listed.items():
        assert hashlib.sha256((DATA_DIR / name).read_bytes()).hexdigest() == digest, name


def test_every_task_has_its_data_file() -> None:
    for task in TASKS.values():
        assert task.data_file.is_file(), task.data_file


def test_render_prompt_keeps_braces() -> None:
    text = render_prompt(MATH_TEMPLATE, "What is $1+1$?")
    assert (
        text
        == "What is $1+1$?\nPlease reason step by step, and put your final answer within \\boxed{}."
    )
