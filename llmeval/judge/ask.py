"""Asking the judge: one request per distinct question, through the same chat client as infer
(retries, timeouts, streaming), several at once; each answer is handed over as it comes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from llmeval.client.chat_client import ChatClient, ClientConfig
from llmeval.client.protocol import ChatFailure, FatalServerError, build_body
from llmeval.judge.prompt import judgement, messages
from llmeval.sampling import Sampling


class JudgeOptions(BaseModel):
    """Which judge to ask and how (the key is never written anywhere); its bounds are the
    `--judge-*` flags' checks."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str
    model: str
    api_key: str | None = None
    workers: int = Field(8, ge=1)  # questions in flight
    # the most one question may take, retries included
    timeout: float = Field(300.0, gt=0, allow_inf_nan=False)
    max_tokens: int = Field(2048, ge=1)
    max_retries: int = Field(3, ge=0)


@dataclass(frozen=True)
class Question:
    """One (problem, gold, extracted answer) for the judge; `key` is its verdict-cache key."""

    key: str
    problem: str
    gold: str
    answer: str


@dataclass(frozen=True)
class Ruling:
    """The judge's "yes"/"no" (None: no verdict line) and what it said; `error` says why
    there is nothing to cache (no reply, or one that did not finish); `replied`: a reply came."""

    key: str
    verdict: str | None
    text: str
    error: str | None = None
    replied: bool = True


def ask_all(
    questions: Iterable[Question], options: JudgeOptions, on_reply: Callable[[Ruling], None]
) -> None:
    """Ask every question; `on_reply` gets each reply (or failure) as it arrives. A judge that
    cannot be used at all (unreachable, refused, unknown model) fails the rest at once; a
    question without a finished reply within `options.timeout` fails alone."""
    config = ClientConfig(
        base_urls=[options.url],
        api_key=options.api_key,
        timeout=options.timeout,
        max_retries=options.max_retries,
        max_workers=options.workers,
    )
    sampling = Sampling(temperature=0.0, top_p=1.0, max_tokens=options.max_tokens)  # greedy
    fatal: list[str] = []

    async def ask(client: ChatClient, question: Question) -> Ruling:
        talk = messages(question.problem, question.gold, question.answer)
        body = build_body(options.model, talk, sampling, seed=0, stream=True)
        try:
            async with asyncio.timeout(options.timeout):
                reply = await client.complete(body)
        except TimeoutError:
            error = f"no finished reply within the {options.timeout:g} s --judge-timeout"
            return Ruling(question.key, None, "", error, replied=False)
        except ChatFailure as exc:
            if isinstance(exc, FatalServerError):
                fatal.append(str(exc))
            return Ruling(question.key, None, "", str(exc), replied=False)
        if reply.finish_reason != "stop":
            why = f"finish_reason {reply.finish_reason!r:.40}; 'length': raise --judge-max-tokens"
            unread = f"a reply that did not finish is not read ({why})"
            return Ruling(question.key, None, reply.text, unread)
        return Ruling(question.key, judgement(reply.text), reply.text)

    async def ask_them() -> None:
        async with ChatClient(config) as client:

            async def handle(question: Question) -> None:
                if fatal:
                    on_reply(Ruling(question.key, None, "", fatal[0], replied=False))
                else:
                    on_reply(await ask(client, question))

            await asyncio.gather(*client.workers(questions, handle))

    asyncio.run(ask_them())
