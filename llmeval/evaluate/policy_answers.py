"""The answer of one output under each policy: the strict reading (the final box; for choice
tasks the letter in it, or on an `Answer:` line), and the lenient one where it reads more (an
unboxed final answer, a bare letter, an option's text as its letter). Pure text."""

from __future__ import annotations

import re
from functools import lru_cache

from llmeval.evaluate.extract import (
    canonical_answer,
    extract_anchored,
    extract_math,
    last_boxed,
    response_text,
)
from llmeval.verify.gold import normalize_gold
from llmeval.verify.lists import gold_parts
from llmeval.verify.shapes import OPTION, option_letter
from llmeval.verify.typeset import TEXT, TEXT_WRAPPER

Output = tuple[str, str | None, bool]  # (gen, reasoning, starts_in_think)
_LETTER = re.compile(r"(?<![A-Za-z])([A-D])(?![A-Za-z])")  # loose letters: GPQA's four
# After "answer" (and "is"): any run of spaces, colons and stars. One class, not `\s*:?\s*\**\s*`,
# whose adjacent optional runs backtrack cubically on a long run of spaces (10 s at 1,000).
_ANSWER_LETTERS = re.compile(
    r"(?i:answer)(?:\s*(?i:is))?[\s:：*]*"
    r"(\(?[A-D]\)?(?:\s*(?:,|and|or|/|&)\s*\(?[A-D]\)?)*)(?![A-Za-z])"
)
_OPTION_LINE = re.compile(r"^[ \t]*+\(?([A-J])[).:][ \t]*+(\S[^\n]*+)$", re.M)
_GOLD_LETTER = re.compile(rf"[\s$({{]*+(?:{TEXT}\s*+\{{\s*+)?\(?([A-J])\)?[\s$)}}]*+")


def extract_choice(
    gen: str, reasoning: str | None = None, starts_in_think: bool = False
) -> str | None:
    """The chosen letter of a multiple-choice output (strict); None when there is none.
    The last box decides: its opening option letter (`(H) $\\frac{1}{2}$`, `C) 2.5 eV`), else
    its letters (`C`, `\\text{C}`); without a box, the last "Answer: C". Several different
    letters give them all joined ("A,C"): wrong. A box without a letter gives its content."""
    text = response_text(gen, reasoning, starts_in_think)
    if text is None:
        return None
    content = last_boxed(text)
    if content is None:
        found = _ANSWER_LETTERS.findall(text)
        if not found:
            return None
        content = found[-1]
    content = TEXT_WRAPPER.sub(r"\1", content)
    marked = option_letter(content)
    if marked is not None:
        return marked
    letters = dict.fromkeys(_LETTER.findall(content))  # distinct, in order of appearance
    return ",".join(letters) if letters else content.strip() or None


def lenient_letter(
    gen: str, reasoning: str | None = None, starts_in_think: bool = False
) -> str | None:
    """The letter of a finished output whose final line is a letter (`B`, `**B**`, `(B)`,
    `B.`) or opens with one as an option (`(B) 3.2 eV`): the lenient reading."""
    text = response_text(gen, reasoning, starts_in_think)
    if not text or not text.strip():
        return None
    last_line = text.rstrip().rsplit("\n", 1)[-1][-2000:]
    return option_letter(TEXT_WRAPPER.sub(r"\1", last_line))


def options(problem: str | None) -> dict[str, str]:
    """The options listed in a problem (`(A) text` lines); {} unless 2+ distinct letters."""
    if not problem:
        return {}
    found = _OPTION_LINE.findall(problem[-20_000:])
    letters = [letter for letter, _ in found]
    return dict(found) if len(found) >= 2 and len(set(letters)) == len(letters) else {}


@lru_cache(maxsize=4096)
def _gold_info(gold: str) -> tuple[int, str | None]:
    """(parts of the gold, its letter when it is an option letter)."""
    letter = _GOLD_LETTER.fullmatch(gold)
    return gold_parts(normalize_gold(gold) or ""), letter.group(1) if letter else None


def _option_letter(answer: str | None, letters: dict[str, str]) -> str | None:
    """The letter of the one option whose text the answer is (`f(-6)=0`), else None."""
    if answer is None or not letters:
        return None
    form = canonical_answer(answer.strip("$ ."))
    hits = [k for k, text in letters.items() if canonical_answer(text.strip("$ .")) == form]
    return hits[0] if len(hits) == 1 else None


def read_answers(
    kind: str, output: Output, truncated: bool, gold: str, problem: str | None
) -> tuple[str | None, str | None]:
    """(the strict answer, the lenient one where it differs): for math the final box(es) of
    the gold's parts, else (lenient, finished outputs only) the anchored answer or last
    number; for choice the box's or `Answer:` letter, else (lenient) a letter ending the
    output. Under lenient an answer that is exactly one option's text is that option's letter
    when the gold is a letter and the problem lists its options."""
    parts, gold_letter = _gold_info(gold)
    if kind == "choice":
        pred = extract_choice(*output)
        lenient = None if pred is not None or truncated else lenient_letter(*output)
    else:
        pred = extract_math(*output, parts=parts)
        lenient = (
            None if pred is not None or truncated else extract_anchored(*output, problem or "")
        )
    answer = lenient if lenient is not None else pred
    if gold_letter and answer is not None and not OPTION.fullmatch(answer):
        lenient = _option_letter(answer, options(problem)) or lenient
    return pred, lenient
