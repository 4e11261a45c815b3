"""The `eval` stage: read generation files, judge each sample (cache first, then the worker
pool for the distinct misses), and fold the verdicts into per-task scores."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from llmeval import __version__
from llmeval.evaluate.files import discover
from llmeval.evaluate.inputs import InputFile, read_input
from llmeval.evaluate.scoring import task_score
from llmeval.records import CacheStats, ScoreReport, Verdict
from llmeval.verify.cache import VerdictCache, cache_path_for
from llmeval.verify.policy import (
    POLICY,
    choice_status,
    exact_status,
    verdict_key,
    verifier_id,
)
from llmeval.verify.pool import (
    DEFAULT_MEMORY_MB,
    WORKER_DIED,
    VerifyPool,
    VerifyResult,
    VerifyTask,
    prestart,
)

# progress(verified, cached, remaining): samples judged by verifying now, judged without
# verifying (cache, no answer, letters), and still waiting.
ProgressFn = Callable[[int, int, int], None]
DEFAULT_TIMEOUT_S = 20.0


@dataclass(frozen=True)
class EvalOptions:
    """What `llmeval eval` was asked to do."""

    paths: list[str]
    task: str | None = None
    cache: Path | None = None
    use_cache: bool = True
    workers: int = 1
    timeout_s: float = DEFAULT_TIMEOUT_S
    memory_mb: int | None = DEFAULT_MEMORY_MB
    answer_key: str = "answer"
    response_key: str = "gen"


@dataclass
class EvalResult:
    """The files read, each sample's status (parallel to `files[i].samples`), the scores."""

    files: list[InputFile]
    statuses: list[list[str]]
    report: ScoreReport


@dataclass
class _Pending:
    """Distinct pairs to verify, the cache files wanting each, and samples waiting on each."""

    tasks: dict[str, VerifyTask] = field(default_factory=dict)
    wanted_by: dict[str, list[Path]] = field(default_factory=dict)
    samples: dict[str, int] = field(default_factory=dict)


def read_all(options: EvalOptions, paths: list[Path]) -> list[InputFile]:
    """Read every input file, several at once."""
    keys = (options.task, options.answer_key, options.response_key)
    if len(paths) == 1:
        return [read_input(paths[0], *keys)]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(4, len(paths))) as pool:
        reads = [pool.submit(read_input, p, *keys) for p in paths]
        return [r.result() for r in reads]


def _cache_paths(options: EvalOptions, files: list[InputFile]) -> dict[Path, Path]:
    """The cache file of each input file (one shared file with --cache)."""
    if not options.use_cache:
        return {}
    return {f.path: options.cache or cache_path_for(f.path) for f in files}


def _likely_cold(options: EvalOptions, paths: list[Path]) -> bool:
    """Whether verification will probably be needed (no cache yet): then the verifier boots
    while the files are read. With a cache, new samples mostly repeat known pairs, so it
    boots only if something is left. A guess; never a verdict."""
    if not options.use_cache:
        return True
    return any(not (options.cache or cache_path_for(path)).exists() for path in paths)


def run_eval(options: EvalOptions, progress: ProgressFn | None = None) -> EvalResult:
    """Judge every sample of every file and score each file."""
    paths = discover(options.paths)
    if _likely_cold(options, paths):
        prestart()
    files = read_all(options, paths)
    cache_of = _cache_paths(options, files)
    cache = VerdictCache(sorted(set(cache_of.values())), options.timeout_s)
    stats = CacheStats.model_construct(files=[str(p) for p in sorted(set(cache_of.values()))])
    pending = _Pending()
    keys: list[list[str | None]] = []
    statuses: list[list[str]] = []
    for source in files:
        file_keys, file_statuses = _judge_known(source, cache, pending, cache_of.get(source.path))
        keys.append(file_keys)
        statuses.append(file_statuses)
    stats.hits = len({k for ks in keys for k in ks if k and k not in pending.tasks})
    waiting = sum(pending.samples.values())
    done = {"verified": 0, "cached": sum(len(s) for s in statuses) - waiting}
    if progress:
        progress(0, done["cached"], waiting)

    def on_result(result: VerifyResult) -> None:
        task = pending.tasks[result.key]
        verdict = Verdict(
            key=result.key,
            status=result.status,  # type: ignore[arg-type]
            pred=task.answer,
            gold=task.gold,
            detail=result.detail,
            timeout_s=options.timeout_s if result.status == "timeout" else None,
        )
        # a crashed worker may be the machine's fault (OOM killer): remembered, not cached
        crashed = result.status == "error" and result.detail == WORKER_DIED
        cache.add(verdict, [] if crashed else pending.wanted_by[result.key], new=True)
        stats.new += 1
        stats.timeouts += result.status == "timeout"
        done["verified"] += pending.samples[result.key]
        if progress:
            progress(done["verified"], done["cached"], waiting - done["verified"])

    try:
        if pending.tasks:
            pool = VerifyPool(options.workers, options.timeout_s, options.memory_mb)
            pool.run(pending.tasks.values(), on_result)
        cache.mark_current()
    finally:
        cache.close()
    for file_keys, file_statuses in zip(keys, statuses, strict=True):
        for i, key in enumerate(file_keys):
            if key is not None and not file_statuses[i]:
                file_statuses[i] = cache.verdicts[key].status
    scores = [task_score(f, s) for f, s in zip(files, statuses, strict=True)]
    kinds = sorted({f.task.kind for f in files})
    report = ScoreReport.model_construct(
        tasks=scores,
        verifier="; ".join(verifier_id(k) for k in kinds),  # type: ignore[arg-type]
        policy=POLICY,
        cache=stats,
        llmeval_version=__version__,
    )
    return EvalResult(files, statuses, report)


def _judge_known(
    source: InputFile, cache: VerdictCache, pending: _Pending, cache_file: Path | None
) -> tuple[list[str | None], list[str]]:
    """Each sample's cache key and its status where known without verifying ("" = pending)."""
    keys: list[str | None] = []
    statuses: list[str] = []
    kind = source.task.kind
    pairs: dict[tuple[str, str], tuple[str | None, str]] = {}  # (gold, pred) -> (quick, key)
    for sample in source.samples:
        if sample.pred is None:
            keys.append(None)
            statuses.append("no_answer")
            continue
        pair = (sample.gold, sample.pred)
        known = pairs.get(pair)
        if known is None:
            known = pairs[pair] = _quick(kind, *pair)
        quick, key = known
        if quick is not None:
            keys.append(None)
            statuses.append(quick)
            continue
        keys.append(key)
        hit = None if key in pending.tasks else cache.get(key)
        statuses.append(hit.status if hit else "")
        if hit is not None and cache_file is not None:
            cache.add(hit, [cache_file])  # a no-op unless this file's cache lacks it
        if hit is None:
            if key not in pending.tasks:
                pending.tasks[key] = VerifyTask(key, kind, sample.gold, sample.pred)
                pending.wanted_by[key] = []
                pending.samples[key] = 0
            pending.samples[key] += 1
            if cache_file and cache_file not in pending.wanted_by[key]:
                pending.wanted_by[key].append(cache_file)
    return keys, statuses


def _quick(kind: str, gold: str, pred: str) -> tuple[str | None, str]:
    """A pair's status when known without verifying (letters, exact rationals), else its key."""
    quick = choice_status(gold, pred) if kind == "choice" else exact_status(gold, pred)
    return quick, "" if quick is not None else verdict_key(kind, gold, pred)  # type: ignore[arg-type]
