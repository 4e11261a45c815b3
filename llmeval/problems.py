"""Input problems for `infer`: the data/ format, the upstream prompt format, or any keys.

Every bad line is an `InputError` naming the file and line; ids must be unique.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from llmeval.errors import InputError
from llmeval.jsonl import read_dicts
from llmeval.records import Problem
from llmeval.tasks import render_prompt

_FIELDS = frozenset({"id", "problem", "prompt", "answer"})
_META_MAX_CHARS = 200


class InputKeys(BaseModel):
    """Which keys hold the question, the gold answer and the id (None: detect)."""

    model_config = ConfigDict(frozen=True)

    question: str | None = None
    answer: str = "answer"
    id: str | None = None


def derived_id(text: str) -> str:
    """A stable id from the question text, for inputs without one."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _field(row: dict[str, Any], key: str, hint: str, path: Path, line: int) -> str:
    """The text (or number, as text) under `key`; `hint` names the flag that picks the key."""
    if key not in row:
        raise InputError(path, f"missing key {key!r}{hint}", line=line)
    value = row[key]
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        got = json.dumps(value)[:60]
        raise InputError(path, f"key {key!r} must be text or a number, got {got}", line=line)
    if not str(value).strip():
        raise InputError(path, f"key {key!r} is empty", line=line)
    return str(value)


def parse_row(row: dict[str, Any], keys: InputKeys, path: Path, line: int) -> Problem:
    """One input object as a `Problem` (`prompt` set when it is sent verbatim)."""
    qkey = keys.question or next((k for k in ("problem", "prompt") if k in row), None)
    hint = "; choose one with --question-key"
    if qkey is None:
        raise InputError(path, f"missing key 'problem' (or 'prompt'){hint}", line=line)
    text = _field(row, qkey, hint, path, line)
    answer = _field(row, keys.answer, "; choose one with --answer-key", path, line)
    id_key = keys.id or next((k for k in ("id", "doc_id") if k in row), None)
    pid = _field(row, id_key, " (--id-key)", path, line) if id_key else derived_id(text)
    used = {qkey, keys.answer, keys.id, *_FIELDS}
    # short extras only: longer ones (reference solutions) stay out of every output line
    meta = {
        k: v
        for k, v in row.items()
        if k not in used
        and (isinstance(v, int | float) or (isinstance(v, str) and len(v) <= _META_MAX_CHARS))
    }
    sent_as = "prompt" if qkey == "prompt" else "problem"  # a prompt is sent verbatim
    earlier = row.get("earlier_statements")  # (the errata's; a list: no extra of the rows)
    if not (isinstance(earlier, list) and all(isinstance(t, str) for t in earlier)):
        earlier = []
    return Problem(id=pid, answer=answer, earlier_statements=earlier, **{sent_as: text}, **meta)


def load_problems(path: str | Path, keys: InputKeys | None = None) -> list[Problem]:
    """Every problem of a JSONL input, in file order; duplicate ids name both lines."""
    path, keys = Path(path), keys or InputKeys()
    problems: list[Problem] = []
    first_line: dict[str, int] = {}
    for line, row in read_dicts(path, skip_torn=False):  # nobody appends to an input
        problem = parse_row(row, keys, path, line)
        if problem.id in first_line:
            also = f"also on line {first_line[problem.id]}"
            raise InputError(path, f"duplicate id {problem.id!r} ({also})", line=line)
        first_line[problem.id] = line
        problems.append(problem)
    if not problems:
        raise InputError(path, "no problems in the file")
    return problems


def user_message(problem: Problem, template: str) -> str:
    """What is sent as the user message: a ready prompt verbatim, else the template filled."""
    if problem.prompt is not None:
        return problem.prompt
    return render_prompt(template, problem.problem or "")
