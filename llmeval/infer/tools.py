"""The tool loop of one sample: generate, run the code a turn ended in (a native tool call, or
an inline ```python block), give the model its output, continue; until it answers without a
call, under the call cap (then one more turn without tools, so every sample ends in text) and
one token budget across all turns. Every turn goes to the endpoint of the first, seeded from
the sample's seed, so a rerun sends the same requests; a half-done conversation is never kept
(a rerun starts it again from its first turn, its calls answered from the sandbox's cache)."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llmeval.client.chat_client import ChatClient
from llmeval.client.protocol import Reply, build_body
from llmeval.client.tools import (
    FENCES,
    PYTHON_TOOL,
    Fences,
    assistant_message,
    closed,
    code_of,
    last_code,
    output_block,
)
from llmeval.errors import UsageError
from llmeval.sampling import Sampling
from llmeval.sandbox import Sandbox, start_line
from llmeval.sandbox.cache import cache_path
from llmeval.transcripts import ToolCall, ToolSettings, Turn

if TYPE_CHECKING:
    from llmeval.infer.options import InferOptions

log = logging.getLogger("llmeval")

BAD_ARGUMENTS = "not run: the arguments are not a JSON object with a string 'code'"


def turn_seed(seed: int, turn: int) -> int:
    """The seed of a sample's turn: the sample's own for its first, then one per turn."""
    return seed if turn == 0 else (seed + turn * 0x9E3779B1) & 0x7FFFFFFF


def tool_text(call: ToolCall, settings: ToolSettings) -> str:
    """A call's output as the model reads it: what it printed, then what went wrong."""
    ending = {
        "timeout": f"TimeoutError: the program ran past its {settings.timeout_s:g} s limit",
        "killed": "the program was killed",
    }.get(call.status, "")
    text = call.stdout + call.stderr
    return text + (ending + "\n" if ending else "")


def _used(reply: Reply) -> int:
    """The tokens a turn spent: as the server counted them, else about 4 characters each."""
    if reply.completion_tokens is not None:
        return reply.completion_tokens
    return (len(reply.text) + len(reply.reasoning or "")) // 4 + 1


@dataclass
class Conversation:
    """A finished sample that used tools: its transcript (`gen`), turns and calls, and the
    reply it adds up to (finish of the last turn, tokens and latency of all)."""

    text: str = ""
    turns: list[Turn] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    replies: list[Reply] = field(default_factory=list)
    out_of_calls: bool = False
    over_budget: bool = False

    def add(self, reply: Reply) -> None:
        self.replies.append(reply)
        self.turns.append(Turn(text=reply.text, reasoning=reply.reasoning,
                               finish_reason=reply.finish_reason, prompt_tokens=reply.prompt_tokens,
                               completion_tokens=reply.completion_tokens))  # fmt: skip

    def reply(self) -> Reply:
        """The sample's reply: the transcript, every turn's tokens and time."""
        first, last = self.replies[0], self.replies[-1]

        def total(name: str) -> int | None:
            counts = [getattr(r, name) for r in self.replies]
            return None if any(c is None for c in counts) else sum(counts)

        reasoning = [r.reasoning for r in self.replies if r.reasoning]
        return Reply(
            text=self.text, reasoning="\n\n".join(reasoning) or None,
            finish_reason="length" if self.over_budget else last.finish_reason,
            prompt_tokens=total("prompt_tokens"), completion_tokens=total("completion_tokens"),
            reasoning_tokens=total("reasoning_tokens"), ttft_s=first.ttft_s,
            endpoint=first.endpoint, latency_s=sum(r.latency_s or 0.0 for r in self.replies),
            cut_by=last.cut_by, bad_usage=any(r.bad_usage for r in self.replies),
        )  # fmt: skip


