"""The judge step of `eval`: the samples the rules judged `incorrect` (never truncated ones)
go to the LLM judge, one question per distinct (problem, gold, answer); its verdicts live in
the verdict cache beside the rules' and are appended as they arrive."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from llmeval.errors import ServerError, display_url
from llmeval.evaluate.metrics import Outcome, group_by_problem, summarize
from llmeval.evaluate.reading import InputRun
from llmeval.evaluate.samples import Sample
from llmeval.evaluate.verdict_cache import VerdictCache
from llmeval.judge.prompt import JUDGE_VERSION, judge_key
from llmeval.records import JudgeScore, Verdict

if TYPE_CHECKING:
    from llmeval.judge.ask import JudgeOptions, Question, Ruling

log = logging.getLogger("llmeval")
Wanting = dict[Path, list[Path]]  # generation file -> the verdict cache files wanting its verdicts
_YES_NO = {"correct": "yes", "incorrect": "no"}


@dataclass
class _Asks:
    """The judge's work: each sample asked about with its question key, the answers known
    (question key -> yes / no / "" and the reply), the questions left to ask, and the cache
    files wanting each question's verdict."""

    asked: list[tuple[Sample, str]] = field(default_factory=list)
    found: dict[str, tuple[str, str]] = field(default_factory=dict)
    questions: dict[str, Question] = field(default_factory=dict)
    wanted: dict[str, set[Path]] = field(default_factory=dict)


def _asks(
    runs: list[InputRun], model: str, policy: str, cache: VerdictCache, wanting: Wanting
) -> _Asks:
    """Every rule-`incorrect`, untruncated sample (under `policy`) is asked about: its answer
    from the cache, else a question for `model` (one per distinct problem, gold, answer)."""
    from llmeval.judge.ask import Question  # (the HTTP client loads only when a judge is asked)

    out = _Asks()
    for source, path, samples in ((r, p, s) for r in runs for p, s in r.by_file()):
        wants = wanting.get(path, [])
        for sample in samples:
            answer = sample.answer_for(policy)
            if sample.status[policy] != "incorrect" or sample.truncated or answer is None:
                continue
            problem = source.prompts.get(sample.problem_id, "")
            key = judge_key(model, problem, sample.gold, answer)
            out.asked.append((sample, key))
            if key not in out.found and key not in out.questions:
                hit = cache.get(key)
                if hit is None:
                    out.questions[key] = Question(key, problem, sample.gold, answer)
                else:
                    out.found[key] = (_YES_NO.get(hit.status, ""), hit.detail or "")
            out.wanted.setdefault(key, set()).update(wants)
    return out


def judge_files(
    runs: list[InputRun], judge: JudgeOptions, policy: str, cache: VerdictCache, wanting: Wanting
) -> None:
    """Ask the judge about every rule-`incorrect`, untruncated sample (under `policy`) the cache
    has no verdict for; set every such sample's `judge` and `judge_reply`. Each verdict goes to
    the cache files `wanting` its file's verdicts."""
    from llmeval.judge.ask import ask_all

    asks = _asks(runs, judge.model, policy, cache, wanting)
    found, questions = asks.found, asks.questions
    errors: list[str] = []
    cached, replies = len(found), 0

    def on_reply(reply: Ruling) -> None:
        nonlocal replies
        replies += reply.replied
        if reply.error is not None:  # no verdict, and nothing cached: asked again next time
            found[reply.key] = ("", reply.text or reply.error)
            if len(errors) < 3:
                errors.append(reply.error)
            return
        question = questions[reply.key]
        status = {"yes": "correct", "no": "incorrect"}.get(reply.verdict or "", "no_answer")
        detail = reply.text[-2000:]
        found[reply.key] = (_YES_NO.get(status, ""), detail)
        verdict = Verdict(
            key=reply.key, status=status, pred=question.answer, gold=question.gold, detail=detail,
            verifier=f"judge {JUDGE_VERSION} {judge.model}",
        )  # fmt: skip
        cache.add(verdict, list(asks.wanted.get(reply.key, ())), new=True)

    if questions:
        log.info("judge: asking %s about %d answers", judge.model, len(questions))
        ask_all(questions.values(), judge, on_reply)
        if not replies and not cached:  # the judge cannot be used: its figures are the rules'
            raise ServerError(f"judge {display_url(judge.url)}: no request succeeded: {errors[0]}")
    for error in errors:
        log.warning("judge: %s (the rules' verdict stands)", error)
    for sample, key in asks.asked:
        sample.judge, sample.judge_reply = found.get(key, ("", ""))


def judge_score(model: str, source: InputRun, policy: str) -> JudgeScore:
    """A task's figures under the judge: questions asked, overturned and unparsed (distinct
    per problem and answer), and avg@n and pass@k with the judge's yeses counted correct."""
    outs = []
    questions: dict[tuple[str, str | None], str] = {}
    for sample in source.samples:
        status = sample.status[policy]
        if status == "ungraded":
            continue
        if sample.judge is not None:
            questions[(sample.problem_id, sample.answer_for(policy))] = sample.judge
        judged_status = "correct" if sample.judge == "yes" else status
        outs.append(Outcome(sample.problem_id, sample.sample_idx, judged_status, sample.truncated))
    summary = summarize(group_by_problem(outs))
    return JudgeScore(
        model=model,
        asked=len(questions),
        overturned=sum(v == "yes" for v in questions.values()),
        unparsed=sum(v == "" for v in questions.values()),
        accuracy=summary.accuracy,
        pass_at_k=summary.pass_at_k,
    )
