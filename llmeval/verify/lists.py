"""Answers of several parts: a gold list of k parts (`2, 3`, `x=1, y=2`, `-2,-2`) against an
answer of k parts (a list, a tuple, named values, k final boxes joined), part by part.

math-verify reads a list as a set, so `-2,-2` became {-2} and accepted `-2`; here every part
counts. Text only (no sympy): eval also uses `gold_parts` to join an output's final boxes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from llmeval.records import VerdictStatus

MAX_PARTS = 12  # longer lists are left to math-verify's set reading
_OPEN, _CLOSE = "([{", ")]}"
_BRACKETS = (("\\left(", "\\right)"), ("\\left\\{", "\\right\\}"), ("(", ")"), ("\\{", "\\}"))
# `x = 1`, `a_1 = 2`, `f(x) = 3`: a part naming its value
_NAMED = re.compile(r"\s*+([A-Za-z](?:_\{?\w{1,8}\}?)?(?:\([A-Za-z]\))?)\s*+=(?!=)")


def split_parts(text: str) -> list[str]:
    """The parts of `text` at its top-level commas (`(1,2), 3` -> 2 parts; a comma before
    exactly three digits joins digit groups: `10,000` is one); over MAX_PARTS: cut short.
    Angle brackets are never split (`\\langle 1, 2 \\rangle`)."""
    if "\\langle" in text:
        return [text.strip()]
    parts, depth, start = [], 0, 0
    for pos, char in enumerate(text):
        if char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            depth = max(0, depth - 1)
        elif char == "," and depth == 0 and not _digit_group(text, pos):
            parts.append(text[start:pos].strip())
            start = pos + 1
            if len(parts) > MAX_PARTS:
                break
    parts.append(text[start:].strip())
    return parts


def _digit_group(text: str, comma: int) -> bool:
    before, group = text[comma - 1 : comma], text[comma + 1 : comma + 5]
    return before.isdigit() and len(group) >= 3 and group[:3].isdigit() and not group[3:].isdigit()


def gold_parts(gold_latex: str) -> int:
    """How many parts a normalised gold (`$...$`) lists: 1 for anything but a bare list."""
    count = len(split_parts(gold_latex.strip("$")))
    return count if count <= MAX_PARTS else 1


def _unbracket(text: str) -> str:
    """The inside of a tuple or set that is the whole text (`(-2, -2)` -> `-2, -2`)."""
    for left, right in _BRACKETS:
        if text.startswith(left) and text.endswith(right) and len(text) > len(left + right):
            inner = text[len(left) : -len(right)]
            if _balanced(inner):
                return inner
    return text


def _balanced(text: str) -> bool:
    depth = 0
    for char in text:
        depth += (char in _OPEN) - (char in _CLOSE)
        if depth < 0:
            return False
    return depth == 0


def _name(part: str) -> tuple[str | None, str]:
    match = _NAMED.match(part)
    return (match.group(1), part[match.end() :].strip()) if match else (None, part)


def perfect_matching(pairs: int, ok: Callable[[int, int], bool]) -> bool:
    """Whether every gold part i has its own answer part j with ok(i, j) (k x k, bipartite
    augmenting paths); `ok` is asked lazily, an answer in the gold's order costs k calls."""
    known: dict[tuple[int, int], bool] = {}
    match_of: list[int | None] = [None] * pairs  # answer part -> gold part

    def fits(i: int, j: int) -> bool:
        if (i, j) not in known:
            known[(i, j)] = ok(i, j)
        return known[(i, j)]

    def augment(i: int, seen: set[int]) -> bool:
        for j in (*range(i, pairs), *range(i)):
            if j not in seen and fits(i, j):
                seen.add(j)
                owner = match_of[j]
                if owner is None or augment(owner, seen):
                    match_of[j] = i
                    return True
        return False

    return all(augment(i, set()) for i in range(pairs))


def list_status(
    gold_latex: str, answer: str, same: Callable[[str, str], bool]
) -> VerdictStatus | None:
    """A gold list of k parts against the answer's parts, or None when the gold is no list or
    the answer's parts are not k (math-verify's set reading then decides, unless the gold
    repeats a part: a set would lose it, so that answer is incomplete).

    Names: parts named alike on both sides (`x=1, y=2`) match in any order; values under
    distinct gold names (`x=1, y=2` against `1, 2`) go in the gold's order; an answer's names
    against a gold of bare values (`a = -2, b = -2` against `-2,-2`) are dropped."""
    gold = split_parts(gold_latex.strip("$"))
    if not 2 <= len(gold) <= MAX_PARTS:
        return None
    parts = split_parts(answer)
    if len(parts) == 1:
        parts = split_parts(_unbracket(parts[0]))
    if len(parts) != len(gold):
        return "incorrect" if len(set(gold)) < len(gold) else None
    gold_names = [_name(part)[0] for part in gold]
    answer_names = [_name(part)[0] for part in parts]
    if all(gold_names) and not any(answer_names) and len(set(gold_names)) == len(gold):
        right = all(same(g, a) for g, a in zip(gold, parts, strict=True))
        return "correct" if right else "incorrect"
    if not any(gold_names):
        parts = [_name(part)[1] for part in parts]
    right = perfect_matching(len(gold), lambda i, j: same(gold[i], parts[j]))
    return "correct" if right else "incorrect"
