"""The loopback server playing a model that runs Python, in both protocols: it writes a program
(the one between `<<<code` and `code>>>` in the problem, else one that computes the gold
answer, so the answer exists only if the program ran), reads its output from the
conversation, and answers with the last number the program printed. `calls=N` in the problem
makes it call N times (`calls=99`: until the calls run out). Pure functions of the request.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.support.fake_model import Completion, count_tokens, tokens

_CODE = re.compile(r"<<<code\n(.*?)\ncode>>>", re.S)
_CALLS = re.compile(r"\bcalls=(\d+)")
_NUMBER = re.compile(r"-?\d+")
OUTPUT = "```output\n"


def is_tool_request(body: dict[str, Any]) -> bool:
    """A turn of a conversation with tools: tools offered, inline stop strings, or a
    conversation already under way."""
    messages = body.get("messages") or []
    roles = {m.get("role") for m in messages if isinstance(m, dict)}
    return bool(body.get("tools") or body.get("stop") or roles & {"tool", "assistant"})


def program(problem: str, gold: str | None) -> str:
    """The program the model writes for a problem."""
    found = _CODE.search(problem)
    if found:
        return found.group(1)
    if gold is not None and re.fullmatch(r"-?\d+", gold.strip()):
        value = int(gold)
        return f"a = {value - 17}\nb = 17\nprint(a + b)"
    return "print(6 * 7)"


def _answer(output: str, problem: str = "") -> str:
    if "nobox" in problem:  # leaves the answer to what the program printed
        return "The program said it all."
    numbers = _NUMBER.findall(output)
    value = numbers[-1] if numbers else "0"
    return f"The program printed {value}. So the answer is $\\boxed{{{value}}}$."


def complete(body: dict[str, Any], gold: str | None) -> Completion:
    """The next turn of the conversation `body` holds."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    problem = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
    code = program(problem, gold)
    wanted = int(m.group(1)) if (m := _CALLS.search(problem)) else 1
    if body.get("tools") or any(m.get("role") == "tool" for m in messages):
        return _native(body, messages, code, wanted, problem)
    return _inline(body, messages, code, wanted, problem)


def _native(
    body: dict[str, Any], messages: list[dict], code: str, wanted: int, problem: str
) -> Completion:
    outputs = [str(m.get("content") or "") for m in messages if m.get("role") == "tool"]
    if body.get("tools") and len(outputs) < wanted:
        arguments = json.dumps({"code": code})
        call = {"id": f"call_{len(outputs)}", "type": "function",
                "function": {"name": "python", "arguments": arguments}}  # fmt: skip
        text, limit = "Let me compute it.", body.get("max_tokens")
        if limit is not None and count_tokens(text + arguments) > limit:  # no room for the call
            return _final(text + " " + arguments, body)
        return Completion(
            "", text, "tool_calls", count_tokens(text + arguments), tool_calls=(call,)
        )
    return _final(_answer(outputs[-1] if outputs else "", problem), body)


def _inline(
    body: dict[str, Any], messages: list[dict], code: str, wanted: int, problem: str
) -> Completion:
    last = messages[-1] if messages else {}
    so_far = str(last.get("content") or "") if last.get("role") == "assistant" else ""
    outputs = so_far.split(OUTPUT)[1:]
    stops = [s for s in body.get("stop") or [] if isinstance(s, str)]
    if stops and len(outputs) < wanted:
        lead = "Let me compute it." if not so_far else "\nOnce more."
        text = f"{lead}\n```python\n{code}\n```\n{OUTPUT}"
        cut = min((text.find(s) for s in stops if s in text), default=-1)
        if cut >= 0:
            text = text[:cut]
        return _final(text, body)
    output = outputs[-1].split("\n```")[0] if outputs else ""
    return _final(("\n" if so_far else "") + _answer(output, problem), body)


def _final(text: str, body: dict[str, Any]) -> Completion:
    """A turn's text, cut at the request's max_tokens."""
    limit = body.get("max_tokens") or body.get("max_completion_tokens")
    toks = tokens(text)
    if limit is not None and len(toks) > limit:
        return Completion("", "".join(toks[:limit]), "length", limit)
    return Completion("", text, "stop", len(toks))
