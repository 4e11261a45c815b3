"""The `eval` stage: read generation files, judge each sample under both policies (cache first,
then the worker pool for the distinct misses), and fold the verdicts into per-task scores."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llmeval import __version__
from llmeval.evaluate.files import discover
from llmeval.evaluate.inputs import InputFile, Sample, read_input
from llmeval.evaluate.judged import Judged, judge_files, judge_score
from llmeval.evaluate.scoring import accuracy, task_score
from llmeval.records import CacheStats, ScoreReport, Verdict
from llmeval.verify.cache import VerdictCache, cache_path_for
from llmeval.verify.policy import (
    GOLD_UNPARSED,
    POLICIES,
    Policy,
    quick_status,
    verdict_key,
    verifier_id,
)
from llmeval.verify.pool import DEFAULT_MEMORY_MB, WORKER_DIED, VerifyPool, prestart
from llmeval.verify.queue import VerifyResult, VerifyTask

log = logging.getLogger("llmeval")
# progress(verified, cached, remaining): samples judged by verifying now, judged without
# verifying (cache, no answer, letters), and still waiting.
ProgressFn = Callable[[int, int, int], None]
DEFAULT_TIMEOUT_S = 20.0
Pair = tuple[str, str, str]  # (answer kind, gold, extracted answer)


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
    policy: Policy = "strict"
    judge: Any = None  # a `judge.ask.JudgeOptions`: ask an LLM judge about rule misses


@dataclass
class EvalResult:
    """The files read, each sample's status under the chosen policy (parallel to
    `files[i].samples`), and the scores."""

    files: list[InputFile]
    statuses: list[list[str]]
    report: ScoreReport
    judged: Judged | None = None  # with a judge: its verdict and reply per judged sample


@dataclass
class _Judging:
    """Verdicts known so far per distinct pair and policy, and the pairs left to verify with
    the cache files wanting them and the samples waiting on them."""

    known: dict[Pair, dict[str, Verdict]] = field(default_factory=dict)
    tasks: dict[Pair, VerifyTask] = field(default_factory=dict)
    wanted_by: dict[Pair, list[Path]] = field(default_factory=dict)
    waiting: dict[Pair, int] = field(default_factory=dict)
    hits: int = 0


def answer_for(sample: Sample, policy: Policy) -> str | None:
    """The answer a policy judges: the boxed one; under lenient, else the anchored one."""
    return sample.answer if policy == "lenient" else sample.pred


def read_all(options: EvalOptions, paths: list[Path]) -> list[InputFile]:
    """Read every input file, several at once."""
    keys = (options.task, options.answer_key, options.response_key)
    if len(paths) == 1:
        return [read_input(paths[0], *keys)]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(4, len(paths))) as pool:
        return list(pool.map(lambda p: read_input(p, *keys), paths))


def _cache_file(options: EvalOptions, path: Path) -> Path | None:
    if not options.use_cache:
        return None
    return options.cache or cache_path_for(path)


def _collect(files: list[InputFile], options: EvalOptions, cache: VerdictCache) -> _Judging:
    """Every distinct pair the samples need, judged from the cache or quickly where possible.
    A sample needs one pair: its boxed answer, else (lenient) its anchored one."""
    judging = _Judging()
    for source in files:
        cache_file = _cache_file(options, source.path)
        kind = source.task.kind
        pairs = Counter(
            (kind, s.gold, s.answer) for s in source.samples if s.gold and s.answer is not None
        )
        for pair, count in pairs.items():
            _need(judging, pair, cache, cache_file)  # type: ignore[arg-type]
            if pair in judging.tasks:
                judging.waiting[pair] += count  # type: ignore[index]
    return judging


def _need(judging: _Judging, pair: Pair, cache: VerdictCache, cache_file: Path | None) -> None:
    """Judge `pair` from a quick rule or the cache, else queue it for the verifier."""
    if pair in judging.tasks:
        if cache_file and cache_file not in judging.wanted_by[pair]:
            judging.wanted_by[pair].append(cache_file)
        return
    known = judging.known.get(pair)
    if known is None:
        quick = quick_status(*pair)
        if quick is not None:
            judging.known[pair] = {
                p: Verdict.model_construct(key="", status=quick) for p in POLICIES
            }
            return
        hits = {p: cache.get(verdict_key(*pair, p)) for p in POLICIES}
        if None in hits.values():
            judging.tasks[pair] = VerifyTask(verdict_key(*pair, "strict"), *pair)
            judging.wanted_by[pair] = [cache_file] if cache_file else []
            judging.waiting[pair] = 0
            return
        known = judging.known[pair] = hits  # type: ignore[assignment]
        judging.hits += 1
    if cache_file is not None:
        for verdict in known.values():
            if verdict.key:
                cache.add(verdict, [cache_file])  # a no-op unless this file's cache lacks it


def run_eval(options: EvalOptions, progress: ProgressFn | None = None) -> EvalResult:
    """Judge every sample of every file under both policies and score each file."""
    paths = discover(options.paths)
    caches = sorted({c for p in paths if (c := _cache_file(options, p))})
    if not options.use_cache or not all(c.exists() for c in caches):
        prestart()  # probably cold: the verifier boots while the files are read
    files = read_all(options, paths)
    cache = VerdictCache(caches, options.timeout_s)
    judged = None
    try:
        judging = _collect(files, options, cache)
        stats = CacheStats.model_construct(files=[str(c) for c in caches], hits=judging.hits)
        _verify(judging, cache, options, stats, files, progress)
        statuses = {p: [_statuses(f, judging, p) for f in files] for p in POLICIES}
        chosen = statuses[options.policy]
        if options.judge is not None:
            answers = [[answer_for(s, options.policy) for s in f.samples] for f in files]
            cache_files = [_cache_file(options, f.path) for f in files]
            judged = judge_files(files, answers, chosen, options.judge, cache, cache_files)
        cache.mark_current()
    finally:
        cache.close()
    scores = []
    for i, source in enumerate(files):
        score = task_score(source, chosen[i])
        if judged is not None:
            score.judge = judge_score(options.judge.model, source, chosen[i], judged.samples[i])
        score.policies = {p: accuracy(source, statuses[p][i]) for p in POLICIES}
        score.n_gold_unparsed = _warn_gold_unparsed(source, judging)
        if score.n_ungraded:
            ids = sorted({s.problem_id for s in source.samples if not s.gold})
            log.warning("%s: %d problems have no gold answer and are not graded: %s",
                        source.path, len(ids), ", ".join(ids[:20]))  # fmt: skip
        scores.append(score)
    kinds = sorted({f.task.kind for f in files})
    report = ScoreReport.model_construct(
        tasks=scores,
        verifier="; ".join(verifier_id(k, options.policy) for k in kinds),  # type: ignore[arg-type]
        policy=options.policy,
        cache=stats,
        llmeval_version=__version__,
    )
    return EvalResult(files, chosen, report, judged)


def _verify(
    judging: _Judging,
    cache: VerdictCache,
    options: EvalOptions,
    stats: CacheStats,
    files: list[InputFile],
    progress: ProgressFn | None,
) -> None:
    """Verify the pending pairs in worker processes; each verdict is cached as it comes."""
    by_key = {task.key: pair for pair, task in judging.tasks.items()}
    waiting = sum(judging.waiting.values())
    done = {"verified": 0, "cached": sum(len(f.samples) for f in files) - waiting}
    if progress:
        progress(0, done["cached"], waiting)

    def on_result(result: VerifyResult) -> None:
        pair = by_key[result.key]
        timeout_s = options.timeout_s if result.status == "timeout" else None
        verdicts = {}
        statuses = (result.status, result.lenient or result.status)
        for policy, status in zip(POLICIES, statuses, strict=True):
            verdicts[policy] = Verdict(
                key=verdict_key(*pair, policy), status=status,  # type: ignore[arg-type]
                pred=pair[2], gold=pair[1], detail=result.detail, timeout_s=timeout_s,
            )  # fmt: skip
        judging.known[pair] = verdicts
        # a crashed worker may be the machine's fault (OOM killer): remembered, not cached
        crashed = result.status == "error" and result.detail == WORKER_DIED
        for verdict in verdicts.values():
            cache.add(verdict, [] if crashed else judging.wanted_by[pair], new=True)
        stats.new += 1
        stats.timeouts += result.status == "timeout"
        done["verified"] += judging.waiting[pair]
        if progress:
            progress(done["verified"], done["cached"], waiting - done["verified"])

    if judging.tasks:
        pool = VerifyPool(options.workers, options.timeout_s, options.memory_mb)
        pool.run(judging.tasks.values(), on_result)


def _statuses(source: InputFile, judging: _Judging, policy: Policy) -> list[str]:
    """Each sample's status under `policy`: its verdict, `no_answer`, or `ungraded`."""
    kind, out = source.task.kind, []
    for sample in source.samples:
        answer = answer_for(sample, policy)
        if not sample.gold:
            out.append("ungraded")
        elif answer is None:
            out.append("no_answer")
        else:
            out.append(judging.known[(kind, sample.gold, answer)][policy].status)
    return out


def _warn_gold_unparsed(source: InputFile, judging: _Judging) -> int:
    """How many problems' golds the verifier could not read (judged by text alone), named."""
    kind = source.task.kind
    found = ((s, judging.known.get((kind, s.gold, s.answer or ""))) for s in source.samples)
    ids = sorted({s.problem_id for s, v in found if v and v["strict"].detail == GOLD_UNPARSED})
    if ids:
        log.warning(
            "%s: the verifier cannot read the gold answer of %d problems (compared as text): %s",
            source.path, len(ids), ", ".join(ids[:20]),
        )  # fmt: skip
    return len(ids)
