"""The `eval` stage: read generation files as runs (a file, or a run's shards), verify each
sample under both policies (cache first, then the worker pool for the distinct misses), ask the
judge about the rules' misses where one is given (`judged.py`), and fold the verdicts into
per-run scores."""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from llmeval import __version__
from llmeval.evaluate.discover import discover
from llmeval.evaluate.judged import Wanting, judge_files, judge_score
from llmeval.evaluate.options import EvalOptions
from llmeval.evaluate.reading import InputRun, group_runs, open_run, read_run
from llmeval.evaluate.reference import apply_reference
from llmeval.evaluate.scoring import accuracy, task_score
from llmeval.evaluate.skythought import compare_verdicts
from llmeval.evaluate.unchanged import comparable, same_texts
from llmeval.evaluate.verdict_cache import VerdictCache
from llmeval.records import CacheStats, ScoreReport, TaskScore, Verdict
from llmeval.verify.pool import VerifyPool, prestart
from llmeval.verify.queue import VerifyResult, VerifyTask
from llmeval.verify.verifier import (
    GOLD_UNPARSED,
    POLICIES,
    Policy,
    quick_status,
    stale_verifier,
    verdict_key,
    verifier_id,
)

if TYPE_CHECKING:
    from llmeval.judge.ask import JudgeOptions

log = logging.getLogger("llmeval")
# progress(verified, cached, remaining): samples verified now, known without
# verifying (cache, no answer, letters), and still waiting.
ProgressFn = Callable[[int, int, int], None]
Comparison = tuple[str, str, str]  # (answer kind, gold, extracted answer): one verification
_UNPARSED = "%s: the verifier cannot read the gold answer of %d problems (compared as text): %s"
_UNGRADED = "%s: %d problems have no gold answer and are not graded: %s"


@dataclass
class EvalResult:
    """The runs read (each sample with its statuses and judge verdict) and their scores."""

    runs: list[InputRun]
    report: ScoreReport


@dataclass
class _Verdicts:
    """Verdicts known so far per distinct pair and policy; the pairs left to verify, with the
    cache files wanting their verdicts and the samples waiting on them."""

    known: dict[Comparison, dict[str, Verdict]] = field(default_factory=dict)
    tasks: dict[Comparison, VerifyTask] = field(default_factory=dict)
    wanted_by: dict[Comparison, set[Path]] = field(default_factory=dict)
    waiting: Counter[Comparison] = field(default_factory=Counter)
    hits: int = 0


def _collect(runs: list[InputRun], cache: VerdictCache, wanting: Wanting) -> _Verdicts:
    """Every distinct pair the samples need: decided by a quick rule or from the cache, else
    queued for the verifier. A sample needs its lenient answer's pair, and its strict one's
    when that differs (counted once, on the first). Each file's verdicts go to the cache files
    `wanting` them."""
    verdicts = _Verdicts()
    files = [(run.task.kind, path, samples) for run in runs for path, samples in run.by_file()]
    for kind, path, samples in files:
        wants = wanting.get(path, [])
        pairs: Counter[Comparison] = Counter()
        for s in samples:
            lenient = s.answer_for("lenient")
            if s.gold and lenient is not None:
                pairs[(kind, s.gold, lenient)] += 1
                if s.pred is not None and s.pred != lenient:
                    pairs[(kind, s.gold, s.pred)] += 0
        for pair, count in pairs.items():
            if pair not in verdicts.known and pair not in verdicts.tasks:
                _look_up(verdicts, pair, cache)
            if pair in verdicts.tasks:
                verdicts.wanted_by[pair].update(wants)
                verdicts.waiting[pair] += count
                continue
            for verdict in verdicts.known[pair].values():
                if verdict.key:  # a no-op unless this file's cache lacks it
                    cache.add(verdict, wants)
    return verdicts


# The verdicts of a quick rule (an exact match, no answer): one shared record per status
_QUICK: dict[str, dict[str, Verdict]] = {
    status: {p: Verdict.model_construct(key="", status=status) for p in POLICIES}
    for status in ("correct", "incorrect", "no_answer", "timeout", "error")
}


