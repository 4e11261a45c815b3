"""Answer shapes decided on the text, before math-verify reads a colon as a ratio or a word as a
product of letters: times of day, one-letter golds, words, set-builder sets, orderings and
congruences.

`shape_status(gold, answer, same)` gives the verdict when the gold has one of these shapes (the
answer then must have it too), else None. Golds are trusted; answers are hostile: the text is
read only when short, by linear-time rules. The table of shapes in docs/verifier.md holds an
example of each rule (`tests/test_verdict_semantics.py` checks every row).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from llmeval.verify.typeset import SPACING, TEXT_WRAPPER

if TYPE_CHECKING:
    from llmeval.records import VerdictStatus

Same = Callable[[str, str], bool]  # whether an answer part equals a gold part (the verifier)
_MAX_CHARS = 1000  # no time, letter, word list or ordering answer is longer
_SPACING = re.compile(rf"\\left\b|\\right\b|{SPACING}|[$*]")
_TIME = re.compile(r"(\d{1,2}):(\d{2})(?::(\d{2}))?(?:\s*([ap])\.?\s*m\.?)?", re.I)
_LETTER = re.compile(r"\(\s*([A-Za-z])\s*\)|([A-Za-z])")
# An option's letter opening a text: `(H) its text`, `C) text`, `B.`, `B:`, `**B**`, a lone `B`.
# A-J: MMLU-Pro's ten options (GPQA has four, MATH's multiple-choice problems five).
OPTION = re.compile(r"[\s*_$]*+(?:\(([A-J])\)|([A-J])(?:[).:]|\*\*)(?=\s|$|\*)|([A-J])[\s*_$.]*+$)")
_OTHER_OPTION = re.compile(r"\([A-J]\)|(?<![A-Za-z])(?:or|and)\s++[A-J](?![A-Za-z])")
_WORDS = re.compile(r"[A-Za-z]+(?: [A-Za-z]+)*")
_RELATION = re.compile(r"\\gt\b|\\lt\b|>|<")
_DIRECTION = {">": ">", "\\gt": ">", "<": "<", "\\lt": "<"}
# `\pmod{5}`, `\pmod 5`, `\bmod 5`, `(\text{mod } 5)`, `(mod 5)` ending the text (after `_plain`)
_ASSIGNED = re.compile(r"([A-Za-z](?:_\{?\w{1,8}\}?)?) ?= ?([^=]+)")
_MODULUS = re.compile(r"(?:\\[pb]?mod|\(\s*mod)\s*\{?\s*(\d{1,18})\s*\}?\s*\)?$")


def _plain(text: str) -> str | None:
    """The text without `$`, spacing, `\\left`/`\\right` and `\\text{}`-like wrappers (kept:
    their contents), spaces collapsed; None when too long to be a shaped answer."""
    if len(text) > _MAX_CHARS:
        return None
    text = _SPACING.sub(" ", TEXT_WRAPPER.sub(r" \1 ", TEXT_WRAPPER.sub(r" \1 ", text)))
    return " ".join(text.split())


def _time(text: str) -> int | None:
    """Seconds since midnight of `h:mm`, `h:mm:ss`, with `a.m.`/`p.m.` (12-hour) or without
    (24-hour); None when the text is no time."""
    match = _TIME.fullmatch(text.replace("{", "").replace("}", ""))
    if match is None:
        return None
    hour, minute, second = int(match[1]), int(match[2]), int(match[3] or 0)
    half = (match[4] or "").lower()
    if minute > 59 or second > 59 or hour > (12 if half else 24) or (half and hour == 0):
        return None
    if half:
        hour = hour % 12 + (12 if half == "p" else 0)
    return (hour * 60 + minute) * 60 + second


def option_letter(text: str) -> str | None:
    """The letter opening `text` as an option marker (`OPTION`), unless another option
    follows (`(D)`, `or D`): the one reader of option letters, in boxes, final lines and
    answers."""
    match = OPTION.match(text)
    if match is None or _OTHER_OPTION.search(text, match.end()):
        return None
    return match.group(1) or match.group(2) or match.group(3)


def _letter(text: str) -> str | None:
    """The letter of an answer to a one-letter gold: `x` or `(x)` (any letter: the gold may
    be a variable), else an option's letter (`(C) its text`); None otherwise."""
    match = _LETTER.fullmatch(text)
    return match.group(1) or match.group(2) if match else option_letter(text)


def _word_items(text: str, wrapped: bool) -> frozenset[tuple[str, ...]] | None:
    """`SRMC=LRMC` -> {(lrmc, srmc)}; `I, III and IV` -> {(i,), (iii,), (iv,)}: lists of
    words and equations of words, any case, when they are words: in `\\text{}` (`wrapped`), of
    4+ letters or capitals of 3+ (`SRMC`, `III`), not products of letters (`ab`, `x, y`)."""
    items, wordy = set(), False
    for item in re.split(r",| and ", text):
        sides = [side.strip() for side in item.split("=")]
        if not all(_WORDS.fullmatch(side) for side in sides):
            return None
        for word in " ".join(sides).split():
            long = len(word) >= 4 or (len(word) == 3 and word.isupper())
            wordy = wordy or long or (wrapped and len(word) > 1)
        items.add(tuple(sorted(side.lower() for side in sides)))
    return frozenset(items) if wordy else None


