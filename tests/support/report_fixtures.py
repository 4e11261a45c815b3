"""Synthetic scored samples for report tests and the report benchmark (seeded, no model needed)."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path
from typing import Any

from llmeval.evaluate.reading import InputRun
from llmeval.evaluate.samples import Sample, Texts
from llmeval.evaluate.scoring import task_score
from llmeval.records import RunSpec
from llmeval.report.data import Run
from llmeval.tasks import TASKS
from llmeval.verify.verifier import POLICIES

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


def make_file(
    task: str = "aime24",
    n_problems: int = 30,
    n: int = 8,
    text_chars: int = 400,
    seed: int = 0,
    endpoints: tuple[str, ...] = ("http://127.0.0.1:8000/v1",),
) -> InputRun:
    """A file of problems of graded difficulty with a mix of statuses, lengths and serving
    timings, its samples verified as eval leaves them (the same status under both policies)."""
    rng = random.Random(seed)
    spec = RunSpec(model="test-model", n_samples=n, max_tokens=16384)
    source = InputRun(Path(f"{task}.jsonl"), TASKS[task], spec=spec)
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
            latency = ttft + tokens / rng.uniform(40, 60)
            prompt = f"Problem {p}: find the value. " + prose(rng, 200)
            texts = Texts(
                gen=prose(rng, text_chars // 4) + (f" \\boxed{{{pred}}}" if pred else ""),
                reasoning=prose(rng, text_chars),
                finish_reason="length" if truncated else "stop",
                latency_s=latency,
                ttft_s=ttft,
                endpoint=endpoints[i % len(endpoints)],
            )
            meta = {"subject": rng.choice(["Algebra", "Geometry"]), "level": 1 + p % 5}
            pid = f"{task}-{p}"
            sample = Sample(pid, i, gold, pred, truncated, tokens, meta, texts=texts)
            sample.status = dict.fromkeys(POLICIES, status)
            source.parts[0].samples.append(sample)
            source.prompts.setdefault(pid, prompt)
    return source


def make_run(label: str = "run", **kwargs: Any) -> Run:
    """A Run of one synthetic file, scored by eval's own `task_score`."""
    source = make_file(**kwargs)
    score = task_score(source, "strict")
    return Run(label, "strict", {source.task.name: source}, {source.task.name: score})


def hostile_run(compress_label: str = "run", **kwargs: Any) -> Run:
    """A run whose first problem's id, answers, texts and subject all carry script payloads."""
    run = make_run(compress_label, **kwargs)
    source = next(iter(run.files.values()))
    first, evil = source.samples[0].problem_id, f"evil{HOSTILE}"
    for s in source.samples:
        if s.problem_id == first:
            s.problem_id = evil
            s.pred = HOSTILE
            s.meta = {"subject": HOSTILE, "level": 1}
            s.texts = replace(s.texts, gen=f"{HOSTILE} \\boxed{{1}}", reasoning=HOSTILE)
    source.prompts[evil] = HOSTILE
    return run
