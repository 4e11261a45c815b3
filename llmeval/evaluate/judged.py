"""The judge step of `eval`: the samples the rules judged `incorrect` (never truncated ones)
go to the LLM judge, one question per distinct (problem, gold, answer); its verdicts live in
the verdict cache beside the rules' and are appended as they arrive."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from llmeval.evaluate.inputs import InputFile, Sample
from llmeval.evaluate.metrics import Outcome, summarize
from llmeval.judge.prompt import judge_key
from llmeval.records import JudgeScore, Verdict
from llmeval.verify.cache import VerdictCache

log = logging.getLogger("llmeval")


@dataclass
class Judged:
    """Per file, sample index -> (the judge's "yes"/"no" or None, its reply)."""

    samples: list[dict[int, tuple[str | None, str]]] = field(default_factory=list)
    unparsed: set[str] = field(default_factory=set)  # question keys without a verdict


def judge_files(
    files: list[InputFile],
    answers: list[list[str | None]],
    statuses: list[list[str]],
    options: object,
    cache: VerdictCache,
    cache_files: list[Path | None],
) -> Judged:
    """Ask the judge what the cache does not know; return every judged sample's verdict."""
    from llmeval.judge.ask import JudgeOptions, Question, Reply, ask_all

    assert isinstance(options, JudgeOptions)
    known: dict[str, Verdict | None] = {}
    questions: dict[str, Question] = {}
    wanted: dict[str, list[Path]] = {}
    keys: list[dict[int, str]] = []
    for source, file_answers, file_statuses, cache_file in zip(
        files, answers, statuses, cache_files, strict=True
    ):
        file_keys = {}
        for i, (sample, answer, status) in enumerate(
            zip(source.samples, file_answers, file_statuses, strict=True)
        ):
            if status != "incorrect" or sample.truncated or answer is None:
                continue
            problem = source.prompts.get(sample.problem_id, "")
            key = file_keys[i] = judge_key(options.model, problem, sample.gold, answer)
            if key not in known and key not in questions:
                hit = cache.get(key)
                if hit is None:
                    questions[key] = Question(key, problem, sample.gold, answer)
                known[key] = hit
            if cache_file is not None and cache_file not in wanted.setdefault(key, []):
                wanted[key].append(cache_file)
        keys.append(file_keys)
    replies: dict[str, str] = {}
    errors: list[str] = []

    def on_reply(reply: Reply) -> None:
        question = questions[reply.key]
        replies[reply.key] = reply.text or (reply.error or "")
        if reply.error and len(errors) < 3:
            errors.append(reply.error)
        if reply.verdict is None:
            return
        verdict = Verdict(
            key=reply.key, status="correct" if reply.verdict == "yes" else "incorrect",
            pred=question.answer, gold=question.gold, detail=reply.text[-2000:],
        )  # fmt: skip
        known[reply.key] = verdict
        cache.add(verdict, wanted.get(reply.key, []), new=True)

    if questions:
        log.info("judge: asking %s about %d answers", options.model, len(questions))
        ask_all(questions.values(), options, on_reply)
    for error in errors:
        log.warning("judge: %s (the rules' verdict stands)", error)
    judged = Judged()
    for file_keys in keys:
        per_file: dict[int, tuple[str | None, str]] = {}
        for i, key in file_keys.items():
            verdict = known.get(key)
            if verdict is None:
                judged.unparsed.add(key)
                per_file[i] = (None, replies.get(key, ""))
            else:
                yes = "yes" if verdict.status == "correct" else "no"
                per_file[i] = (yes, verdict.detail or "")
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
            questions[(sample.problem_id, _answer(sample))] = verdict
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


def _answer(sample: Sample) -> str | None:
    return sample.pred if sample.pred is not None else sample.anchored
