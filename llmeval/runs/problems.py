"""Which texts are one problem. A file's problem is a task's problem with the same id; else the
one whose text its row holds, with all whitespace, `$` delimiters, `\\left`/`\\right` and
spacing commands ignored (harnesses space math differently: `is  $30$ .` is `is $30$.`); else
the one whose earlier statement it holds: a problem whose statement the errata corrected keeps
the statement it replaced (`earlier_statements` in its data row), so outputs drawn on the
copies that circulate still count, and the result names them."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from llmeval.records import Problem

# `\\` (a line break) first, kept whole, so that its second backslash starts no command
_TYPESETTING = re.compile(r"(\\\\)|\$|\\(?:left|right|q?quad)(?![A-Za-z])|\\[,;:! ]|~|\s+")


def text_key(text: str) -> str:
    """A problem's text as problems are compared: whitespace, `$`, `\\left`/`\\right` and
    spacing commands dropped."""
    return _TYPESETTING.sub(lambda m: m[1] or "", text)


def statements(problem: Problem) -> tuple[str, list[str]]:
    """A problem's text (its problem, else its prompt) and its earlier statements."""
    return problem.problem or problem.prompt or "", problem.earlier_statements


@dataclass
class ProblemMatch:
    """How a file's problems match a task's: by file problem id, the task's id; the task's
    problems matched only by an earlier statement; the file's problems matched by none."""

    ids: dict[str, str] = field(default_factory=dict)
    earlier: list[str] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)


def match_problems(problems: Iterable[Problem], texts: Mapping[str, str]) -> ProblemMatch:
    """Match the file's problems (`texts`: problem id -> the text or prompt its rows hold) to
    `problems`: by equal ids, else by a problem's text inside the row's text (the longest
    such text, so that a short problem inside another's prompt does not win), else by an
    earlier statement inside it."""
    problems = list(problems)
    ids = {p.id for p in problems}
    match = ProblemMatch(ids={pid: pid for pid in texts if pid in ids})
    if len(match.ids) == len(texts):  # (every problem by its id: no text read)
        return match
    current: list[tuple[str, str]] = []
    earlier: list[tuple[str, str]] = []
    for problem in problems:
        text, before = statements(problem)
        current.append((text_key(text), problem.id))
        earlier += [(text_key(old), problem.id) for old in before]
    exact = {key: rid for key, rid in current if key}
    for candidates in (current, earlier):
        candidates.sort(key=lambda kr: -len(kr[0]))
    for pid, text in texts.items():
        if pid in match.ids:
            continue
        key = text_key(text)
        found = exact.get(key) or _inside(key, current)
        if found is None and (found := _inside(key, earlier)) is not None:
            match.earlier.append(found)
        if found is None:
            match.foreign.append(pid)
        else:
            match.ids[pid] = found
    match.earlier = sorted(set(match.earlier))
    match.foreign.sort()
    return match


def _inside(key: str, candidates: list[tuple[str, str]]) -> str | None:
    """The first (longest) candidate text inside `key`, its problem's id."""
    if not key:
        return None
    return next((rid for text, rid in candidates if text and text in key), None)