@dataclass
class ToolLoop:
    """What every conversation of a run shares: the settings, the sandbox, the client."""

    settings: ToolSettings
    sandbox: Sandbox
    client: ChatClient
    model: str
    sampling: Sampling
    stream: bool = True

    @property
    def fences(self) -> Fences:
        return FENCES[self.settings.fences or "qwen"]

    async def converse(self, messages: list[dict[str, Any]], seed: int) -> Conversation:
        """One sample's conversation, from its first turn to its answer."""
        talk, msgs = Conversation(), list(messages)
        native = self.settings.protocol == "native"
        while True:
            offer = len(talk.calls) < self.settings.max_calls
            talk.out_of_calls = not offer and self.settings.max_calls > 0
            used = sum(_used(r) for r in talk.replies)
            if used >= self.sampling.max_tokens:
                talk.over_budget = True
                return talk
            body = self._body(msgs, talk, offer, seed, self.sampling.max_tokens - used)
            endpoint = talk.replies[0].endpoint if talk.replies else None
            reply = await self.client.complete(body, prefer=endpoint)
            talk.add(reply)
            if reply.finish_reason == "length" or not offer:
                talk.text += reply.text
                return talk
            more = await (self._native(reply, talk, msgs) if native else self._inline(reply, talk))
            if not more:
                return talk

    def _body(
        self, msgs: list[dict[str, Any]], talk: Conversation, offer: bool, seed: int, left: int
    ) -> bytes:
        """A turn's request: the tool (or the stop strings) while calls are left, the rest of
        the budget, the transcript so far continued (inline)."""
        extra: dict[str, Any] = {}
        if self.settings.protocol == "native":
            extra = {"tools": [PYTHON_TOOL]} if offer else {}
        else:
            extra = {"stop": list(self.fences.stop)} if offer else {}
            if talk.text:
                msgs = [*msgs, {"role": "assistant", "content": talk.text}]
                extra |= {"continue_final_message": True, "add_generation_prompt": False}
        turn = self.sampling.model_copy(
            update={"max_tokens": left, "extra_body": {**self.sampling.extra_body, **extra}}
        )
        return build_body(self.model, msgs, turn, seed=turn_seed(seed, len(talk.replies)),
                          stream=self.stream)  # fmt: skip

    async def _call(self, code: str, talk: Conversation) -> ToolCall:
        """Run one call (after the earlier successful ones, with --tool-state replay)."""
        replay = self.settings.state == "replay"
        setup = [c.code for c in talk.calls if c.status == "ok"] if replay else []
        call = await self.sandbox.run(code, setup)
        talk.calls.append(call)
        return call

    async def _native(self, reply: Reply, talk: Conversation, msgs: list[dict[str, Any]]) -> bool:
        """Run a reply's tool calls, each answered by a `tool` message; whether to go on."""
        talk.text += reply.text
        if not reply.tool_calls:
            return False
        msgs.append(assistant_message(reply.text, reply.tool_calls))
        for index, asked in enumerate(reply.tool_calls):
            call_id = asked["id"] or f"call_{len(talk.replies)}_{index}"
            code = code_of(asked["arguments"])
            if len(talk.calls) >= self.settings.max_calls:
                content = f"not run: the limit of {self.settings.max_calls} calls is reached"
            elif code is None:
                call = ToolCall(code=asked["arguments"], stderr=BAD_ARGUMENTS + "\n",
                                status="error", call_id=call_id)  # fmt: skip
                talk.calls.append(call)
                content = call.stderr
            else:
                call = (await self._call(code, talk)).model_copy(update={"call_id": call_id})
                talk.calls[-1] = call
                content = tool_text(call, self.settings)
            msgs.append({"role": "tool", "tool_call_id": call_id, "name": "python",
                         "content": content})  # fmt: skip
            shown = code if code is not None else asked["arguments"]
            talk.text += "\n" + closed(self.fences.code + shown, self.fences)
            talk.text += output_block(content, self.fences)
        return True

    async def _inline(self, reply: Reply, talk: Conversation) -> bool:
        """Run the code block the turn ended in, its output appended; whether to go on."""
        code = last_code(reply.text, self.fences)
        talk.text += reply.text
        if code is None:
            return False
        talk.text = closed(talk.text, self.fences)
        call = await self._call(code, talk)
        talk.text += output_block(tool_text(call, self.settings), self.fences)
        return True


@contextlib.contextmanager
def tool_loop(
    opts: InferOptions, client: ChatClient, model: str, own: Path
) -> Iterator[ToolLoop | None]:
    """The run's tool loop (None without --tools): its sandbox, said at the start, its calls
    cached beside the file written, and a line on them at the end."""
    if opts.tools is None:
        yield None
        return
    try:
        sandbox = Sandbox(opts.tools, cache_path(own), prewarm=os.cpu_count() or 1)
    except OSError as exc:
        raise UsageError(str(exc)) from None
    log.info("%s", start_line(sandbox.launcher))
    try:
        yield ToolLoop(opts.tools, sandbox, client, model, opts.sampling, opts.client.stream)
    finally:
        sandbox.close()
        if sandbox.runs or sandbox.hits:
            log.info("tools: %d calls run, %d answered from %s", sandbox.runs, sandbox.hits,
                     cache_path(own))  # fmt: skip
