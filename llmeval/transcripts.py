"""The records of a sample that used tools: each call's code and result, each turn of its
conversation, and the tool settings and sandbox a run recorded in its spec."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# How a call's output is written into a transcript (infer's fences, eval's reading of them)
OUTPUT_OPEN = "```output\n"
OUTPUT_CLOSE = "\n```\n"

# What became of one call: it ran (ok) or raised (error); it ran past its CPU seconds or the
# wall-clock backstop (timeout); it ran out of memory; a signal ended it (killed); it wrote
# more than the output cap (output_cut: head and tail kept, the cut marked).
ToolStatus = Literal["ok", "error", "timeout", "memory", "killed", "output_cut"]


class _Part(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)


class ToolCall(_Part):
    """One run of model-written code: the code, what it printed, how it ended, its CPU time."""

    code: str
    stdout: str = ""
    stderr: str = ""
    status: ToolStatus
    cpu_s: float | None = None
    call_id: str | None = None  # the native protocol's tool_call_id


class Turn(_Part):
    """One generation of a conversation: its text, why it stopped, its tokens."""

    text: str
    reasoning: str | None = None
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class ToolSettings(BaseModel):
    """The tool flags of a run (`--tools` and its limits): a resume with others is refused."""

    model_config = ConfigDict(frozen=True, extra="ignore", defer_build=True)

    tools: Literal["python"] = "python"
    protocol: Literal["native", "inline"] = "native"
    max_calls: int = Field(8, ge=0, le=1000)
    timeout_s: float = Field(10.0, gt=0, le=3600)  # CPU seconds of one call
    memory_mb: int = Field(2048, ge=64)
    output_chars: int = Field(4000, ge=100)  # of one call's output the model sees
    state: Literal["stateless", "replay"] = "stateless"
    fences: str | None = None  # the inline protocol's fence family (client/tools.py)
    sandbox_cmd: str | None = None  # a lab's own wrapper of each call

    def __str__(self) -> str:
        """What a run label says of them: `python/native/8`."""
        return f"{self.tools}/{self.protocol}/{self.max_calls}"


class SandboxInfo(BaseModel):
    """Where a run's calls ran: the isolation this machine gave, the interpreter and the
    libraries (with versions) it offered."""

    model_config = ConfigDict(frozen=True, extra="ignore", defer_build=True)

    isolation: Literal["namespaces", "process", "command"]
    python: str
    libraries: dict[str, str] = Field(default_factory=dict)


class ToolFigures(_Part):
    """How a run's samples used their tools (a run drawn with --tools): samples with at least
    one call, calls per sample, the share of calls that failed or ran out of time, samples
    whose calls ran out, and samples with no answer after their last tool output whose
    tool outputs hold one (counted, never scored)."""

    samples: int
    with_calls: int = 0
    calls: int = 0
    calls_per_sample: float | None = None
    error_rate: float | None = None  # of calls: status error
    timeout_rate: float | None = None  # of calls: status timeout
    out_of_calls: int = 0
    answer_in_output: int = 0
