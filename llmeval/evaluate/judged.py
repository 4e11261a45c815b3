"""The judge step of `eval`: the samples the rules judged `incorrect` (never truncated ones)
go to the LLM judge, one question per distinct (problem, gold, answer); its verdicts live in
the verdict cache beside the rules' and are appended as they arrive."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from llmeval.evaluate.inputs import InputFile
from llmeval.evaluate.metrics import Outcome, group_by_problem, summarize
from llmeval.judge.prompt import judge_key
from llmeval.records import JudgeScore, Verdict
from llmeval.verify.cache import VerdictCache

if TYPE_CHECKING:
    from llmeval.evaluate.run import EvalOptions

log = logging.getLogger("llmeval")
_YES_NO = {"correct": "yes", "incorrect": "no"}


@dataclass
class Judged:
    """Per file, sample index -> (the judge's "yes"/"no" or None, its reply)."""

    samples: list[dict[int, tuple[str | None, str]]] = field(default_factory=list)


def judge_files(
    files: list[InputFile], statuses: list[list[str]], options: EvalOptions, cache: VerdictCache
) -> Judged:
    """Ask the judge (`options.judge`) about every rule-`incorrect`, untruncated sample the
    cache has no verdict for; return every judged sample's verdict."""
    from llmeval.judge.ask import Question, Ruling, ask_all

    judge = options.judge
    found: dict[str, tuple[str | None, str]] = {}  # question key -> (yes/no or None, reply)
    questions: dict[str, Question] = {}
    wanted: dict[str, set[Path]] = {}  # question key -> the cache files wanting its verdict
    keys: list[dict[int, str]] = []  # per file: sample index -> question key
    for source, file_statuses in zip(files, statuses, strict=True):
        cache_file = options.cache_file(source.path)
        keys.append({})
        for i, (sample, status) in enumerate(zip(source.samples, file_statuses, strict=True)):
            answer = sample.answer_for(options.policy)
            if status != "incorrect" or sample.truncated or answer is None:
                continue
            problem = source.prompts.get(sample.problem_id, "")
            key = keys[-1][i] = judge_key(judge.model, problem, sample.gold, answer)
            if key not in found and key not in questions:
                hit = cache.get(key)
                if hit is None:
                    questions[key] = Question(key, problem, sample.gold, answer)
                else:
                    found[key] = (_YES_NO.get(hit.status), hit.detail or "")
            if cache_file is not None:
                wanted.setdefault(key, set()).add(cache_file)
    errors: list[str] = []

    def on_reply(reply: Ruling) -> None:
        if reply.error is not None:  # no verdict, and nothing cached: asked again next time
            found[reply.key] = (None, reply.text or reply.error)
            if reply.error and len(errors) < 3:
                errors.append(reply.error)
            return
        question = questions[reply.key]
        status = {"yes": "correct", "no": "incorrect"}.get(reply.verdict or "", "no_answer")
        detail = reply.text[-2000:]
        found[reply.key] = (_YES_NO.get(status), detail)
        verdict = Verdict(
            key=reply.key, status=status, pred=question.answer, gold=question.gold, detail=detail
        )
        cache.add(verdict, list(wanted.get(reply.key, ())), new=True)

    if questions:
        log.info("judge: asking %s about %d answers", judge.model, len(questions))
        ask_all(questions.values(), judge, on_reply)
    for error in errors:
        log.warning("judge: %s (the rules' verdict stands)", error)
    return Judged([{i: found.get(key, (None, "")) for i, key in fk.items()} for fk in keys])


def judge_score(
    model: str, source: InputFile, statuses: list[str], judged: dict[int, tuple[str | None, str]]
) -> JudgeScore:
    """A task's figures under the judge: questions asked, overturned and unparsed (distinct
    per problem and answer), and avg@n and pass@k with the judge's yeses counted correct."""
    outs = []
    questions: dict[tuple[str, str | None], str | None] = {}
    for i, (sample, status) in enumerate(zip(source.samples, statuses, strict=True)):
        if status == "ungraded":
            continue
        verdict = None
        if i in judged:
            verdict = questions[(sample.problem_id, sample.answer)] = judged[i][0]
        judged_status = "correct" if verdict == "yes" else status
        outs.append(Outcome(sample.problem_id, sample.sample_idx, judged_status, sample.truncated))
    summary = summarize(group_by_problem(outs))
    return JudgeScore(
        model=model,
        asked=len(questions),
        overturned=sum(v == "yes" for v in questions.values()),
        unparsed=sum(v is None for v in questions.values()),
        accuracy=summary.accuracy,
        pass_at_k=summary.pass_at_k,
    )
