"""The async part of `infer`: a fixed number of workers; a record maker turns each job into its
request and its reply into its output line, appended at once through the run's one appender (a
whole line per write, never interleaved).

SIGINT/SIGTERM stop new requests and cancel those in flight; every finished sample is kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from llmeval.client.chat_client import ChatClient
from llmeval.client.protocol import (
    ChatFailure,
    ContextLengthError,
    FatalServerError,
    Reply,
    build_body,
)
from llmeval.infer.tally import Tally
from llmeval.infer.tools import Conversation, ToolLoop
from llmeval.problems import user_message
from llmeval.records import Generation, Problem, Usage
from llmeval.sampling import Sampling


@dataclass(frozen=True)
class Job:
    """One sample to request: which problem, which sample index, which seed."""

    problem: int  # index into the problem list
    sample_idx: int
    seed: int


def _round(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds, 4)


def _usage(reply: Reply) -> Usage | None:
    """The reply's token counts, or None when it sent none."""
    usage = Usage(
        prompt_tokens=reply.prompt_tokens,
        completion_tokens=reply.completion_tokens,
        reasoning_tokens=reply.reasoning_tokens,
    )
    return usage if usage.model_dump(exclude_none=True) else None


@dataclass(frozen=True)
class RecordMaker:
    """What a run asks for each job and the line its reply becomes: the model and sampling
    of every request, and what every row records besides the reply."""

    model: str
    sampling: Sampling
    problems: list[Problem]
    stream: bool = True
    task: str | None = None
    settings_id: str | None = None  # the id of the settings it draws under (rows record it)
    response_key: str | None = None  # upstream readers' name for the text, written as well

    @cached_property
    def prompts(self) -> list[str]:
        """Each problem's user message."""
        return [user_message(p, self.sampling.prompt_template) for p in self.problems]

    def messages(self, job: Job) -> list[dict[str, Any]]:
        """The system prompt, if any, and the job's user message."""
        system = self.sampling.system_prompt
        messages = [{"role": "system", "content": system}] if system else []
        messages.append({"role": "user", "content": self.prompts[job.problem]})
        return messages

    def body(self, job: Job) -> bytes:
        """The request body of a job."""
        messages = self.messages(job)
        return build_body(self.model, messages, self.sampling, seed=job.seed, stream=self.stream)

    def line(self, job: Job, reply: Reply, talk: Conversation | None = None) -> bytes:
        """The output line of a job's reply (a conversation's, when it used tools)."""
        problem = self.problems[job.problem]
        gen = Generation(
            problem_id=problem.id,
            sample_idx=job.sample_idx,
            prompt=self.prompts[job.problem],
            answer=problem.answer,
            gen=reply.text,
            reasoning=reply.reasoning,
            reasoning_chars=None if reply.reasoning is None else len(reply.reasoning),
            finish_reason=reply.finish_reason,
            cut_by=reply.cut_by,
            usage=_usage(reply),
            latency_s=_round(reply.latency_s),
            ttft_s=_round(reply.ttft_s),
            seed=job.seed,
            model=self.model,
            endpoint=reply.endpoint,
            task=self.task,
            settings=self.settings_id,
            meta=problem.extras,
        )
        if talk is not None:
            gen.turns, gen.tool_calls, gen.out_of_calls = talk.turns, talk.calls, talk.out_of_calls
        if self.response_key and self.response_key != "gen":  # upstream readers' name, as well
            data = gen.model_dump(mode="json", exclude_none=True)
            data[self.response_key] = reply.text
            return json.dumps(data, ensure_ascii=False).encode() + b"\n"
        return gen.model_dump_json(exclude_none=True).encode() + b"\n"


async def run_jobs(
    jobs: Iterator[Job],
    records: RecordMaker,
    client: ChatClient,
    write: Callable[[bytes], None],
    tally: Tally,
    tools: ToolLoop | None = None,
) -> None:
    """Run `jobs` through the client's workers (each a conversation, with `tools`); `write`
    gets each finished line."""

    def stop() -> None:
        for task in tasks:
            task.cancel()

    async def ask(job: Job) -> None:
        talk = None
        try:
            if tools is None:
                reply = await client.complete(records.body(job))
            else:
                talk = await tools.converse(records.messages(job), job.seed)
                reply = talk.reply()
        except FatalServerError as exc:
            tally.fatal = str(exc)
            stop()
            return
        except (ChatFailure, OSError) as exc:  # not written: a rerun asks again
            tally.failed += 1
            if isinstance(exc, ContextLengthError):
                tally.context_length += 1
                tally.context_error = tally.context_error or str(exc)
            elif len(tally.failures) < 5:
                tally.failures.append(f"{records.problems[job.problem].id}#{job.sample_idx}: {exc}")
            return
        try:
            write(records.line(job, reply, talk))
        except Exception:
            stop()  # e.g. disk full: nothing more can be kept, so stop asking
            raise
        tally.written += 1
        tally.tokens += reply.completion_tokens or 0
        tally.bad_usage += reply.bad_usage
        tally.cut += reply.cut_by is not None

    def interrupted() -> None:
        tally.interrupted = True
        stop()

    tasks = client.workers(jobs, ask)
    with _on_signals(interrupted):
        results = await asyncio.gather(*tasks, return_exceptions=True)
    for result in results:  # a bug or a full disk, not a server problem: do not hide it
        if isinstance(result, Exception):
            raise result


@contextlib.contextmanager
def _on_signals(handler: Callable[[], object]) -> Iterator[None]:
    """Route SIGINT/SIGTERM to `handler` while the block runs (signals are the main thread's)."""
    loop = asyncio.get_running_loop()
    main = threading.current_thread() is threading.main_thread()
    signals = (signal.SIGINT, signal.SIGTERM) if main else ()
    for sig in signals:
        loop.add_signal_handler(sig, handler)
    try:
        yield
    finally:
        for sig in signals:
            loop.remove_signal_handler(sig)
