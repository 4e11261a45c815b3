"""`infer`: plan the missing (problem, sample, seed) triples (pure) and run them.

Order: read the input, lock the file written (the output, or a shard's file), scan what every
file of the run holds, check the run specs, ask the server, then append; the spec is written
and a torn tail cut only before the first append.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Awaitable, Iterable, Iterator
from pathlib import Path

from llmeval import __version__
from llmeval.client.chat_client import ChatClient
from llmeval.errors import (
    EXIT_INCOMPLETE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    LlmevalError,
    ServerError,
    UsageError,
)
from llmeval.files import file_sha256, make_folder, write_json_atomic
from llmeval.infer.options import InferOptions
from llmeval.infer.resume import (
    ResumeScan,
    check_still_one_run,
    present,
    scan_run,
    spec_to_write,
    writable_spec,
)
from llmeval.infer.tally import (
    Tally,
    client_bound_hint,
    counters,
    print_run_line,
    print_summary,
    show_progress,
    stopwatch,
)
from llmeval.infer.tools import tool_loop
from llmeval.infer.workers import Job, RecordMaker, run_jobs
from llmeval.jsonl import JsonlAppender
from llmeval.problems import load_problems
from llmeval.records import Problem, RunSpec
from llmeval.runs.layout import run_output, shard_of
from llmeval.runs.pairs import Pair, Shard
from llmeval.runs.spec import settings_of

log = logging.getLogger("llmeval")

MANY = 1_000_000  # samples in one run past which a warning asks whether that is a typo


def sample_seed(base_seed: int, problem_id: str, sample_idx: int) -> int:
    """The seed of one sample: first 4 bytes of sha256(base, id, idx), in [0, 2**31)."""
    key = f"{base_seed}\0{problem_id}\0{sample_idx}".encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.sha256(key).digest()[:4], "big") & 0x7FFFFFFF


def plan(
    problems: list[Problem],
    n_samples: int,
    done: set[Pair],
    base_seed: int,
    shard: Shard | None = None,
) -> Iterator[Job]:
    """The samples still missing (of `shard` only, when given), round by round: sample 0 of
    every problem, then sample 1 of every problem, ..., so that a run stopped or scored early
    (`eval --follow`) holds whole rounds, not the first problems' samples alone. Made as they
    are asked for: a huge --n-samples costs nothing up front. A sample's seed is the same
    whatever the shard or the order."""
    return (
        Job(i, k, sample_seed(base_seed, p.id, k))
        for k in range(n_samples)
        for i, p in enumerate(problems)
        if (p.id, k) not in done and (shard is None or shard.owns(p.id, k))
    )


def count_missing(
    problems: list[Problem], n_samples: int, done: set[Pair], shard: Shard | None = None
) -> int:
    """How many samples `plan` will yield."""
    if shard is not None:  # (a hash per pair)
        owned = ((p.id, k) for p in problems for k in range(n_samples) if shard.owns(p.id, k))
        return sum(pair not in done for pair in owned)
    ids = {p.id for p in problems}
    return len(problems) * n_samples - sum(k < n_samples and pid in ids for pid, k in done)


def unknown_ids(problems: Iterable[Problem], done: set[Pair]) -> set[str]:
    """Problem ids in the output that the input does not have."""
    known = {p.id for p in problems}
    return {pid for pid, _ in done if pid not in known}


def build_spec(opts: InferOptions, model: str, base_urls: list[str]) -> RunSpec:
    """The run spec of these options, the servers as the client shows them (no credentials)."""
    input_sha256 = file_sha256(opts.input)
    return RunSpec(
        **opts.sampling.model_dump(),
        model=model,
        base_urls=base_urls,
        task=opts.task,
        n_samples=opts.n_samples,
        input_keys=opts.keys.model_dump(),
        input_file=str(Path(opts.input).resolve()),  # eval may run from another folder
        input_sha256=input_sha256,
        llmeval_version=__version__,
        shard=str(opts.shard) if opts.shard else None,
        tools=opts.tools,
        model_date=opts.model_date,
    )


def run_infer(opts: InferOptions) -> int:
    """Run `infer`; return the exit code (typed errors propagate to the CLI)."""
    problems = load_problems(opts.input, opts.keys)
    output, own = Path(opts.output), Path(opts.out_file)
    if shard_of(output):
        raise UsageError(
            f"--output {output} is a shard's file: give the run's output "
            f"({run_output(output)}) and --shard {shard_of(output)}"
        )
    if opts.shard and not output.name.endswith(".jsonl"):
        raise UsageError(
            f"--output {output} with --shard: name it *.jsonl (its shards go beside it in "
            f"<name>.shards/, and eval reads the file and that folder as one run)"
        )
    writable_spec(own)  # a spec that is a link out of its folder: refused before any request
    make_folder(own.parent)
    with JsonlAppender(own, exclusive=True) as appender:  # a second infer is refused
        scan = scan_run(output, own, opts.shard)
        extra = unknown_ids(problems, scan.done)
        if extra:
            log.warning(
                "%s holds %d problem ids that %s lacks (kept as they are), e.g. %s",
                output if len(scan.run.files) == 1 else f"the run {output}",
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
        n, shard = opts.n_samples, opts.shard
        if scan.done and not count_missing(problems, n, scan.done, shard):
            _nothing_to_do(opts, problems, scan)
            return EXIT_OK
        return asyncio.run(_run(opts, problems, appender, scan))


def _nothing_to_do(opts: InferOptions, problems: list[Problem], scan: ResumeScan) -> None:
    """Say that every sample is there, asking no server; a run with other settings is refused
    (or, with --force, continued) as on any resume, and the own file's spec records the n
    asked for (a run resumed at a smaller n plans that n, in infer and in eval alike)."""
    n, shard = opts.n_samples, opts.shard
    models = [file.spec.model for file in scan.specs if file.spec is not None]
    if opts.model or models:
        spec = spec_to_write(scan, build_spec(opts, opts.model or models[0], []), force=opts.force)
        own = next((file.spec for file in scan.specs if file.path == scan.own), None)
        if scan.own_rows and own is not None:
            kept = spec.model_copy(update={"server": own.server, "base_urls": own.base_urls})
            if kept != own:
                write_json_atomic(writable_spec(scan.own), kept)
    if shard:
        what = f"all {count_missing(problems, n, set(), shard)} samples of shard {shard}"
    else:
        what = f"all {len(problems) * n} samples ({len(problems)} problems x {n})"
    print(f"infer: nothing to do: {what} are already in {scan.where}", flush=True)


def start_line(opts: InferOptions, scan: ResumeScan, missing: int, owned: int, model: str) -> str:
    """What the run is about to do: the samples to request, those already in the run's files
    (of this shard's, and where the shard came from), the file written."""
    where = scan.where
    what = f"{missing} samples to request ({owned - missing} of {owned} already in {where})"
    if opts.shard:
        what = (
            f"shard {opts.shard} (from {opts.shard_source}): {missing} samples to request "
            f"({owned - missing} of its {owned} already in {where}), writing {scan.own}"
        )
    return f"{what}, {opts.client.max_workers} workers, model {model}"


async def _run(
    opts: InferOptions, problems: list[Problem], appender: JsonlAppender, scan: ResumeScan
) -> int:
    n, shard = opts.n_samples, opts.shard
    tally = Tally(total=count_missing(problems, n, scan.done, shard))
    owned = count_missing(problems, n, set(), shard) if shard else len(problems) * n
    async with ChatClient(opts.client) as client:
        model = await client.resolve_model(opts.model)
        spec = build_spec(opts, model, [ep.url for ep in client.endpoints])
        spec = spec_to_write(scan, spec, force=opts.force)
        log.info("%s", start_line(opts, scan, tally.total, owned, model))
        if tally.total:
            server = await client.identity(model)
            shown = server if server.model_dump(exclude_none=True) else None
            spec_file = writable_spec(scan.own)
            had_spec = spec_file.exists()
            # written before the first request: a shard started later sees these settings
            write_json_atomic(spec_file, spec.model_copy(update={"server": shown}))

            def write(line: bytes) -> None:  # the fingerprint and a torn tail: at the first
                if not tally.written:
                    check_still_one_run(scan, spec)  # (a shard started at the same moment)
                    info = server.model_copy(update={"system_fingerprint": client.fingerprint})
                    shown = info if info.model_dump(exclude_none=True) else None
                    write_json_atomic(spec_file, spec.model_copy(update={"server": shown}))
                appender.write_raw(line)

            jobs = plan(problems, n, scan.done, opts.sampling.seed, shard)
            records = RecordMaker(model, opts.sampling, problems, opts.client.stream, opts.task,
                                  settings_of(spec).id, opts.response_key)  # fmt: skip
            try:
                with tool_loop(opts, client, model, scan.own) as tools:
                    if tools:
                        spec = spec.model_copy(update={"sandbox": tools.sandbox.info})
                    work = run_jobs(jobs, records, client, write, tally, tools)
                    await _with_progress(opts, tally, client, work)
            finally:
                if not tally.written and not scan.own_rows and not had_spec:
                    spec_file.unlink(missing_ok=True)  # (the empty file goes too: nothing left)
        else:
            print_summary(tally, scan.own, 0.0)
    if shard or len(scan.run.files) > 1:
        pairs, files = present(scan.run.output)
        whole = len(problems) * n - count_missing(problems, n, pairs)
        mine = owned - count_missing(problems, n, pairs, shard) if shard else None
        print_run_line(scan.run.output, whole, len(problems) * n, files, shard, mine, owned)
    return _outcome(opts, tally)


async def _with_progress(
    opts: InferOptions, tally: Tally, client: ChatClient, work: Awaitable[None]
) -> None:
    """Await `work` (the run's jobs) under the progress display, then print the summary."""
    elapsed, cpu = stopwatch(), stopwatch(time.process_time)

    def info() -> str:
        return counters(tally, client.in_flight, client.retries, elapsed(), cpu())

    shown = asyncio.create_task(show_progress(tally, info, opts.progress, opts.progress_interval))
    try:
        await work
    finally:
        shown.cancel()
        await asyncio.gather(shown, return_exceptions=True)
    seconds = elapsed()
    hint = client_bound_hint(cpu(), seconds, opts.client.stream)
    print_summary(tally, Path(opts.out_file), seconds, hint)


def _outcome(opts: InferOptions, tally: Tally) -> int:
    """The exit code of a run that did what it could; a typed error where one is due."""
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
