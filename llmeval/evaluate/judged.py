"""The judge step of `eval`: the samples the rules judged `incorrect` (never truncated ones)
go to the LLM judge, one question per distinct (problem, gold, answer); its verdicts live in
the verdict cache beside the rules' and are appended as they arrive."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llmeval.evaluate.inputs import InputFile
from llmeval.evaluate.metrics import Outcome, summarize
from llmeval.judge.prompt import judge_key
from llmeval.records import JudgeScore, Verdict
from llmeval.verify.cache import VerdictCache

log = logging.getLogger("llmeval")


@dataclass
class Judged:
    """Per file, sample index -> (the judge's "yes"/"no" or None, its reply)."""

    samples: list[dict[int, tuple[str | None, str]]] = field(default_factory=list)


@dataclass
class _Asking:
    """What the cache knows per question key, what to ask, and which cache files want it."""

    known: dict[str, Verdict | None] = field(default_factory=dict)
    questions: dict[str, Any] = field(default_factory=dict)  # key -> judge.ask.Question
    wanted: dict[str, list[Path]] = field(default_factory=dict)
    keys: list[dict[int, str]] = field(default_factory=list)  # per file: sample -> key


def _questions(
    files: list[InputFile],
    answers: list[list[str | None]],
    statuses: list[list[str]],
    model: str,
    cache: VerdictCache,
    cache_files: list[Path | None],
) -> _Asking:
    """The question of every rule-`incorrect`, untruncated sample; cached verdicts looked up."""
    from llmeval.judge.ask import Question

    asking = _Asking()
    for source, file_answers, file_statuses, cache_file in zip(
        files, answers, statuses, cache_files, strict=True
    ):
        file_keys = {}
        rows = zip(source.samples, file_answers, file_statuses, strict=True)
        for i, (sample, answer, status) in enumerate(rows):
            if status != "incorrect" or sample.truncated or answer is None:
                continue
            problem = source.prompts.get(sample.problem_id, "")
            key = file_keys[i] = judge_key(model, problem, sample.gold, answer)
            if key not in asking.known:
                asking.known[key] = hit = cache.get(key)
                if hit is None:
                    asking.questions[key] = Question(key, problem, sample.gold, answer)
            if cache_file is not None and cache_file not in asking.wanted.setdefault(key, []):
                asking.wanted[key].append(cache_file)
        asking.keys.append(file_keys)
    return asking


def judge_files(
    files: list[InputFile],
    answers: list[list[str | None]],
    statuses: list[list[str]],
    options: Any,
    cache: VerdictCache,
    cache_files: list[Path | None],
) -> Judged:
    """Ask the judge (a `judge.ask.JudgeOptions`) what the cache does not know; return every
    judged sample's verdict."""
    from llmeval.judge.ask import Reply, ask_all

    asking = _questions(files, answers, statuses, options.model, cache, cache_files)
    replies: dict[str, str] = {}
    errors: list[str] = []

    def on_reply(reply: Reply) -> None:
        question = asking.questions[reply.key]
        replies[reply.key] = reply.text or (reply.error or "")
        if reply.error and len(errors) < 3:
            errors.append(reply.error)
        if reply.error is None:  # a reply, with or without a verdict: kept; errors are not
            status = {"yes": "correct", "no": "incorrect"}.get(reply.verdict or "", "no_answer")
            verdict = Verdict(
                key=reply.key, status=status,  # type: ignore[arg-type]
                pred=question.answer, gold=question.gold, detail=reply.text[-2000:],
            )  # fmt: skip
            asking.known[reply.key] = verdict
            cache.add(verdict, asking.wanted.get(reply.key, []), new=True)

    if asking.questions:
        log.info("judge: asking %s about %d answers", options.model, len(asking.questions))
        ask_all(asking.questions.values(), options, on_reply)
    for error in errors:
        log.warning("judge: %s (the rules' verdict stands)", error)
    yes_no = {"correct": "yes", "incorrect": "no"}
    judged = Judged()
    for file_keys in asking.keys:
        per_file: dict[int, tuple[str | None, str]] = {}
        for i, key in file_keys.items():
            verdict = asking.known.get(key)
            if verdict is None:
                per_file[i] = (None, replies.get(key, ""))
            else:
                per_file[i] = (yes_no.get(verdict.status), verdict.detail or "")
        judged.samples.append(per_file)
    return judged


def judge_score(
    model: str, source: InputFile, statuses: list[str], judged: dict[int, tuple[str | None, str]]
) -> JudgeScore:
    """A task's figures under the judge: questions asked, overturned and unparsed (distinct
    per problem and answer), and avg@n and pass@k with the judge's yeses counted correct."""
    groups: dict[str, list[Outcome]] = {}
    questions: dict[tuple[str, str | None], str | None] = {}
    for i, (sample, status) in enumerate(zip(source.samples, statuses, strict=True)):
        if status == "ungraded":
            continue
        verdict = judged.get(i, (None, ""))[0]
        if i in judged:
            questions[(sample.problem_id, sample.answer)] = verdict
        judged_status = "correct" if verdict == "yes" else status
        out = Outcome(sample.problem_id, sample.sample_idx, judged_status, sample.truncated)
        groups.setdefault(sample.problem_id, []).append(out)
    summary = summarize(groups)
    return JudgeScore(
        model=model,
        asked=len(questions),
        overturned=sum(v == "yes" for v in questions.values()),
        unparsed=sum(v is None for v in questions.values()),
        accuracy=summary.accuracy,
        pass_at_k=summary.pass_at_k,
    )