def _set_builder(text: str) -> str | None:
    """A set-builder set's text without spaces, with `\\mid`, `:` and `\\colon` as `|`."""
    if not (text.startswith("\\{") and text.endswith("\\}")):
        return None
    text = text.replace("\\mid", "|").replace("\\colon", "|").replace(":", "|")
    return text.replace("\\dfrac", "\\frac").replace(" ", "") if "|" in text else None


def _chain(text: str) -> tuple[str, list[str]] | None:
    """An ordering `b > a > c` -> ('>', [b, a, c]): 3+ items, one strict direction."""
    relations = {_DIRECTION[r] for r in _RELATION.findall(text)}
    items = [item.strip() for item in _RELATION.split(text)]
    if len(relations) != 1 or len(items) < 3 or not all(items) or "=" in text or "," in text:
        return None
    return relations.pop(), items


def _ordering(gold: str, answer: str, same: Same) -> VerdictStatus | None:
    """An ordering gold against its items listed in order (`b, a, c`) or the same chain
    (either direction); None for any other answer (math-verify reads inequalities)."""
    relation, items = _chain(gold)  # type: ignore[misc]
    answered = _chain(answer)
    if answered is not None:
        listed = answered[1] if answered[0] == relation else answered[1][::-1]
    else:
        listed = [item.strip() for item in answer.split(",")]
    if len(listed) != len(items):
        return None
    right = all(same(g, a) for g, a in zip(items, listed, strict=True))
    return "correct" if right else "incorrect"


def shape_status(gold: str, answer: str, same: Same) -> VerdictStatus | None:
    """The verdict when the gold has one of the shapes above, else None."""
    gold_text = _plain(gold)
    if gold_text is None:
        return None
    answer_text = _plain(answer) or ""
    named = _ASSIGNED.fullmatch(answer_text)
    if named and "=" not in gold_text and named[1] != gold_text:
        answer_text = named[2]  # `b = m` for gold `m`: the name solved for, then its value
    if _chain(gold_text) is not None:
        return _ordering(gold_text, answer_text, same)
    wrapped = TEXT_WRAPPER.search(gold) is not None
    readers: tuple[tuple[Callable[[str], object], Callable[[str], object]], ...] = (
        (_time, _time),
        (_one_letter, _letter),
        (lambda text: _word_items(text, wrapped), lambda text: _word_items(text, True)),
        (_set_builder, _set_builder),
    )
    for read_gold, read_answer in readers:
        expected = read_gold(gold_text)
        if expected is None:
            continue
        got = read_answer(answer_text)
        if got is None and read_gold is _time and _may_be_ratio(gold_text):
            return None  # `1:20` against `\frac{1}{20}`: a ratio after all
        return "correct" if got == expected else "incorrect"
    return _congruence(gold_text, answer_text, same)


def _may_be_ratio(text: str) -> bool:
    """A time-shaped gold that may be a ratio: `h:mm` in lowest terms, no leading zero, no
    seconds or a.m./p.m. (`1:20`; never `6:30`, `10:05` or `8:34 p.m.`)."""
    match = _TIME.fullmatch(text.replace("{", "").replace("}", ""))
    if match is None or match[3] or match[4] or match[2].startswith("0"):
        return False
    return math.gcd(int(match[1]), int(match[2])) == 1


def _congruence(gold: str, answer: str, same: Same) -> VerdictStatus | None:
    """A congruence gold (`a \\equiv 3 \\pmod{5}`, `3 \\pmod 5`): the answer's residue equals
    the gold's and its modulus, if it gives one, is the gold's; None for other golds."""
    expected = _residue_modulus(gold)
    if expected is None:
        return None
    got = _residue_modulus(answer) or (answer.split("\\equiv")[-1].strip(), None)
    right = same(expected[0], got[0]) and (got[1] is None or got[1] == expected[1])
    return "correct" if right else "incorrect"


def _residue_modulus(text: str) -> tuple[str, str] | None:
    """`x \\equiv 3 (mod 5)` -> ('3', '5'); None without a modulus."""
    match = _MODULUS.search(text)
    if match is None:
        return None
    residue = text[: match.start()].split("\\equiv")[-1].strip().rstrip("\\").strip()
    return (residue, match[1]) if residue else None


def _one_letter(text: str) -> str | None:
    """The letter of a one-letter gold (`E`, `(C)`, `\\text{(C)}`); not `e` or `i`, which are
    numbers."""
    match = _LETTER.fullmatch(text)
    letter = match and (match.group(1) or match.group(2))
    return letter if letter and letter not in "ei" else None
