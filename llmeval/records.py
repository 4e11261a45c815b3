"""The record vocabulary shared by both stages: problems, generations, run specs, verdicts. infer
and eval never import each other: these and the JSONL files are their contract (fields may grow)."""

from __future__ import annotations

import hashlib
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from llmeval.sampling import Sampling
from llmeval.transcripts import SandboxInfo, ToolCall, ToolFigures, ToolSettings, Turn

SCHEMA_VERSION = 1

# Statuses a verdict can have; only "correct" counts as right.
VerdictStatus = Literal["correct", "incorrect", "no_answer", "timeout", "error"]
CONTEXT_REJECTED = "context_length"  # older infers' rows of refused samples: asked again


class _Record(BaseModel):
    """Base of every record: unknown fields ignored; validators built on first use (0.1 s)."""

    model_config = ConfigDict(extra="ignore", defer_build=True)


def _to_text(value: Any) -> Any:
    """Coerce a numeric gold answer or problem id (other tools write 27 or 27.0) to text."""
    return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


class Problem(_Record):
    """One input problem: id, problem text or ready prompt, gold answer; extra fields kept."""

    model_config = ConfigDict(extra="allow")

    id: str
    problem: str | None = None
    prompt: str | None = None  # upstream format: sent verbatim, no template
    answer: str
    # statements the errata replaced (data/README.md): outputs drawn on them still match it
    earlier_statements: list[str] = Field(default_factory=list)

    _coerce_answer = field_validator("answer", mode="before")(_to_text)

    @property
    def extras(self) -> dict[str, Any]:
        """Fields of the source beyond id/problem/prompt/answer."""
        return dict(self.model_extra or {})


def token_count(value: Any) -> int | None:
    """A token count from a server or a file if it is a sane one (a whole number from 0 to a
    billion; 12.0 counts), else None: NaN, 1e400, -3, "12", 400 digits, true."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 10**9
    return value if ok else None


class Usage(_Record):
    """Token counts as the server reported them; one that is not sane reads as absent."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    # of the completion, those spent reasoning (`completion_tokens_details.reasoning_tokens`)
    reasoning_tokens: int | None = None

    _sane = field_validator(
        "prompt_tokens", "completion_tokens", "reasoning_tokens", mode="before"
    )(token_count)


class Generation(_Record):
    """One sample: one request, one output line. Keyed by (problem_id, sample_idx)."""

    problem_id: str
    sample_idx: int = Field(ge=0)
    prompt: str
    answer: str
    gen: str
    reasoning: str | None = None
    reasoning_chars: int | None = None  # characters of `reasoning` (the server split it out)
    finish_reason: str | None = None
    cut_by: str | None = None  # "max_reply_bytes": the reply was cut at that cap (finish "length")
    usage: Usage | None = None
    latency_s: float | None = None
    ttft_s: float | None = None
    seed: int | None = None
    model: str | None = None
    endpoint: str | None = None
    task: str | None = None
    settings: str | None = None  # the id of the run spec's settings it was drawn under
    meta: dict[str, Any] = Field(default_factory=dict)  # the problem's subject, level, ...
    turns: list[Turn] | None = None  # with tools: `gen` is the transcript, code and outputs inline
    tool_calls: list[ToolCall] | None = None
    out_of_calls: bool | None = None  # the calls ran out: the last turn was asked without tools
    schema_version: int = SCHEMA_VERSION

    _coerce_text = field_validator("problem_id", "answer", mode="before")(_to_text)


class SampleKey(_Record):
    """The fields a resume scan needs (the model and task a row names, to tell a row of
    another run); parsing only these keeps the scan cheap."""

    problem_id: str
    sample_idx: int = Field(ge=0)
    finish_reason: Any = None
    model: Any = None
    task: Any = None

    _coerce_id = field_validator("problem_id", mode="before")(_to_text)


class ServerInfo(_Record):
    """What the server said about itself during a run, where offered: the model id it serves (vLLM's
    `root`: the weights behind it), its `/version`, its replies' `system_fingerprint`; short."""

    model_id: str | None = None
    model_root: str | None = None
    version: str | None = None
    system_fingerprint: str | None = None


