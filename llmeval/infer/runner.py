"""The async part of `infer`: a fixed number of workers and ONE writer appending each record.

SIGINT/SIGTERM stop new requests, cancel those in flight and let the writer flush.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from llmeval.client.chat_client import (
    ChatClient,
    ChatFailure,
    ContextLengthError,
    FatalServerError,
    Outcome,
)
from llmeval.client.protocol import Reply, build_body
from llmeval.records import Generation, Problem, Usage


@dataclass(frozen=True)
class Job:
    """One sample to request: which problem, which sample index, which seed."""

    problem: int  # index into the problem list
    sample_idx: int
    seed: int


@dataclass
class Request:
    """Everything about a request that is the same for every sample of a run."""

    model: str
    system_prompt: str | None
    max_tokens: int
    sampling: dict[str, Any]
    extra_body: dict[str, Any]
    stream: bool
    task: str | None = None
    response_key: str | None = None  # upstream readers' name for `gen`, written as well


@dataclass
class Tally:
    """What the run did so far; read by the progress display."""

    total: int = 0
    written: int = 0
    context_length: int = 0
    failed: int = 0
    tokens: int = 0
    failures: list[str] = field(default_factory=list)
    fatal: str | None = None
    interrupted: bool = False


def record_line(
    req: Request, problem: Problem, prompt: str, job: Job, outcome: Outcome | None, reply: Reply
) -> bytes:
    """The output line of one sample."""
    gen = Generation(
        problem_id=problem.id,
        sample_idx=job.sample_idx,
        prompt=prompt,
        answer=problem.answer,
        gen=reply.text,
        reasoning=reply.reasoning,
        finish_reason=reply.finish_reason,
        usage=Usage(prompt_tokens=reply.prompt_tokens, completion_tokens=reply.completion_tokens)
        if reply.prompt_tokens is not None or reply.completion_tokens is not None
        else None,
        latency_s=round(outcome.latency_s, 4) if outcome else None,
        ttft_s=round(reply.ttft_s, 4) if reply.ttft_s is not None else None,
        seed=job.seed,
        model=req.model,
        endpoint=outcome.endpoint if outcome else None,
        task=req.task,
        meta=problem.extras,
    )
    if req.response_key and req.response_key != "gen":
        data = gen.model_dump(mode="json", exclude_none=True)
        data[req.response_key] = reply.text
        return json.dumps(data, ensure_ascii=False).encode() + b"\n"
    return gen.model_dump_json(exclude_none=True).encode() + b"\n"


def request_body(req: Request, prompt: str, seed: int) -> bytes:
    """The body of one sample's request."""
    messages = [{"role": "user", "content": prompt}]
    if req.system_prompt:
        messages.insert(0, {"role": "system", "content": req.system_prompt})
    return build_body(
        req.model, messages, max_tokens=req.max_tokens, seed=seed, stream=req.stream,
        sampling=req.sampling, extra_body=req.extra_body,
    )  # fmt: skip


async def run_jobs(
    jobs: Iterable[Job], problems: list[Problem], prompts: list[str], req: Request,
    client: ChatClient, write: Callable[[bytes], None], tally: Tally, workers: int,
) -> None:  # fmt: skip
    """Run `jobs` with `workers` concurrent requests; `write` gets each finished line in turn."""
    lines: asyncio.Queue[bytes | None] = asyncio.Queue()  # unbounded: a finished sample never waits
    pending = iter(jobs)
    tasks: list[asyncio.Task[None]] = []

    def stop() -> None:
        for task in tasks:
            task.cancel()

    async def worker() -> None:
        for job in pending:
            problem, prompt = problems[job.problem], prompts[job.problem]
            try:
                outcome = await client.complete(request_body(req, prompt, job.seed))
                reply = outcome.reply
            except ContextLengthError:
                outcome, reply = None, Reply(finish_reason="context_length")
                tally.context_length += 1
            except FatalServerError as exc:
                tally.fatal = str(exc)
                stop()
                return
            except ChatFailure as exc:
                tally.failed += 1
                if len(tally.failures) < 5:
                    tally.failures.append(f"{problem.id}#{job.sample_idx}: {exc}")
                continue
            tally.tokens += reply.completion_tokens or 0
            try:
                lines.put_nowait(record_line(req, problem, prompt, job, outcome, reply))
            except Exception:
                stop()
                raise

    async def writer() -> None:
        try:
            while (line := await lines.get()) is not None:
                write(line)
                tally.written += 1
        except BaseException:
            stop()  # e.g. disk full: nothing more can be kept, so stop asking
            raise

    writing = asyncio.create_task(writer())
    tasks.extend(asyncio.create_task(worker()) for _ in range(max(1, workers)))
    with _on_signals(lambda: (setattr(tally, "interrupted", True), stop())):
        results = await asyncio.gather(*tasks, return_exceptions=True)
    lines.put_nowait(None)
    await writing  # every finished sample is written before anything is raised
    for result in results:  # an exception is a bug, not a server problem: do not hide it
        if isinstance(result, Exception):
            raise result


@contextlib.contextmanager
def _on_signals(handler: Callable[[], object]) -> Any:
    """Route SIGINT/SIGTERM to `handler` while the block runs (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    loop = asyncio.get_running_loop()
    sigs = (signal.SIGINT, signal.SIGTERM)
    for sig in sigs:
        loop.add_signal_handler(sig, handler)
    try:
        yield
    finally:
        for sig in sigs:
            loop.remove_signal_handler(sig)
