"""A deterministic stand-in for a reasoning model: text per (seed, prompt), gold-aware accuracy.

Used by the loopback test server; pure functions, no I/O beyond loading an answers file.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from dataclasses import dataclass
from pathlib import Path

_VOCAB = (
    "let us consider the equation first and substitute the known values so that both sides "
    "balance then we simplify each term check the constraint again and verify the result "
    "carefully since a small slip changes everything note that the sum is symmetric hence "
    "we can pair terms wait maybe the other case works better so compute it directly"
)
_WORDS = tuple(_VOCAB.split())

_CHUNK = re.compile(r"\S+\s*|\s+")


def _corpus(count: int = 4096) -> list[tuple[str, tuple[str, ...]]]:
    """Fixed sentences of 12 words (text, words): answers are runs of them, so a 30k-character
    answer costs the test server a slice and a join, not 5,000 random draws."""
    rng = random.Random(0)
    out = []
    for _ in range(count):
        words = tuple(rng.choice(_WORDS) for _ in range(12))
        out.append((" ".join(words).capitalize() + ".", words))
    return out


_SENTENCES = _corpus()


def _sentences(n: int, start: int) -> str:
    """`n` words: whole corpus sentences from `start` on (wrapping), then a partial one."""
    whole, rest = divmod(n, 12)
    size = len(_SENTENCES)
    parts = [_SENTENCES[(start + i) % size][0] for i in range(whole)]
    if rest:
        words = _SENTENCES[(start + whole) % size][1][:rest]
        parts.append(" ".join(words).capitalize() + ".")
    return " ".join(parts)


def tokens(text: str) -> list[str]:
    """Split text into 'tokens': a word with its trailing space, or a run of spaces."""
    return _CHUNK.findall(text)


def count_tokens(text: str) -> int:
    """How many tokens `tokens` would make of `text`."""
    return len(_CHUNK.findall(text))


def _rng(seed: int, prompt: str) -> random.Random:
    digest = hashlib.sha256(f"{seed}\0{prompt}".encode("utf-8", "surrogatepass")).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _wrong(gold: str, rng: random.Random) -> str:
    if gold.strip().lstrip("-").isdigit():
        return str(int(gold) + rng.randint(1, 9))
    return str(rng.randint(1000, 9999))


@dataclass(frozen=True)
class Completion:
    """What the fake model says: reasoning (without tags), the final part, and the finish."""

    reasoning: str
    content: str
    finish_reason: str
    completion_tokens: int
    reasoning_tokens: int = 0  # of completion_tokens, those of the reasoning
    tool_calls: tuple[dict, ...] = ()  # OpenAI function calls (tests/support/tool_model.py)

    @property
    def text(self) -> str:
        """The whole output with the reasoning inside <think> tags (when it has any)."""
        if not self.reasoning:
            return self.content
        close = "\n</think>\n\n" if self.content or self.finish_reason == "stop" else ""
        return f"<think>\n{self.reasoning}{close}{self.content}"


class FakeModel:
    """Answers each prompt deterministically; with `answers`, a fraction `accuracy` is right."""

    def __init__(
        self,
        answers: dict[str, str] | None = None,
        accuracy: float = 0.5,
        min_words: int = 20,
        max_words: int = 80,
        judge: tuple[tuple[str, str], ...] = (),
        wrong_longer: bool = False,
    ) -> None:
        self.answers = answers or {}
        # right answers from the shorter half of the length range, wrong ones the longer half
        # (as reasoning models: a long search is more often a failed one)
        self.wrong_longer = wrong_longer
        # a scripted judge: the reply of the first (regex, reply) whose regex the prompt matches
        self.judge = [(re.compile(pattern, re.S), reply) for pattern, reply in judge]
        self.accuracy = accuracy
        self.min_words, self.max_words = min_words, max(min_words, max_words)
        self._gold_cache: dict[str, str | None] = {}

    def gold_for(self, prompt: str) -> str | None:
        """The gold answer of the problem whose text the prompt contains (None if unknown)."""
        if prompt not in self._gold_cache:
            found = None
            for problem, answer in self.answers.items():
                if problem and problem in prompt:
                    found = answer
                    break
            if len(self._gold_cache) > 100_000:
                self._gold_cache.clear()
            self._gold_cache[prompt] = found
        return self._gold_cache[prompt]

    def full_text(self, seed: int, prompt: str) -> tuple[str, str]:
        """(reasoning, final part) before any max_tokens cut."""
        reasoning, content, _ = self._full(seed, prompt)
        return reasoning, content

    def _full(self, seed: int, prompt: str) -> tuple[str, str, int]:
        """(reasoning, final part, tokens of the reasoning: its words, one space apart)."""
        rng = _rng(seed, prompt)
        gold = self.gold_for(prompt)
        right = gold is not None and rng.random() < self.accuracy
        answer = gold if right else _wrong(gold, rng) if gold is not None else rng.randint(0, 999)
        low, high = self.min_words, self.max_words
        if self.wrong_longer:
            low, high = (low, (low + high) // 2) if right else ((low + high) // 2, high)
        n = rng.randint(low, high)
        reasoning = _sentences(n, rng.randrange(len(_SENTENCES)))
        return reasoning, f"So the answer is $\\boxed{{{answer}}}$.", n

    def complete(self, seed: int, prompt: str, max_tokens: int | None = None) -> Completion:
        """The completion, cut at `max_tokens` tokens (finish_reason "length") if it is longer."""
        for pattern, reply in self.judge:
            if pattern.search(prompt):
                return _scripted(reply, max_tokens)
        reasoning, content, r_count = self._full(seed, prompt)
        c_toks = tokens(content)
        total = r_count + len(c_toks)
        if max_tokens is None or total <= max_tokens:
            return Completion(reasoning, content, "stop", total, r_count)
        if max_tokens <= r_count:
            cut = "".join(tokens(reasoning)[:max_tokens])
            return Completion(cut, "", "length", max_tokens, max_tokens)
        kept = "".join(c_toks[: max_tokens - r_count])
        return Completion(reasoning, kept, "length", max_tokens, r_count)


def _scripted(reply: str, max_tokens: int | None) -> Completion:
    """A scripted judge's reply, cut at `max_tokens` tokens; a leading `<think>...</think>` is
    its reasoning (sent apart with the server's reasoning field, else inline)."""
    toks = tokens(reply)
    finish = "stop" if max_tokens is None or len(toks) <= max_tokens else "length"
    text = reply if finish == "stop" else "".join(toks[:max_tokens])
    count = min(len(toks), max_tokens or len(toks))
    if not text.startswith("<think>"):
        return Completion("", text, finish, count)
    reasoning, _, content = text.removeprefix("<think>").partition("</think>")
    return Completion(reasoning.strip(), content.strip(), finish, count)


def load_answers(path: str | Path) -> dict[str, str]:
    """{problem text: gold answer} from a problems JSONL (keys `problem`/`prompt` and `answer`)."""
    answers: dict[str, str] = {}
    with Path(path).open(encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            row = json.loads(line)
            text = row.get("problem") or row.get("prompt") or row.get("question")
            if text and "answer" in row:
                answers[str(text)] = str(row["answer"])
    return answers
