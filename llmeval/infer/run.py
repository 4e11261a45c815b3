"""`infer`: plan the missing (problem, sample, seed) triples (pure) and run them.

Order: read the input, lock the output, scan what is done, check the run spec, ask the
server, then append; the spec is written and a torn tail cut only before the first append.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Iterable, Iterator
from dataclasses import asdict
from pathlib import Path

from llmeval import __version__
from llmeval.client.chat_client import ChatClient
from llmeval.errors import EXIT_INCOMPLETE, EXIT_INTERRUPTED, EXIT_OK, LlmevalError, ServerError
from llmeval.files import make_folder, write_json_atomic
from llmeval.infer.options import InferOptions
from llmeval.infer.resume import check_spec, done_keys, spec_path
from llmeval.infer.tally import (
    Tally,
    client_bound_hint,
    counters,
    print_summary,
    show_progress,
    stopwatch,
)
from llmeval.infer.workers import Job, run_jobs
from llmeval.jsonl import JsonlAppender
from llmeval.problems import load_problems
from llmeval.records import Problem, RunSpec

log = logging.getLogger("llmeval")

MANY = 1_000_000  # samples in one run past which a warning asks whether that is a typo


def sample_seed(base_seed: int, problem_id: str, sample_idx: int) -> int:
    """The seed of one sample: first 4 bytes of sha256(base, id, idx), in [0, 2**31)."""
    key = f"{base_seed}\0{problem_id}\0{sample_idx}".encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.sha256(key).digest()[:4], "big") & 0x7FFFFFFF


def plan(
    problems: list[Problem], n_samples: int, done: set[tuple[str, int]], base_seed: int
) -> Iterator[Job]:
    """The samples still missing, problem by problem (keeps the server's prefix cache warm),
    made as they are asked for: a huge --n-samples costs nothing up front."""
    return (
        Job(i, k, sample_seed(base_seed, p.id, k))
        for i, p in enumerate(problems)
        for k in range(n_samples)
        if (p.id, k) not in done
    )


def count_missing(problems: list[Problem], n_samples: int, done: set[tuple[str, int]]) -> int:
    """How many samples `plan` will yield."""
    ids = {p.id for p in problems}
    return len(problems) * n_samples - sum(k < n_samples and pid in ids for pid, k in done)


def unknown_ids(problems: Iterable[Problem], done: set[tuple[str, int]]) -> set[str]:
    """Problem ids in the output that the input does not have."""
    known = {p.id for p in problems}
    return {pid for pid, _ in done if pid not in known}


def build_spec(opts: InferOptions, model: str, base_urls: list[str]) -> RunSpec:
    """The run spec of these options, the servers as the client shows them (no credentials)."""
    with Path(opts.input).open("rb") as handle:
        input_sha256 = hashlib.file_digest(handle, "sha256").hexdigest()
    return RunSpec(
        **opts.sampling.model_dump(),
        model=model,
        base_urls=base_urls,
        task=opts.task,
        n_samples=opts.n_samples,
        input_keys=asdict(opts.keys),
        input_file=str(Path(opts.input).resolve()),  # eval may run from another folder
        input_sha256=input_sha256,
        llmeval_version=__version__,
    )


def run_infer(opts: InferOptions) -> int:
    """Run `infer`; return the exit code (typed errors propagate to the CLI)."""
    problems = load_problems(opts.input, opts.keys)
    output = Path(opts.output)
    spec_path(output)  # a spec that is a link out of its folder: refused before any request
    make_folder(output.parent)
    with JsonlAppender(output, exclusive=True) as appender:  # a second infer is refused
        done = done_keys(output)
        extra = unknown_ids(problems, done)
        if extra:
            log.warning(
                "%s holds %d problem ids that %s lacks (kept as they are), e.g. %s",
                output,
                len(extra),
                opts.input,
                sorted(extra)[0],
            )
        if len(problems) * opts.n_samples > MANY:
            log.warning(
                "%d problems x --n-samples %d = %d samples: if that is a typo, stop with Ctrl-C",
                len(problems),
                opts.n_samples,
                len(problems) * opts.n_samples,
            )
        return asyncio.run(_run(opts, problems, appender, done))


async def _run(
    opts: InferOptions, problems: list[Problem], appender: JsonlAppender, done: set[tuple[str, int]]
) -> int:
    output = appender.path
    tally = Tally(total=count_missing(problems, opts.n_samples, done))
    jobs = plan(problems, opts.n_samples, done, opts.sampling.seed)
    async with ChatClient(opts.client) as client:
        model = await client.resolve_model(opts.model)
        spec = build_spec(opts, model, [ep.url for ep in client.endpoints])
        check_spec(output, spec, force=opts.force, has_output=bool(done))
        total = len(problems) * opts.n_samples
        log.info(
            "%d samples to request (%d of %d already in %s), %d workers, model %s",
            tally.total,
            total - tally.total,
            total,
            output,
            opts.client.max_workers,
            model,
        )
        if not tally.total:
            print_summary(tally, output, 0.0)
            return EXIT_OK
        elapsed, cpu = stopwatch(), stopwatch(time.process_time)

        def info() -> str:
            return counters(tally, client.in_flight, client.retries, elapsed(), cpu())

        shown = asyncio.create_task(
            show_progress(tally, info, opts.progress, opts.progress_interval)
        )

        def write(line: bytes) -> None:  # the spec and a torn tail wait for the first line
            if not tally.written:
                write_json_atomic(spec_path(output), spec)
            appender.write_raw(line)

        try:
            await run_jobs(opts, model, jobs, problems, client, write, tally)
        finally:
            shown.cancel()
            await asyncio.gather(shown, return_exceptions=True)
        seconds = elapsed()
        print_summary(tally, output, seconds, client_bound_hint(cpu(), seconds, opts.client.stream))
    if tally.fatal:
        raise ServerError(tally.fatal)
    if tally.interrupted:
        return EXIT_INTERRUPTED
    if tally.context_length:
        raise LlmevalError(
            f"{tally.context_length} samples were not written: the server refused them for "
            f"context length (its context cannot hold the prompt plus --max-tokens "
            f"{opts.sampling.max_tokens}: {tally.context_error}); lower --max-tokens (with "
            "--force) or give the server a longer context, then rerun",
            exit_code=EXIT_INCOMPLETE,
        )
    return EXIT_INCOMPLETE if tally.failed or tally.written < tally.total else EXIT_OK
