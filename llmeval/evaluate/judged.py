"""The judge step of `eval`: the samples the rules judged `incorrect` (never truncated ones)
go to the LLM judge, one question per distinct (problem, gold, answer); its verdicts live in
the verdict cache beside the rules' and are appended as they arrive."""

from __future__ import annotations

import logging
from pathlib import Path

from llmeval.errors import ServerError, display_url
from llmeval.evaluate.metrics import Outcome, group_by_problem, summarize
from llmeval.evaluate.options import EvalOptions
from llmeval.evaluate.runs import InputRun
from llmeval.evaluate.samples import Sample
from llmeval.evaluate.verdict_cache import VerdictCache
from llmeval.judge.prompt import JUDGE_VERSION, judge_key
from llmeval.records import JudgeScore, Verdict

log = logging.getLogger("llmeval")
_YES_NO = {"correct": "yes", "incorrect": "no"}


def judge_files(runs: list[InputRun], options: EvalOptions, cache: VerdictCache) -> None:
    """Ask the judge (`options.judge`) about every rule-`incorrect`, untruncated sample (under
    the chosen policy) the cache has no verdict for; set every such sample's `judge` and
    `judge_reply`."""
    from llmeval.judge.ask import Question, Ruling, ask_all

    judge, policy = options.judge, options.policy
    if judge is None:
        return
    found: dict[str, tuple[str, str]] = {}  # question key -> (yes / no / "", reply)
    questions: dict[str, Question] = {}
    wanted: dict[str, set[Path]] = {}  # question key -> the cache files wanting its verdict
    asked: list[tuple[Sample, str]] = []  # (sample, its question key)
    for source, path, samples in ((r, p, s) for r in runs for p, s in r.by_file()):
        cache_file = options.cache_file(path)
        for sample in samples:
            answer = sample.answer_for(policy)
            if sample.status[policy] != "incorrect" or sample.truncated or answer is None:
                continue
            problem = source.prompts.get(sample.problem_id, "")
            key = judge_key(judge.model, problem, sample.gold, answer)
            asked.append((sample, key))
            if key not in found and key not in questions:
                hit = cache.get(key)
                if hit is None:
                    questions[key] = Question(key, problem, sample.gold, answer)
                else:
                    found[key] = (_YES_NO.get(hit.status, ""), hit.detail or "")
            if cache_file is not None:
                wanted.setdefault(key, set()).add(cache_file)
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
        cache.add(verdict, list(wanted.get(reply.key, ())), new=True)

    if questions:
        log.info("judge: asking %s about %d answers", judge.model, len(questions))
        ask_all(questions.values(), judge, on_reply)
        if not replies and not cached:  # the judge cannot be used: its figures are the rules'
            raise ServerError(f"judge {display_url(judge.url)}: no request succeeded: {errors[0]}")
    for error in errors:
        log.warning("judge: %s (the rules' verdict stands)", error)
    for sample, key in asked:
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