def _look_up(verdicts: _Verdicts, pair: Comparison, cache: VerdictCache) -> None:
    """Decide a new pair by a quick rule or from the cache, else queue it for the verifier."""
    quick = quick_status(*pair)
    if quick is not None:
        verdicts.known[pair] = _QUICK[quick]
        return
    hits = {p: cache.get(verdict_key(*pair, p)) for p in POLICIES}
    if None in hits.values():
        verdicts.tasks[pair] = VerifyTask(verdict_key(*pair, "strict"), *pair)
        verdicts.wanted_by[pair] = set()
    else:
        verdicts.known[pair] = hits  # type: ignore[assignment]
        verdicts.hits += 1


def run_eval(
    options: EvalOptions, progress: ProgressFn | None = None, judge: JudgeOptions | None = None
) -> EvalResult:
    """Verify every sample of every run under both policies (and with `judge`, ask it about
    the rules' misses) and score each run."""
    groups = group_runs(discover(options.paths, options.cache))
    wanting: Wanting = {}  # generation file -> the cache files wanting its verdicts
    for path in (p for files in groups for p in files.files):
        wanting[path] = [c] if (c := options.cache_file(path)) else []
    caches = sorted({c for files in wanting.values() for c in files})
    if not options.use_cache or not all(c.exists() for c in caches):
        prestart()  # probably cold: the verifier boots while the files are read
    runs = [open_run(files, options.task, options.keys) for files in groups]
    compared = comparable(runs)  # (a digest of every text only where another run may share it)
    for i, source in enumerate(runs):
        read_run(source, options.keep_texts, options.model, digests=i in compared)
    for source in runs:
        apply_reference(source)
        _warn_golds_not_letters(source)
    cache = VerdictCache(caches, options.timeout, stale_verifier)
    try:
        verdicts = _collect(runs, cache, wanting)
        pool = partial(VerifyPool, options.workers, options.timeout, options.memory_mb)
        _verify(verdicts, cache, pool, sum(len(r.samples) for r in runs), progress)
        for source in runs:
            _set_statuses(source, verdicts)
        if judge is not None:
            judge_files(runs, judge, options.policy, cache, wanting)
    finally:
        cache.close()
    scores = [_score(source, verdicts, options.policy, judge) for source in runs]
    for source, score in zip(runs, scores, strict=True):  # the run's own date, else the flag's
        dates = (part.spec.model_date for part in source.parts if part.spec)
        score.model_date = next((d for d in dates if d), None) or options.model_date
    for i, text in same_texts(runs).items():
        scores[i].same_texts = text
        log.warning("%s: %s", runs[i].where, text)
    stats = CacheStats.model_construct(
        files=[str(c) for c in caches],
        hits=verdicts.hits,
        new=len(verdicts.tasks),
        timeouts=sum(verdicts.known[p]["strict"].status == "timeout" for p in verdicts.tasks),
        foreign=cache.foreign(),
    )
    kinds = sorted({r.task.kind for r in runs})
    report = ScoreReport.model_construct(
        tasks=scores,
        verifier="; ".join(verifier_id(k, options.policy) for k in kinds),
        policy=options.policy,
        cache=stats,
        llmeval_version=__version__,
    )
    return EvalResult(runs, report)


def _score(
    source: InputRun, verdicts: _Verdicts, policy: Policy, judge: JudgeOptions | None
) -> TaskScore:
    """A verified run's figures under `policy` (and the other's accuracy, the judge's), with a
    warning for each thing they cannot show: golds unparsed, problems without a gold, mixed
    settings."""
    score = task_score(source, policy)
    if judge is not None:
        score.judge = judge_score(judge.model, source, policy)
    score.policies = {p: accuracy(source, p) for p in POLICIES}
    source.gold_unparsed = _gold_unparsed(source, verdicts)
    score.n_gold_unparsed = _warn(source, source.gold_unparsed, _UNPARSED)
    _warn(source, {s.problem_id for s in source.samples if not s.gold}, _UNGRADED)
    if score.mixed_settings:
        log.warning("%s: mixed settings: %s", source.where, score.mixed_settings)
    compare_verdicts(source.where, source.samples, policy)  # a harness's own, where it gave them
    return score


