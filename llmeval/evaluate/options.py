"""What `llmeval eval` (and `report`, which evaluates first) is told."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from llmeval.evaluate.verdict_cache import cache_path_for
from llmeval.verify.pool import DEFAULT_MEMORY_MB
from llmeval.verify.verifier import Policy

if TYPE_CHECKING:
    from llmeval.judge.ask import JudgeOptions

DEFAULT_TIMEOUT_S = 20.0


@dataclass(frozen=True)
class RowKeys:
    """Which row fields hold the gold, the output(s) and the problem id (None: detect)."""

    answer: str = "answer"
    response: str = "gen"
    id: str | None = None
    lm_filter: str | None = None  # lm-evaluation-harness files: the filter whose rows are read

    @property
    def fields(self) -> tuple[str, str, str | None]:
        """(response, answer, id) keys."""
        return self.response, self.answer, self.id


@dataclass(frozen=True)
class EvalOptions:
    """What `llmeval eval` was asked to do."""

    paths: list[str]
    task: str | None = None
    cache: Path | None = None
    use_cache: bool = True
    workers: int = 1
    timeout_s: float = DEFAULT_TIMEOUT_S
    memory_mb: int | None = DEFAULT_MEMORY_MB
    keys: RowKeys = field(default_factory=RowKeys)
    keep_texts: bool = False  # keep each sample's texts and timings (the report shows them)
    policy: Policy = "strict"
    judge: JudgeOptions | None = None  # ask an LLM judge about the rules' misses
    model: str | None = None  # --model: the model of every run read (files from elsewhere)

    def cache_file(self, path: Path) -> Path | None:
        """The verdict cache of a generation file (None: no cache)."""
        return (self.cache or cache_path_for(path)) if self.use_cache else None
