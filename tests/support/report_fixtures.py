"""Synthetic scored samples for report tests and the report benchmark (seeded, no model needed)."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

from llmeval.evaluate.samples import InputFile, Sample
from llmeval.evaluate.scoring import task_score
from llmeval.report.data import ReportSample, Run
from llmeval.tasks import TASKS

_FILLER = (  # the words of `prose`
    "so we need the value of x where the sum equals and therefore by the lemma each term "
    "is positive hence let us check the case n = 3 then substitute back into the equation "
    "giving a factor of two so the answer must be wait that is not right recompute the "
    "discriminant"
)
WORDS = _FILLER.split()

HOSTILE = (
    "<script>document.title='pwned';window.__pwned=1</script>"
    "</script><script>window.__pwned=2</script>"
    '<img src=x onerror="window.__pwned=3"> <!-- $JS ${JS} -->'
)


def prose(rng: random.Random, chars: int) -> str:
    """Reasoning-like filler text of about `chars` characters."""
    out, size = [], 0
    while size < chars:
        word = rng.choice(WORDS) if rng.random() > 0.1 else str(rng.randint(0, 999))
        out.append(word)
        size += len(word) + 1
    return " ".join(out)


def make_samples(
    task: str = "aime24",
    n_problems: int = 30,
    n: int = 8,
    text_chars: int = 400,
    seed: int = 0,
    endpoints: tuple[str, ...] = ("http://127.0.0.1:8000/v1",),
) -> list[ReportSample]:
    """Problems of graded difficulty with a mix of statuses, lengths and serving timings."""
    rng = random.Random(seed)
    out = []
    for p in range(n_problems):
        skill = (p + 0.5) / n_problems
        gold = str(rng.randint(0, 999))
        for i in range(n):
            tokens = int(rng.lognormvariate(7.5, 0.7))
            truncated = tokens > 16000
            tokens = min(tokens, 16384)
            roll = rng.random()
            if truncated:
                status, pred = "no_answer", None
            elif roll < skill:
                status, pred = "correct", gold
            elif roll < skill + 0.05:
                status, pred = "no_answer", None
            else:
                status, pred = "incorrect", str(rng.randint(0, 999))
            ttft = rng.uniform(0.05, 0.5)
            out.append(
                ReportSample(
                    task=task,
                    problem_id=f"{task}-{p}",
                    sample_idx=i,
                    status=status,
                    gold=gold,
                    pred=pred,
                    finish_reason="length" if truncated else "stop",
                    truncated=truncated,
                    tokens=tokens,
                    latency_s=ttft + tokens / rng.uniform(40, 60),
                    ttft_s=ttft,
                    endpoint=endpoints[i % len(endpoints)],
                    prompt=f"Problem {p}: find the value. " + prose(rng, 200),
                    gen=prose(rng, text_chars // 4) + (f" \\boxed{{{pred}}}" if pred else ""),
                    reasoning=prose(rng, text_chars),
                    meta={"subject": rng.choice(["Algebra", "Geometry"]), "level": 1 + p % 5},
                )
            )
    return out


SPEC = {"model": "test-model", "temperature": 0.6, "top_p": 0.95, "max_tokens": 16384, "seed": 0}


def make_run(label: str = "run", **kwargs) -> Run:
    """A Run of synthetic samples, scored by eval's own `task_score`, with a run spec."""
    samples = make_samples(**kwargs)
    run = Run(label=label, samples=samples)
    for task, problems in run.problems().items():
        rows = [s for r in problems.values() for s in r]
        source = InputFile(Path(f"{task}.jsonl"), TASKS[task], [_eval_sample(s) for s in rows])
        run.scores[task] = task_score(source, "strict").model_dump()
        run.specs[task] = dict(SPEC, n_samples=kwargs.get("n", 8))
    return run


def _eval_sample(s: ReportSample) -> Sample:
    sample = Sample(s.problem_id, s.sample_idx, s.gold, s.pred, s.truncated, s.tokens, dict(s.meta))
    sample.status = {"strict": s.status, "lenient": s.status}
    return sample


def hostile_run(compress_label: str = "run", **kwargs) -> Run:
    """A run whose first problem's id, answers, texts and subject all carry script payloads."""
    run = make_run(compress_label, **kwargs)
    first = run.samples[0].problem_id
    run.samples = [
        replace(s, problem_id=f"evil{HOSTILE}", pred=HOSTILE, gen=f"{HOSTILE} \\boxed{{1}}",
                reasoning=HOSTILE, prompt=HOSTILE, meta={"subject": HOSTILE, "level": 1})
        if s.problem_id == first else s
        for s in run.samples
    ]  # fmt: skip
    return run
