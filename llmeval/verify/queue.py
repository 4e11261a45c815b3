"""What the verifier pool works on: one task per distinct (gold, answer) pair, its result, and
the queue that hands tasks out grouped by gold."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class VerifyTask:
    """One distinct pair to verify; `key` is its verdict-cache key."""

    key: str
    kind: str
    gold: str
    answer: str


@dataclass(frozen=True, slots=True)
class VerifyResult:
    """The verdict of one task: its status (under the lenient policy too, when that differs),
    a short reason for error/timeout or an unreadable gold, the time it took; not `final` when
    the machine, not the pair, may be the cause (a busy machine, a killed worker): not cached."""

    key: str
    status: str
    detail: str | None
    seconds: float
    lenient: str | None = None
    final: bool = True


class ByGold:
    """Pending tasks grouped by gold, so a worker keeps to one gold while it lasts (parsing a
    gold costs more than a short answer) and workers start on different golds."""

    def __init__(self, tasks: Iterable[VerifyTask]) -> None:
        self.groups: dict[str, deque[VerifyTask]] = {}
        for task in tasks:
            self.groups.setdefault(task.gold, deque()).append(task)

    def __bool__(self) -> bool:
        return bool(self.groups)

    def __len__(self) -> int:
        return sum(len(q) for q in self.groups.values())

    def put_back(self, task: VerifyTask) -> None:
        """Queue `task` again, first of its gold."""
        self.groups.setdefault(task.gold, deque()).appendleft(task)

    def take(self, prefer: str | None, avoid: set[str | None]) -> VerifyTask:
        """A task of gold `prefer` if any, else of a gold no other worker is on, else any."""
        if prefer not in self.groups:
            prefer = next((g for g in self.groups if g not in avoid), next(iter(self.groups)))
        group = self.groups[prefer]
        task = group.popleft()
        if not group:
            del self.groups[task.gold]
        return task
