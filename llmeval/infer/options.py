"""What `llmeval infer` is told: built by the command line (`cli/infer.py`), read by the run
(`infer/run.py`), which hands its workers only what they use. Like `Sampling` and `ClientConfig`
it is a frozen model whose bounds are the flags' checks."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from llmeval.client.endpoints import ClientConfig
from llmeval.problems import InputKeys
from llmeval.runs.layout import shard_file
from llmeval.runs.pairs import Shard
from llmeval.sampling import Sampling
from llmeval.tasks import IsoDate
from llmeval.transcripts import ToolSettings


class InferOptions(BaseModel):
    """Everything `llmeval infer` is told."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    input: str
    output: str
    client: ClientConfig  # servers, key, streaming, timeouts, retries, requests in flight
    sampling: Sampling = Field(default_factory=Sampling)
    model: str | None = None
    n_samples: int = Field(1, ge=1)
    keys: InputKeys = Field(default_factory=InputKeys)
    task: str | None = None
    force: bool = False
    response_key: str | None = None
    progress: bool | None = None  # None: a bar on a terminal, plain lines otherwise
    progress_interval: float = Field(5.0, gt=0)
    shard: Shard | None = None  # ask only for this shard's pairs, into its own file
    shard_source: str | None = None  # where the shard came from: "--shard", a Slurm array task
    tools: ToolSettings | None = None  # --tools python: each sample a conversation with calls
    model_date: IsoDate | None = None  # the model's date (--model-date), kept in the run spec

    @property
    def out_file(self) -> str:
        """The file this process writes: the run's output, or its shard's file."""
        return str(shard_file(self.output, self.shard)) if self.shard else self.output
