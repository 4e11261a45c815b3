"""`infer`: plan the missing (problem, sample, seed) triples (pure) and run them.

Order: read the input, lock the output, scan what is done, check the run spec, ask the
server, then append; the spec is written and a torn tail cut only before the first append.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llmeval import __version__
from llmeval.client.chat_client import ChatClient, ClientConfig, display_url, normalize_base_url
from llmeval.errors import EXIT_INCOMPLETE, EXIT_INTERRUPTED, EXIT_OK, ServerError, UsageError
from llmeval.files import JsonlAppender, repair_tail
from llmeval.infer.problems import InputKeys, file_sha256, load_problems, user_message
from llmeval.infer.progress import (
    Progress,
    Snapshot,
    client_bound_hint,
    start_clock,
    start_cpu_clock,
    summarize,
)
from llmeval.infer.resume import OutputLock, check_spec, done_keys, write_spec
from llmeval.infer.runner import Job, Request, Tally, run_jobs
from llmeval.records import Problem, RunSpec

log = logging.getLogger("llmeval")


def sample_seed(base_seed: int, problem_id: str, sample_idx: int) -> int:
    """The seed of one sample: first 4 bytes of sha256(base, id, idx), in [0, 2**31)."""
    key = f"{base_seed}\0{problem_id}\0{sample_idx}".encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.sha256(key).digest()[:4], "big") & 0x7FFFFFFF


def plan(
    problems: list[Problem], n_samples: int, done: set[tuple[str, int]], base_seed: int
) -> list[Job]:
    """The samples still missing, problem by problem (keeps the server's prefix cache warm)."""
    return [
        Job(i, k, sample_seed(base_seed, p.id, k))
        for i, p in enumerate(problems)
        for k in range(n_samples)
        if (p.id, k) not in done
    ]


def unknown_ids(problems: Iterable[Problem], done: set[tuple[str, int]]) -> set[str]:
    """Problem ids in the output that the input does not have."""
    known = {p.id for p in problems}
    return {pid for pid, _ in done if pid not in known}


@dataclass
class InferOptions:
    """Everything `llmeval infer` is told."""

    input: str
    output: str
    base_urls: list[str]
    model: str | None = None
    n_samples: int = 1
    max_workers: int = 64
    temperature: float = 0.6
    top_p: float = 0.95
    top_k: int | None = None
    min_p: float | None = None
    max_tokens: int = 32768
    seed: int = 0
    timeout: float = 600.0
    deadline: float | None = None
    max_retries: int = 8
    retry_delay: float = 1.0
    retry_max_delay: float = 60.0
    system_prompt: str | None = None
    template: str = ""
    extra_body: dict[str, Any] = field(default_factory=dict)
    api_key: str | None = None
    stream: bool = True
    keys: InputKeys = field(default_factory=InputKeys)
    task: str | None = None
    force: bool = False
    response_key: str | None = None
    progress: bool | None = None  # None: a bar on a terminal, plain lines otherwise
    progress_interval: float = 5.0


def build_spec(opts: InferOptions, model: str) -> RunSpec:
    """The run spec of these options (no credentials)."""
    return RunSpec(
        model=model,
        base_urls=[display_url(normalize_base_url(u)) for u in opts.base_urls],
        task=opts.task,
        n_samples=opts.n_samples,
        temperature=opts.temperature,
        top_p=opts.top_p,
        top_k=opts.top_k,
        min_p=opts.min_p,
        max_tokens=opts.max_tokens,
        seed=opts.seed,
        system_prompt=opts.system_prompt,
        prompt_template=opts.template,
        extra_body=opts.extra_body,
        input_keys={"question": opts.keys.question, "answer": opts.keys.answer, "id": opts.keys.id},
        input_file=str(opts.input),
        input_sha256=file_sha256(opts.input),
        llmeval_version=__version__,
    )


class _FirstWriteAppender:
    """Appends lines; before the first one, writes the spec and cuts a torn tail."""

    def __init__(self, output: Path, spec: RunSpec) -> None:
        self.output, self.spec = output, spec
        self.appender: JsonlAppender | None = None

    def __call__(self, line: bytes) -> None:
        if self.appender is None:
            repair_tail(self.output)
            write_spec(self.output, self.spec)
            self.appender = JsonlAppender(self.output)
        self.appender.write_raw(line)

    def close(self) -> None:
        if self.appender is not None:
            self.appender.close()


def run_infer(opts: InferOptions) -> int:
    """Run `infer`; return the exit code (typed errors propagate to the CLI)."""
    problems = load_problems(opts.input, opts.keys)
    output = Path(opts.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    with OutputLock(output):
        done = done_keys(output)
        extra = unknown_ids(problems, done)
        if extra:
            log.warning(
                "%s holds %d problem ids that %s lacks (kept as they are), e.g. %s",
                output, len(extra), opts.input, sorted(extra)[0],
            )  # fmt: skip
        jobs = plan(problems, opts.n_samples, done, opts.seed)
        return asyncio.run(_run(opts, problems, output, done, jobs))


async def _resolve_model(client: ChatClient, wanted: str | None) -> str:
    served = await client.models()
    if wanted:
        return wanted
    if len(served) == 1:
        log.info("model: %s (the only one the server lists)", served[0])
        return served[0]
    if not served:
        why = f" ({client.models_problem})" if client.models_problem else ""
        raise ServerError(f"the server lists no models at /v1/models{why}; pass --model")
    raise UsageError(
        f"the server serves several models ({', '.join(served)}); pick one with --model"
    )


def _request(opts: InferOptions, model: str) -> Request:
    """What every request of the run shares."""
    sampling = {"temperature": opts.temperature, "top_p": opts.top_p}
    sampling |= {"top_k": opts.top_k, "min_p": opts.min_p}
    return Request(
        model=model, system_prompt=opts.system_prompt, max_tokens=opts.max_tokens,
        sampling=sampling, extra_body=opts.extra_body, stream=opts.stream, task=opts.task,
        response_key=opts.response_key,
    )  # fmt: skip


async def _run(
    opts: InferOptions,
    problems: list[Problem],
    output: Path,
    done: set[tuple[str, int]],
    jobs: list[Job],
) -> int:
    config = ClientConfig(
        base_urls=opts.base_urls, api_key=opts.api_key, stream=opts.stream,
        timeout=opts.timeout, deadline=opts.deadline, max_retries=opts.max_retries,
        backoff_base=opts.retry_delay, backoff_max=opts.retry_max_delay,
        max_workers=opts.max_workers,
    )  # fmt: skip
    async with ChatClient(config) as client:
        model = await _resolve_model(client, opts.model)
        spec = build_spec(opts, model)
        check_spec(output, spec, force=opts.force, has_output=bool(done))
        req = _request(opts, model)
        prompts = [user_message(p, opts.template) for p in problems]
        tally = Tally(total=len(jobs))
        total = len(problems) * opts.n_samples
        log.info(
            "%d samples to request (%d of %d already in %s), %d workers, model %s",
            len(jobs), total - len(jobs), total, output, opts.max_workers, model,
        )  # fmt: skip
        if not jobs:
            summarize(tally, output, 0.0)
            return EXIT_OK
        elapsed, cpu = start_clock(), start_cpu_clock()
        progress = Progress(
            lambda: Snapshot(tally.written, tally.total, tally.failed, tally.tokens,
                             client.in_flight, client.retries, elapsed(), cpu()),
            live=opts.progress, interval=opts.progress_interval,
        )  # fmt: skip
        shown = asyncio.create_task(progress.run())
        sink = _FirstWriteAppender(output, spec)
        try:
            workers = min(opts.max_workers, len(jobs))
            await run_jobs(jobs, problems, prompts, req, client, sink, tally, workers)
        finally:
            sink.close()
            shown.cancel()
            await asyncio.gather(shown, return_exceptions=True)
        seconds = elapsed()
        hint = client_bound_hint(cpu(), seconds, opts.stream)
        summarize(tally, output, seconds, hint)
    if tally.fatal:
        raise ServerError(tally.fatal)
    if tally.interrupted:
        return EXIT_INTERRUPTED
    return EXIT_INCOMPLETE if tally.failed or tally.written < tally.total else EXIT_OK
