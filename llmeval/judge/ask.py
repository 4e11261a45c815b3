"""Asking the judge: one request per distinct question, through the same chat client as infer
(retries, timeouts, streaming), several at once; each answer is handed over as it comes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from llmeval.client.chat_client import ChatClient, ClientConfig
from llmeval.client.protocol import ChatFailure, FatalServerError, build_body
from llmeval.judge.prompt import judgement, messages


@dataclass(frozen=True)
class JudgeOptions:
    """Which judge to ask and how (the key is never written anywhere)."""

    url: str
    model: str
    api_key: str | None = None
    workers: int = 8
    timeout: float = 600.0
    max_tokens: int = 2048
    max_retries: int = 3


@dataclass(frozen=True)
class Question:
    """One (problem, gold, extracted answer) for the judge; `key` is its verdict-cache key."""

    key: str
    problem: str
    gold: str
    answer: str


@dataclass(frozen=True)
class Ruling:
    """The judge's "yes"/"no" (None: no verdict line, or `error`), and what it said."""

    key: str
    verdict: str | None
    text: str
    error: str | None = None


def ask_all(
    questions: Iterable[Question], options: JudgeOptions, on_reply: Callable[[Ruling], None]
) -> None:
    """Ask every question; `on_reply` gets each reply (or failure) as it arrives. A judge that
    cannot be used at all (unreachable, refused, unknown model) fails the rest at once."""
    config = ClientConfig(
        base_urls=[options.url], api_key=options.api_key, timeout=options.timeout,
        max_retries=options.max_retries, max_workers=options.workers,
    )  # fmt: skip
    pending = iter(questions)
    fatal: list[str] = []

    async def worker(client: ChatClient) -> None:
        for question in pending:
            if fatal:
                on_reply(Ruling(question.key, None, "", fatal[0]))
                continue
            talk = messages(question.problem, question.gold, question.answer)
            body = build_body(
                options.model, talk, max_tokens=options.max_tokens, seed=0, stream=True,
                sampling={"temperature": 0.0},
            )  # fmt: skip
            try:
                text = (await client.complete(body)).text
            except ChatFailure as exc:
                if isinstance(exc, FatalServerError):
                    fatal.append(str(exc))
                on_reply(Ruling(question.key, None, "", str(exc)))
                continue
            on_reply(Ruling(question.key, judgement(text), text))

    async def ask_them() -> None:
        async with ChatClient(config) as client:
            await asyncio.gather(*(worker(client) for _ in range(max(1, options.workers))))

    asyncio.run(ask_them())
