"""What `llmeval infer` is told: built by the command line, read by the run and its workers."""

from __future__ import annotations

from dataclasses import dataclass, field

from llmeval.client.endpoints import ClientConfig
from llmeval.problems import InputKeys
from llmeval.sampling import Sampling
from llmeval.shards import Shard, shard_file


@dataclass(frozen=True)
class InferOptions:
    """Everything `llmeval infer` is told."""

    input: str
    output: str
    client: ClientConfig  # servers, key, streaming, timeouts, retries, requests in flight
    sampling: Sampling = field(default_factory=Sampling)
    model: str | None = None
    n_samples: int = 1
    keys: InputKeys = field(default_factory=InputKeys)
    task: str | None = None
    force: bool = False
    response_key: str | None = None
    progress: bool | None = None  # None: a bar on a terminal, plain lines otherwise
    progress_interval: float = 5.0
    shard: Shard | None = None  # ask only for this shard's pairs, into its own file
    shard_source: str | None = None  # where the shard came from: "--shard", a Slurm array task

    @property
    def out_file(self) -> str:
        """The file this process writes: the run's output, or its shard's file."""
        return str(shard_file(self.output, self.shard)) if self.shard else self.output
