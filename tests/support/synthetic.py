"""Model-style generation files for tests and benchmarks: long `<think>` reasoning, then a
final answer, written as our records or as upstream LLMEval rows."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from llmeval.tasks import DATA_DIR

_STEPS = (
    "Let me set up the problem carefully. ",
    "We have $x^2 - 5x + 6 = 0$, so $(x-2)(x-3) = 0$. ",
    "Hmm, wait, that does not match the condition; let me recompute. ",
    "By the triangle inequality, $a + b > c$, hence $c < 17$. ",
    "So far the candidate is $\\boxed{7}$, but I should double-check it. ",
    "Taking everything modulo $1000$ gives the remainder. ",
    "\\[\\sum_{k=1}^{n} k = \\frac{n(n+1)}{2}\\]\n",
)


def reasoning(chars: int, rng: random.Random) -> str:
    """Plausible reasoning text of about `chars` characters (with a tentative box inside)."""
    parts: list[str] = []
    size = 0
    while size < chars:
        step = rng.choice(_STEPS)
        parts.append(step)
        size += len(step)
    return "".join(parts)


def output(final: str | None, chars: int, rng: random.Random, closed: bool = True) -> str:
    """`<think>` reasoning, then (if `closed`) a final paragraph boxing `final`."""
    text = "<think>\n" + reasoning(chars, rng)
    if not closed:
        return text
    text += "\n</think>\n\nPutting it together, the computation above gives the result.\n\n"
    if final is None:
        return text + "I could not determine the answer with certainty."
    return text + f"**Final Answer**\n\n$$\\boxed{{{final}}}$$"


def generation(
    pid: str, idx: int, gold: str, gen: str, *, finish: str = "stop", **extra: Any
) -> dict[str, Any]:
    """One row in our format (`Generation` fields)."""
    row = {
        "problem_id": pid,
        "sample_idx": idx,
        "prompt": f"Problem {pid}\nPlease reason step by step, and put your final answer within "
        "\\boxed{}.",
        "answer": gold,
        "gen": gen,
        "finish_reason": finish,
        "usage": {"prompt_tokens": 80, "completion_tokens": max(1, len(gen) // 4)},
    }
    row.update(extra)
    return row


def upstream(row: dict[str, Any], with_ids: bool = True) -> dict[str, Any]:
    """The same sample as an upstream LLMEval row (`gen` a one-element list)."""
    out: dict[str, Any] = {"prompt": row["prompt"], "answer": row["answer"], "gen": [row["gen"]]}
    if with_ids:
        out["doc_id"] = row["problem_id"]
        out["sample_index"] = row["sample_idx"]
    return out


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    """Write rows as JSON lines."""
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


def math500_run(
    problems: int = 60, n: int = 64, chars: int = 20_000, seed: int = 0
) -> list[dict[str, Any]]:
    """A MATH-500-like run: half the samples right; the rest wrong integers, fractions, none."""
    rng = random.Random(seed)
    data = [json.loads(line) for line in (DATA_DIR / "math500.jsonl").open()][:problems]
    rows = []
    base = reasoning(chars, rng)
    for prob in data:
        for idx in range(n):
            roll = rng.random()
            if roll < 0.5:
                final: str | None = prob["answer"]
            elif roll < 0.75:
                final = str(rng.randint(1, 40))
            elif roll < 0.9:
                final = f"\\frac{{{rng.randint(1, 9)}}}{{{rng.randint(2, 9)}}}"
            else:
                final = None
            tail = "" if final is None else f"$$\\boxed{{{final}}}$$"
            gen = "<think>\n" + base + "\n</think>\n\nSo the result follows.\n\n" + tail
            meta = {"subject": prob["subject"], "level": prob["level"]}
            rows.append(generation(prob["id"], idx, prob["answer"], gen, meta=meta))
    return rows
