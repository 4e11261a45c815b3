"""The test server's injected faults: their kinds, the flag syntax, and which request gets one
(by a schedule of request numbers, else at random by rate from a seeded generator)."""

from __future__ import annotations

import random

from tests.support.bad_replies import KINDS

# HTTP errors, "drop" (close before answering), "drop_mid" (close after part of the answer),
# "slow" (wait slow_delay first), "context" (vLLM's context-length 400), "malformed" (broken
# JSON), "empty" (no choices), "close_after" (answer, then drop the next request on that
# connection, as llama-server sometimes does after a stream).
FAULTS = (
    "429", "408", "500", "503", "drop", "drop_mid", "slow", "context", "malformed", "empty",
    "close_after",
)  # fmt: skip
FAULTS += KINDS  # what a server sends: garbage usage, huge replies, ... (bad_replies.py)


def parse_faults(text: str) -> dict[str, float]:
    """`429=0.1,drop_mid=0.05` -> {"429": 0.1, "drop_mid": 0.05}."""
    out: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        kind, _, rate = part.partition("=")
        out[_known(kind)] = float(rate)
    return out


def parse_schedule(text: str) -> dict[int, str]:
    """`0:429,3:drop` -> {0: "429", 3: "drop"} (chat request numbers, 0-based)."""
    out: dict[int, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        num, _, kind = part.partition(":")
        out[int(num)] = _known(kind)
    return out


def _known(kind: str) -> str:
    if kind not in FAULTS:
        raise ValueError(f"unknown fault {kind!r}; known: {', '.join(FAULTS)}")
    return kind


class FaultPicker:
    """Numbers chat requests and picks each one's fault: its scheduled kind, else each kind in
    turn with its probability. `rng` (seeded) also serves the server's latency jitter."""

    def __init__(self, rates: dict[str, float], schedule: dict[int, str], seed: int) -> None:
        self.rates, self.schedule = rates, schedule
        self.rng = random.Random(seed)
        self.count = 0  # chat requests numbered so far

    def pick(self) -> str | None:
        """The fault of the next chat request, or None."""
        number = self.count
        self.count += 1
        if number in self.schedule:
            return self.schedule[number]
        for kind, rate in self.rates.items():
            if rate > 0 and self.rng.random() < rate:
                return kind
        return None