class Segment(_Record):
    """Settings part of a run was drawn under (--force): their id (rows record it), fields."""

    id: str
    fields: dict[str, Any]


class RunSpec(Sampling):
    """What produced an output file (`<output>.spec.json`): its sampling, model, servers (without
    credentials), task, n, input. A resume, or a merge of shards, whose specs differ is refused."""

    model: str
    base_urls: list[str] = Field(default_factory=list)
    task: str | None = None
    n_samples: int
    input_keys: dict[str, str | None] = Field(default_factory=dict)  # question/answer/id keys
    input_file: str | None = None
    input_sha256: str | None = None
    llmeval_version: str | None = None
    shard: str | None = None  # "K/N": this file holds shard K of N of the run (shards.py)
    server: ServerInfo | None = None
    segments: list[Segment] = Field(default_factory=list)  # each settings drawn under (--force)
    tools: ToolSettings | None = None  # --tools and its limits
    sandbox: SandboxInfo | None = None  # where the calls ran (this machine's isolation)
    model_date: str | None = None  # the model's date (--model-date): no setting, not compared
    schema_version: int = SCHEMA_VERSION

    @classmethod
    def read(cls, raw: bytes) -> RunSpec:
        """A stored spec: one written before --extra-body's own fields were refused is read."""
        return cls.model_validate_json(raw, context={"stored": True})

    # Fields the files of one run may differ in (shard, servers, input path, llmeval version)
    LOCAL: ClassVar[frozenset[str]] = frozenset(
        {"base_urls", "input_file", "llmeval_version", "shard", "server", "model_date", "sandbox"}
    )
    RESUMABLE_CHANGES: ClassVar[frozenset[str]] = LOCAL | {"n_samples", "segments"}  # +resumes

    def differences(self, other: RunSpec, *, merging: bool = False) -> dict[str, tuple[Any, Any]]:
        """Fields whose values differ and would change the samples: {name: (self, other)}; when
        `merging` files into one run, n must be the same too."""
        mine, theirs = self.model_dump(), other.model_dump()
        ignored = self.LOCAL if merging else self.RESUMABLE_CHANGES
        return {
            name: (mine.get(name), theirs.get(name))
            for name in sorted(set(mine) | set(theirs))
            if name not in ignored and mine.get(name) != theirs.get(name)
        }


def cache_key(*parts: str, size: int = 32) -> str:
    """A short digest of `parts` (sha256 joined by \\x1f): the key of a cached verdict."""
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:size]


class Verdict(_Record):
    """One cached verification, keyed by (verifier id, kind, gold, answer), never position."""

    key: str
    status: VerdictStatus
    pred: str | None = None
    gold: str | None = None
    detail: str | None = None
    timeout_s: float | None = None  # a "timeout" verdict's deadline: a longer one retries it
    verifier: str | None = None  # what made it: a verifier id, or the judge's version and model


class ProblemScore(_Record):
    """One problem's samples in a task: counts, its avg@n, and the answer most samples gave."""

    problem_id: str
    n_samples: int
    n_correct: int
    accuracy: float
    n_missing: int = 0
    n_no_answer: int = 0
    n_timeout: int = 0
    n_error: int = 0
    n_truncated: int = 0
    majority_answer: str | None = None
    majority_correct: bool = False
    subject: str | None = None
    level: str | None = None


class GroupScore(_Record):
    """Accuracy over a subset of a task's problems (a MATH-500 subject or level)."""

    n_problems: int
    accuracy: float | None
    stderr: float | None = None


class JudgeScore(_Record):
    """A task under the LLM judge: distinct (problem, answer) questions asked, overturned to
    correct, left without a verdict; avg@n and pass@k with its yeses counted correct."""

    model: str
    asked: int = 0
    overturned: int = 0
    unparsed: int = 0
    accuracy: float | None = None
    pass_at_k: dict[str, float] = Field(default_factory=dict)


