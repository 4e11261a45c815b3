"""The chat protocol of a model that runs Python: the `python` tool as OpenAI function calling
declares it, tool calls read from a reply or assembled from stream deltas, and the inline
protocol's fences (data: one row per model family)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from llmeval.transcripts import OUTPUT_CLOSE, OUTPUT_OPEN

# The one tool offered (native protocol).
PYTHON_TOOL = {
    "type": "function",
    "function": {
        "name": "python",
        "description": (
            "Run a Python 3 program in a fresh sandbox (no network, no files kept) and return "
            "what it prints. Calls share no state: print every result you need."
        ),
        "parameters": {
            "type": "object",
            "properties": {"code": {"type": "string", "description": "the program"}},
            "required": ["code"],
        },
    },
}
# Request fields the tool loop sets itself: never taken from --extra-body.
TOOL_FIELDS = ("tools", "tool_choice", "stop", "continue_final_message", "add_generation_prompt")


@dataclass(frozen=True)
class Fences:
    """How a model family writes code and reads its output inline: the code block's opening
    and closing fences, the output block's, and the stop strings that end a turn at a code
    block's end (the model starts its output block, or closes the code block)."""

    code: str = "```python\n"
    close: str = "```"
    output: str = OUTPUT_OPEN
    output_close: str = OUTPUT_CLOSE
    stop: tuple[str, ...] = ("```output",)


FENCES = {
    # Qwen2.5-Math (tool-integrated reasoning), ToRA, DeepSeek-Math: the model opens ```output
    "qwen": Fences(),
    # any model that writes Markdown but was not taught an output block: stop at a closing fence
    "markdown": Fences(stop=("\n```\n",)),
}


def last_code(text: str, fences: Fences) -> str | None:
    """The code of the python block a turn ended in (after the last output block), or None
    when the turn did not end in one."""
    start = text.rfind(fences.code)
    if start < 0 or text.rfind(fences.output) > start:
        return None
    body = text[start + len(fences.code) :]
    end = body.rfind(fences.close)
    if end >= 0:
        if body[end + len(fences.close) :].strip():
            return None  # text after the block: the turn went on past it
        body = body[:end]
    return body.strip("\n")


def closed(text: str, fences: Fences) -> str:
    """A turn that ends in a code block, with the block closed (a stop string ate its fence)."""
    tail = text[text.rfind(fences.code) :]
    if fences.close in tail[len(fences.code) :]:
        return text if text.endswith("\n") else text + "\n"
    return text.rstrip("\n") + "\n" + fences.close + "\n"


def output_block(output: str, fences: Fences) -> str:
    """A call's output as the model reads it."""
    return fences.output + output.rstrip("\n") + fences.output_close


def code_of(arguments: str) -> str | None:
    """The `code` argument of a native call, or None when the arguments are not a JSON
    object with a string `code` (or a bare string: some servers send the code alone)."""
    try:
        value = json.loads(arguments)
    except ValueError:
        return None
    if isinstance(value, dict) and isinstance(value.get("code"), str):
        return str(value["code"])
    return value if isinstance(value, str) else None


def tool_calls_of(message: dict[str, Any]) -> list[dict[str, str]]:
    """The function calls of a whole reply's message: [{id, name, arguments}]."""
    calls = ToolCallDeltas()
    for index, call in enumerate(message.get("tool_calls") or ()):
        if isinstance(call, dict):
            calls.add([{**call, "index": call.get("index", index)}])
    return calls.done()


@dataclass
class ToolCallDeltas:
    """Function calls assembled from stream deltas as the OpenAI spec sends them: each
    `tool_calls` item names its call by `index`; `id` and `function.name` come once, the
    `function.arguments` string in pieces."""

    calls: dict[int, dict[str, str]] = field(default_factory=dict)

    def add(self, deltas: Any) -> int:
        """Take one delta's `tool_calls`; the characters they added."""
        size = 0
        for delta in deltas if isinstance(deltas, list) else ():
            if not isinstance(delta, dict) or not isinstance(delta.get("index", 0), int):
                continue
            call = self.calls.setdefault(
                delta.get("index", 0), {"id": "", "name": "", "arguments": ""}
            )
            function: dict[str, Any] = delta.get("function") or {}
            if not isinstance(function, dict):
                function = {}
            if isinstance(delta.get("id"), str):
                call["id"] = delta["id"]
            if isinstance(function.get("name"), str):
                call["name"] = call["name"] or function["name"]
            if isinstance(function.get("arguments"), str):
                call["arguments"] += function["arguments"]
                size += len(function["arguments"])
            elif isinstance(function.get("arguments"), dict):  # a server that sends an object
                call["arguments"] += json.dumps(function["arguments"])
        return size

    def done(self) -> list[dict[str, str]]:
        """The calls in index order."""
        return [self.calls[i] for i in sorted(self.calls)]


def assistant_message(text: str, calls: list[dict[str, str]]) -> dict[str, Any]:
    """The assistant's turn as it goes back to the server: its text and its calls."""
    listed = [
        {"id": c["id"], "type": "function",
         "function": {"name": c["name"] or "python", "arguments": c["arguments"]}}
        for c in calls
    ]  # fmt: skip
    return {"role": "assistant", "content": text or None, "tool_calls": listed}
