"""Samples that used tools: the part of a transcript the final answer is read from (after the
last tool output: an answer only a program printed is never scored) and a run's figures of
its calls (`ToolFigures`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from llmeval.transcripts import OUTPUT_CLOSE, OUTPUT_OPEN, ToolFigures

_END = OUTPUT_CLOSE.rstrip("\n")  # (the text after it may start on the same line)


@dataclass
class ToolUse:
    """One sample's calls: how many, how many failed or ran out of time, whether the calls ran
    out, the text after its last output, and whether an answer sits only inside an output."""

    calls: int
    errors: int
    timeouts: int
    out_of_calls: bool
    answer_part: str
    in_output: bool = False


def after_outputs(text: str) -> str:
    """The text after the last tool output block (all of it when there is none)."""
    start = text.rfind(OUTPUT_OPEN)
    if start < 0:
        return text
    end = text.find(_END, start + len(OUTPUT_OPEN))
    return "" if end < 0 else text[end + len(_END) :]


def tool_use(row: dict[str, Any], gen: str) -> ToolUse | None:
    """The tool use of a row drawn with tools (its `tool_calls` list), else None."""
    calls = row.get("tool_calls")
    if not isinstance(calls, list):
        return None
    calls = [c for c in calls if isinstance(c, dict)]
    statuses = [c.get("status") for c in calls]
    return ToolUse(
        calls=len(calls),
        errors=statuses.count("error"),
        timeouts=statuses.count("timeout"),
        out_of_calls=row.get("out_of_calls") is True,
        answer_part=after_outputs(gen) if calls else gen,
    )


def answer_in_output(row: dict[str, Any]) -> bool:
    """An answer (a `\\boxed{}`) printed by a call, where the text after the outputs has none."""
    return any("\\boxed" in str(c.get("stdout", "")) for c in row.get("tool_calls") or ())


def figures(uses: Iterable[ToolUse | None]) -> ToolFigures | None:
    """A run's figures over its samples drawn with tools (None: the run used none)."""
    drawn = [u for u in uses if u is not None]
    if not drawn:
        return None
    calls = sum(u.calls for u in drawn)
    return ToolFigures(
        samples=len(drawn),
        with_calls=sum(u.calls > 0 for u in drawn),
        calls=calls,
        calls_per_sample=calls / len(drawn),
        error_rate=sum(u.errors for u in drawn) / calls if calls else None,
        timeout_rate=sum(u.timeouts for u in drawn) / calls if calls else None,
        out_of_calls=sum(u.out_of_calls for u in drawn),
        answer_in_output=sum(u.in_output for u in drawn),
    )