class TaskScore(_Record):
    """The figures of one run of one model on one task (one generation file, or several: its
    shards), computed once over the union of its samples; fractions 0-1."""

    task: str
    model: str  # the run spec's model, else the rows' `model`, else the file's folder
    file: str  # the run's output: its file, or the file its shards belong to (may not exist)
    files: list[str] = Field(default_factory=list)  # the generation files read: the run's union
    shards: list[str] = Field(default_factory=list)  # "K/N" of each shard file among them
    settings: dict[str, Any] = Field(default_factory=dict)  # what tells runs apart (run spec's)
    n_problems: int
    n_problems_missing: int = 0  # asked (run spec's input, else the task's data) but no sample
    n_problems_foreign: int = 0  # in the file but not in what was asked: left out of figures
    n_samples: int  # n: samples per problem expected (run spec, else the most any problem has)
    samples_expected: int
    samples_scored: int
    samples_missing: int
    accuracy: float | None
    stderr: float | None
    sample_stderr: float | None
    pass_at_k: dict[str, float] = Field(default_factory=dict)
    maj_at_k: dict[str, float] = Field(default_factory=dict)
    pass_hat_k: dict[str, float] = Field(default_factory=dict)  # all k samples right: C(c,k)/C(n,k)
    model_date: str | None = None  # the model's (run spec's, else --model-date): contests after it
    n_correct: int = 0
    n_incorrect: int = 0
    n_no_answer: int = 0
    n_timeout: int = 0
    n_error: int = 0
    n_truncated: int = 0
    n_unfinished: int = 0  # of n_truncated: no finish reason recorded, the text looks cut
    n_duplicates: int = 0  # rows under a (problem, sample index) another sample had: left out
    n_copies: int = 0  # rows that repeated earlier rows (a file appended twice): counted once
    n_beyond_n: int = 0  # samples at an index the run spec does not plan: left out
    n_ungraded: int = 0  # problems without a gold answer: left out of every figure
    n_gold_unparsed: int = 0  # problems whose gold the verifier cannot read (text compared)
    problems_file: str | None = None  # the problems scored against: spec's input, else data
    problems_sha256: str | None = None  # their SHA-256
    # the problems matched only by a statement the errata since corrected (data's errata)
    problems_on_earlier_statements: list[str] = Field(default_factory=list)
    policies: dict[str, float | None] = Field(default_factory=dict)  # accuracy per policy
    judge: JudgeScore | None = None  # with --judge-url: `accuracy` stays the rules' alone
    truncation_rate: float | None = None
    mean_completion_tokens: float | None = None
    mean_reasoning_tokens: float | None = None  # where rows report usage.reasoning_tokens
    mean_answer_tokens: float | None = None  # completion minus reasoning, where both are known
    mean_prompt_tokens: float | None = None  # where rows report usage.prompt_tokens
    complete: bool  # every problem asked has every sample
    being_written: bool = False  # a writer (infer) held one of its files as eval read it
    rounds_complete: int = 0  # in progress: k, the rounds (samples 0..k-1) all problems finished
    rounds_accuracy: float | None = None  # avg@k over those rounds: unmoved by the finish order
    rounds_stderr: float | None = None
    finished_mean: float | None = None  # correct / finished samples: reads high while running
    missing_by_shard: dict[str, int] = Field(default_factory=dict)  # by the owning shard "K/N"
    mixed_settings: str | None = None  # "samples 0-79 at temperature 0.6; 80-95 at 1.0"
    same_texts: str | None = None  # runs alike but for a sampling setting, and every text
    by_subject: dict[str, GroupScore] = Field(default_factory=dict)
    by_level: dict[str, GroupScore] = Field(default_factory=dict)
    problems: list[ProblemScore] = Field(default_factory=list)
    tools: ToolFigures | None = None  # a run drawn with --tools: how its samples used them


class CacheStats(_Record):
    """Verdict cache use in one eval: distinct pairs cached, verified now, timed out; the files."""

    hits: int = 0
    new: int = 0
    timeouts: int = 0
    files: list[str] = Field(default_factory=list)
    foreign: dict[str, int] = Field(default_factory=dict)  # file: verdicts used not written here


class ScoreReport(_Record):
    """The result of one `llmeval eval` call, written by `--result-json`."""

    tasks: list[TaskScore]
    verifier: str
    policy: str
    cache: CacheStats
    llmeval_version: str | None = None
    schema_version: int = SCHEMA_VERSION
