"""What `llmeval eval` (and `report`, which evaluates first) is told: built by the command line
(`cli/eval.py`), read by `run_eval`, which hands each step only what it uses. A frozen model
whose bounds are the flags' checks, like infer's. The judge's options (`judge.ask`, which loads
the HTTP client) are given to `run_eval` apart, only when a judge is asked."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from llmeval.evaluate.layouts import RowKeys
from llmeval.runs.layout import cache_path
from llmeval.tasks import IsoDate
from llmeval.verify.pool import DEFAULT_MEMORY_MB
from llmeval.verify.verifier import Policy

DEFAULT_TIMEOUT_S = 20.0
MAX_TIMEOUT_S = 86_400  # a day: longer overflowed in the pool


class EvalOptions(BaseModel):
    """What `llmeval eval` was asked to do."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    paths: list[str]
    task: str | None = None
    cache: Path | None = None
    use_cache: bool = True
    workers: int = Field(1, ge=1)
    timeout: float = Field(  # seconds of the verifier's CPU time per verification
        DEFAULT_TIMEOUT_S, gt=0, le=MAX_TIMEOUT_S, json_schema_extra={"unit": "s"}
    )
    memory_mb: int | None = Field(DEFAULT_MEMORY_MB, ge=1)
    keys: RowKeys = Field(default_factory=RowKeys)
    keep_texts: bool = False  # keep each sample's texts and timings (the report shows them)
    policy: Policy = "strict"
    model: str | None = None  # --model: the model of every run read (files from elsewhere)
    model_date: IsoDate | None = None  # --model-date: the date of models whose specs have none

    def cache_file(self, path: Path) -> Path | None:
        """The verdict cache of a generation file (None: no cache)."""
        return (self.cache or cache_path(path)) if self.use_cache else None