def _verify(
    verdicts: _Verdicts,
    cache: VerdictCache,
    pool: Callable[[], VerifyPool],
    samples: int,
    progress: ProgressFn | None,
) -> None:
    """Verify the pending pairs in worker processes (`pool`, made only when some are); each
    verdict is cached as it comes."""
    by_key = {task.key: pair for pair, task in verdicts.tasks.items()}
    waiting = sum(verdicts.waiting.values())
    cached, verified = samples - waiting, 0
    if progress:
        progress(0, cached, waiting)

    def on_result(result: VerifyResult) -> None:
        nonlocal verified
        pair = by_key[result.key]
        timeout_s = cache.timeout_s if result.status == "timeout" else None
        statuses = (result.status, result.lenient or result.status)
        verdicts.known[pair] = {
            policy: Verdict(
                key=verdict_key(*pair, policy),
                status=status,
                pred=pair[2],
                gold=pair[1],
                detail=result.detail,
                timeout_s=timeout_s,
                verifier=verifier_id(pair[0], policy),
            )
            for policy, status in zip(POLICIES, statuses, strict=True)
        }
        # a worker killed twice (OOM killer) or a busy machine: remembered, not cached
        for verdict in verdicts.known[pair].values():
            cache.add(verdict, list(verdicts.wanted_by[pair]) if result.final else [], new=True)
        verified += verdicts.waiting[pair]
        if progress:
            progress(verified, cached, waiting - verified)

    if verdicts.tasks:
        pool().run(verdicts.tasks.values(), on_result)


def _set_statuses(source: InputRun, verdicts: _Verdicts) -> None:
    """Each sample's status under each policy: its verdict, `no_answer`, or `ungraded`."""
    kind = source.task.kind
    for sample in source.samples:
        for policy in POLICIES:
            answer = sample.answer_for(policy)
            if not sample.gold:
                status = "ungraded"
            elif answer is None:
                status = "no_answer"
            else:
                status = verdicts.known[(kind, sample.gold, answer)][policy].status
            sample.status[policy] = status


def _gold_unparsed(source: InputRun, verdicts: _Verdicts) -> set[str]:
    """The problems whose gold the verifier could not read (compared as text alone)."""
    kind = source.task.kind
    pairs = ((s, (kind, s.gold, s.answer_for("lenient") or "")) for s in source.samples)
    found = ((s, verdicts.known.get(pair)) for s, pair in pairs)
    return {s.problem_id for s, v in found if v and v["strict"].detail == GOLD_UNPARSED}


_LETTER = re.compile(r"\(?[A-Ja-j]\)?")


def _warn_golds_not_letters(source: InputRun) -> None:
    """A choice task grades option letters: golds that are not letters (math answers scored
    under --task gpqa_diamond) are named, since every answer to them is wrong."""
    if source.task.kind != "choice":
        return
    golds = {s.problem_id: s.gold for s in source.samples if s.gold}
    odd = sorted(pid for pid, gold in golds.items() if not _LETTER.fullmatch(gold.strip()))
    if odd:
        log.warning(
            "%s: --task %s grades option letters, but %d of %d problems have a gold that is no "
            "letter (%s: %r): every answer to them is wrong; is the task right? (math: boxed "
            "answers checked as math)",
            source.where,
            source.task.name,
            len(odd),
            len(golds),
            odd[0],
            golds[odd[0]],
        )


def _warn(source: InputRun, problem_ids: set[str], message: str) -> int:
    """Log `message` (the run, the count, the first 20 problems) if there are any; the count."""
    ids = sorted(problem_ids)
    if ids:
        log.warning(message, source.where, len(ids), ", ".join(ids[:20]))
    return len(ids)
