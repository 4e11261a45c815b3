"""Tokens and cost per run: mean prompt, completion, reasoning and answer tokens; with prices
(`--price-in`, `--price-out`, per million tokens) what the run cost and a picture of cost
against accuracy per task. Without prices no cost is shown."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from llmeval.evaluate.samples import Sample
from llmeval.records import TaskScore
from llmeval.report import data as rd
from llmeval.report.scatter import scatter
from llmeval.report.sections import note, section, table


@dataclass(frozen=True)
class Prices:
    """Dollars per million prompt (input) and completion (output) tokens; reasoning tokens are
    completion tokens, billed as output."""

    prompt: float
    completion: float


def run_cost(samples: Sequence[Sample], prices: Prices) -> float | None:
    """What the samples cost: exact only when every sample reports both token counts (None
    otherwise: a cost over some of them would read as the run's)."""
    if not samples or any(s.prompt_tokens is None or s.completion_tokens is None for s in samples):
        return None
    total = math.fsum(
        (s.prompt_tokens or 0) * prices.prompt + (s.completion_tokens or 0) * prices.completion
        for s in samples
    )
    return total / 1e6


def _tokens(score: TaskScore, name: str) -> float | None:
    """A run's mean `name` tokens per sample (prompt, completion, reasoning, answer)."""
    return {
        "prompt": score.mean_prompt_tokens,
        "completion": score.mean_completion_tokens,
        "reasoning": score.mean_reasoning_tokens,
        "answer": score.mean_answer_tokens,
    }[name]


def _mean(value: float | None) -> str:
    return "–" if value is None else f"{value:,.0f}"


def dollars(value: float | None) -> str:
    """`$1,234.50`; under a dollar two significant digits (`$0.000043`, not `$0.0000`), and
    below a millionth of a dollar in powers of ten (`$4.3e-09`)."""
    if value is None:
        return "–"
    if value >= 1 or value == 0:
        return f"${value:,.2f}"
    if value < 1e-6:
        return f"${value:.2g}"
    return f"${value:.{1 - math.floor(math.log10(value))}f}"


def tokens_section(run: rd.Run, prices: Prices | None = None) -> str:
    """The table of every run, and with prices the cost columns and pictures; a line saying
    so where no row reports a token count."""
    reported = [
        name
        for name in ("prompt", "completion", "reasoning", "answer")
        if any(_tokens(s, name) is not None for s in run.scores.values())
    ]  # a count no row reports gets no column
    if not reported:
        return section("tokens", "Tokens", note("the files report no token counts"))
    head = ["run", "samples", *(f"{name} tokens" for name in reported)]
    head += ["cost", "cost per sample"] if prices else []
    rows, costs = [], dict[str, float | None]()
    for label, source in sorted(run.files.items()):
        score = run.scores[label]
        row: list[object] = [label, len(source.samples)]
        row += [_mean(_tokens(score, name)) for name in reported]
        if prices:
            cost = costs[label] = run_cost(source.samples, prices)
            row += [dollars(cost), dollars(None if cost is None else cost / len(source.samples))]
        rows.append(row)
    how = "Means per sample over the samples whose rows report each count"
    if "reasoning" in reported:
        how += "; reasoning tokens are part of the completion, answer tokens the rest"
    parts = [table(head, rows, "scores"), note(how + ".")]
    if prices:
        parts.append(note(
            f"Cost at ${prices.prompt:g} per million prompt tokens and ${prices.completion:g} "
            "per million completion tokens (reasoning included), over the samples scored; "
            "'–' where a sample lacks a token count."
        ))  # fmt: skip
        parts.append(_pictures(run, costs))
    return section("tokens", "Tokens and cost" if prices else "Tokens", *parts)


def _pictures(run: rd.Run, costs: dict[str, float | None]) -> str:
    """Cost against accuracy (± stderr) per task, a point per run that has a cost."""
    by_task: dict[str, list[tuple[str, float, float, float]]] = {}
    for label, cost in sorted(costs.items()):
        score = run.scores[label]
        if cost is not None and score.accuracy is not None:
            point = (label, cost, score.accuracy, score.stderr or 0.0)
            by_task.setdefault(score.task, []).append(point)
    charts = [
        scatter(f"{task}: cost vs accuracy", "cost of the run ($)", "accuracy (avg@n)", points)
        for task, points in sorted(by_task.items())
    ]
    if not charts:
        return note("no run reports both token counts for every sample: no cost picture")
    return f'<div class="charts">{"".join(charts)}</div>'
