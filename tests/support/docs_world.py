"""The folder the docs' commands run in (tests/test_docs.py): the paths README.md and docs/*.md
name, holding runs drawn from the loopback server and files as other harnesses write them."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from tests.infer_helpers import ROOT, infer
from tests.support.fake_model import load_answers
from tests.support.synthetic import output, upstream, write_jsonl
from tests.test_eval_harnesses import _lm_eval_rows

MODEL, BASELINE, JUDGE = "Qwen3-8B", "DeepSeek-R1-Distill-Qwen-7B", "Qwen2.5-72B-Instruct"
TASKS = ("aime24", "aime25")  # the runs every page may name: output/<model>/<task>.jsonl
LINKED = ("data", "scripts", "bench", "tests")  # the repository's, as a user's checkout has them
# docs/tasks.md's contest, in MathArena's layout (`llmeval task add hmmt26 --from hmmt_feb_2026/`)
CONTEST = {
    1: ("Compute $1+2+3+4$.", "10"),
    2: ("Compute $\\frac{1}{2}+\\frac{1}{3}$.", "\\frac{5}{6}"),
}
MY_PROBLEMS = [
    {"id": "six-sevens", "problem": "What is 6 times 7?", "answer": "42"},
    {"id": "half", "problem": "What is 1 divided by 2, as a fraction?", "answer": "\\frac{1}{2}"},
    {"id": "root", "problem": "What is the positive square root of 144?", "answer": "12"},
]


def problems(task: str) -> list[dict[str, Any]]:
    """A shipped task's problems."""
    return [json.loads(line) for line in (ROOT / "data" / f"{task}.jsonl").open()]


def answers() -> dict[str, str]:
    """{problem text: gold} of every problem the docs' commands ask a server about."""
    found = {p["problem"]: p["answer"] for p in MY_PROBLEMS}
    found.update(CONTEST.values())
    for task in (*TASKS, "gpqa_diamond"):
        found.update(load_answers(ROOT / "data" / f"{task}.jsonl"))
    return found


def draw_runs(folder: Path, url: str, model: str) -> None:
    """`output/<model>/<task>.jsonl`, 4 samples of each problem, from the server at `url`."""
    for task in TASKS:
        out = folder / "output" / model / f"{task}.jsonl"
        assert infer(url, ROOT / "data" / f"{task}.jsonl", out, "--n-samples", "4") == 0


def build(folder: Path) -> None:
    """Everything but the runs drawn from a server: links to the repository's folders, a
    problem file of one's own, an upstream LLMEval file and the other harnesses' files."""
    for name in LINKED:
        (folder / name).symlink_to(ROOT / name)
    (folder / "output" / "MODEL").symlink_to(MODEL)  # docs/verifier.md's placeholder
    write_jsonl(folder / "my_problems.jsonl", MY_PROBLEMS)
    contest = folder / "hmmt_feb_2026"
    (contest / "problems").mkdir(parents=True)
    for number, (text, _) in CONTEST.items():
        (contest / "problems" / f"{number}.tex").write_text(text)
    answers = "".join(f'{n},"{gold}"\n' for n, (_, gold) in CONTEST.items())
    (contest / "answers.csv").write_text("id,answer\n" + answers)
    run = [json.loads(line) for line in (folder / "output" / MODEL / "aime24.jsonl").open()]
    (folder / "runs").mkdir()
    write_jsonl(folder / "runs" / "aime24.jsonl", [upstream(row) for row in run])
    _harness_files(folder, random.Random(7))


def _texts(gold: str, n: int, right: int, rng: random.Random) -> list[str]:
    return [output(gold if k < right else "1000", 120, rng) for k in range(n)]


def _harness_files(folder: Path, rng: random.Random) -> None:
    """The files docs/harnesses.md scores, at its paths, in each harness's layout."""
    aime, math500 = problems("aime24"), problems("math500")[:6]
    lm_eval = folder / "lm-eval-out" / "org__Model-7B"
    lm_eval.mkdir(parents=True)
    write_jsonl(lm_eval / "samples_aime24_2026-11-26T10-00-00.jsonl", _lm_eval_rows(aime, 4))
    skythought = folder / "result-dir" / "Qwen_QwQ-32B-Preview_aime24_6f1a2b"
    skythought.mkdir(parents=True)
    doc = {
        str(i): {"id": 60 + i, "problem": p["problem"], "answer": p["answer"],
                 "responses": [{"content": t} for t in _texts(p["answer"], 3, i % 4, rng)],
                 "token_usages": [{"completion_tokens": 100, "prompt_tokens": 90}] * 3}
        for i, p in enumerate(aime[:5])
    }  # fmt: skip
    (skythought / "results.json").write_text(json.dumps(doc))
    nemo = folder / "Qwen2.5-Math-7B" / "eval-results" / "math-500"
    nemo.mkdir(parents=True)
    for seed in range(2):
        rows = [{"problem": p["problem"], "expected_answer": p["answer"], "unique_id": p["id"],
                 "generation": _texts(p["answer"], 1, (i + seed) % 2, rng)[0]}
                for i, p in enumerate(math500)]  # fmt: skip
        write_jsonl(nemo / f"output-rs{seed}.jsonl", rows)
    limo = folder / "outputs" / "Qwen" / "Qwen2.5-32B-Instruct" / "aime"
    limo.mkdir(parents=True)
    rows = [{"question": p["problem"], "gold_answer": p["answer"],
             "generated_responses": _texts(p["answer"], 4, i % 5, rng)}
            for i, p in enumerate(aime)]  # fmt: skip
    write_jsonl(limo / "test_qwen-instruct_t0.7_k4_s0_e30.jsonl", rows)
    rows = [{"idx": i, "question": p["problem"], "gt": p["answer"],
             "code": _texts(p["answer"], 4, i % 3, rng)}
            for i, p in enumerate(aime[:3])]  # fmt: skip
    write_jsonl(folder / "aime24_qwen.jsonl", rows)
