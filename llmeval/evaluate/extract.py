"""Pure text work on model outputs: strip the reasoning, find the final boxed answer, or an
anchored one (`policy_answers.py` reads them per task and policy). Cheap and deterministic; the
extracted answer (not the whole text) is verified and keys the verdict cache."""

from __future__ import annotations

import re

from llmeval import thinking
from llmeval.verify.lists import split_parts
from llmeval.verify.typeset import TEXT_WRAPPER

TRUNCATED_REASONS = frozenset({"length", "context_length"})  # finish reasons of a cut-off output

_BOX_COMMANDS = ("\\boxed", "\\fbox")
_BOX_GAP = 400  # final boxes of a several-part answer: at most this far apart (characters)
# Digit groups written with a thin space (10\,000): math-verify reads 10*0.
_THIN_SPACE_GROUP = re.compile(r"(?<=\d)\\,(?=\d{3}(?!\d))")
_SPACING = re.compile(r"\\left|\\right|\\[!,;:> ]|\\quad|\\qquad|\$|\s+")
_LEADING_ZEROS = re.compile(r"(?<![\d.])0+(?=\d)")


def response_text(
    gen: str, reasoning: str | None = None, starts_in_think: bool = False
) -> str | None:
    """The text after the reasoning, or None when the output ends inside its reasoning (an
    opened `<think>` never closed, in `gen` or at the end of the prompt: `starts_in_think`):
    `thinking.split`, the rule the judge reads its replies by too."""
    text, still_thinking = thinking.split(gen, reasoning, starts_in_think)
    return None if still_thinking else text


def _braced(text: str, open_pos: int) -> str | None:
    """The content of the brace group opening at `open_pos`, or None if it never closes."""
    depth = 0
    for pos in range(open_pos, len(text)):
        char = text[pos]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return text[open_pos + 1 : pos]
    return None


def _last_box(text: str, end: int) -> tuple[int, int, str | None] | None:
    """(start, end, content) of the last box starting before `end` (content None when its
    braces never close); None when there is none."""
    # A loop, not recursion (20,000 `\\boxedx` must not overflow the stack), and each command
    # searched again only below its own last hit (linear, not quadratic).
    hits = {cmd: text.rfind(cmd, 0, end) for cmd in _BOX_COMMANDS}
    while True:
        cmd = max(hits, key=hits.__getitem__)
        start = hits[cmd]
        if start < 0:
            return None
        after = start + len(cmd)
        if after >= end or not text[after].isalpha():
            break
        end = start  # \boxedsomething is another command: look before it
        hits[cmd] = text.rfind(cmd, 0, end)
    rest = text[after:end]
    stripped = rest.lstrip()
    if stripped.startswith("{"):
        open_pos = end - len(stripped)
        content = _braced(text[:end], open_pos)
        return start, open_pos + len(content or "") + 2, content
    if rest[:1].isspace() and stripped:  # \boxed 42: one token, to a space or a dollar
        token = re.split(r"[\s$]", stripped, maxsplit=1)[0]
        return start, end - len(stripped) + len(token), token
    return start, after, None


def last_boxed(text: str) -> str | None:
    """Content of the last `\\boxed{...}` / `\\fbox{...}` / `\\boxed x`; None if there is none.
    The last box by starting position wins, so nested boxes give the innermost final one.
    A last box whose braces never close (a cut-off output) gives None: its answer is unknown."""
    box = _last_box(text, len(text))
    return None if box is None else box[2]


def final_boxes(text: str, parts: int = 1) -> str | None:
    """The final answer: the last box's content; for a gold of `parts` parts, the contents of
    the last boxes joined (`2, 3`) when together they hold that many parts and each ends at
    most _BOX_GAP characters before the next starts (a final statement, not intermediate
    boxes of the reasoning), none inside another."""
    boxes: list[tuple[int, int, str | None]] = []
    held, end = 0, len(text)
    while held < parts and (box := _last_box(text, end)) is not None and box[2] is not None:
        if boxes and not 0 <= boxes[-1][0] - box[1] <= _BOX_GAP:
            break
        boxes.append(box)
        held += len(split_parts(box[2]))
        end = box[0]
    if len(boxes) < 2 or held != parts:
        return last_boxed(text)
    cleaned = [clean_math_answer(content or "") for _, _, content in reversed(boxes)]
    return None if None in cleaned else ", ".join(cleaned)  # type: ignore[arg-type]


def clean_math_answer(content: str) -> str | None:
    """The boxed content as it goes to the verifier; None when empty. Whitespace trimmed, a
    sentence-final period dropped (`42.` -> `42`), thin-space digit groups joined
    (`10\\,000` -> `10000`). Nothing else: math-verify normalises the rest."""
    answer = content.strip()
    end = len(answer)  # an index, not repeated slicing: `1 . . . .` x 500k stays linear
    while end and answer[end - 1] == "." and answer[end - 2 : end] != "\\.":
        end -= 1
        while end and answer[end - 1].isspace():
            end -= 1
    return _THIN_SPACE_GROUP.sub("", answer[:end]) or None


def extract_math(
    gen: str, reasoning: str | None = None, starts_in_think: bool = False, parts: int = 1
) -> str | None:
    """The final boxed answer of a math output, cleaned (the final boxes of a gold of several
    `parts`, joined); None when there is none."""
    text = response_text(gen, reasoning, starts_in_think)
    if text is None:
        return None
    content = final_boxes(text, parts) if parts > 1 else last_boxed(text)
    return None if content is None else clean_math_answer(content)


# Final-answer anchors of unboxed outputs (the lenient policy); possessive runs: linear time.
_ANCHOR = re.compile(
    r"(?i:the\s++final\s++answer\s++is|the\s++answer\s++is|final\s++answer\s*+:|answer\s*+:)"
    r"|####"
)
_BOLD_END = re.compile(r"\*\*\s*+\$?\s*+(-?\d[\d,]*+(?:\.\d++)?)\s*+\$?\s*+\*\*[\s.]*+$")
_SPAN = r"\$\$?([^$]{1,1000})\$|\\\(([^\n]{1,1000}?)\\\)"
_MATH_SPAN = re.compile(_SPAN)
_NEXT_SPAN = re.compile(r"[ \t]*+(?:,|or|and)[ \t]*+(?:" + _SPAN + ")")  # `$5$ or $-5$`
# a period ends the sentence unless it is a decimal point (`42. I hope it is correct.`) or the
# first of `8:34 p.m.`
_SENTENCE_END = re.compile(r"(?<!\d[apAP])(?<!\d [apAP])\.(?!\d)|\s(?:because|since|which|so|as)\s")
# the published harnesses' last number (Qwen2.5-Math's parser), read with commas dropped;
# never from inside a word (`AZYUK2A`, `x2`)
_NUMBER = re.compile(r"(?<![A-Za-z_])-?\d*\.?\d+")
_COMMAND = re.compile(r"\\[A-Za-z]++")
_WORD = re.compile(r"[A-Za-z]{2,}")


def extract_anchored(
    gen: str, reasoning: str | None = None, starts_in_think: bool = False, problem: str = ""
) -> str | None:
    """The answer of a finished output with no box (the lenient policy): what follows the last
    "the (final) answer is", "Final Answer:", "Answer:" or "####" (a math span and those joined
    to it by a comma, "or", "and", else the rest of the line up to the sentence's end: of a
    sentence, its only math span or its last number), or a bold number ending the output, else
    the last number of the text, as the published harnesses read it, unless its line restates
    the `problem`. The caller passes only outputs that were not cut off."""
    text = response_text(gen, reasoning, starts_in_think)
    if not text:
        return None
    last = None
    for last in _ANCHOR.finditer(text):  # noqa: B007 (the last match is wanted)
        pass
    tail = text[-200:]
    bold = _BOLD_END.search(tail)
    if bold and (last is None or len(text) - len(tail) + bold.start() >= last.end()):
        return bold.group(1).replace(",", "")
    if last is None:
        return _last_number(text.replace(",", ""), problem.replace(",", ""))
    rest = text[last.end() :].lstrip(" \t:*")
    line = (rest if rest.startswith("$$") else rest.split("\n", 1)[0])[:2000]
    span = _MATH_SPAN.match(line)
    if span:  # and the spans joined to it: `$x = 5$ or $x = -5$` is both
        spans = [span]
        while next_span := _NEXT_SPAN.match(line, spans[-1].end()):
            spans.append(next_span)
        answer = ", ".join(s.group(1) or s.group(2) for s in spans)
    else:
        cut = _SENTENCE_END.search(line)
        answer = _of_sentence(line[: cut.start()] if cut else line)
    answer = clean_math_answer(answer.strip().strip("*$").strip()) or ""  # `$4.`: no span
    return answer if 0 < len(answer) <= 1000 else None


def _of_sentence(text: str) -> str:
    """A sentence's answer (`Billy sold 7 DVDs on Tuesday.`): its only math span, else its last
    number; anything with fewer than two words outside math is its own answer."""
    spans = _MATH_SPAN.findall(text)
    if len(_WORD.findall(_COMMAND.sub(" ", _MATH_SPAN.sub(" ", text)))) < 2:
        return text
    if len(spans) == 1:
        return spans[0][0] or spans[0][1]
    return _last_number(text.replace(",", ""), "") or text


def _last_number(text: str, problem: str) -> str | None:
    """The last number of `text`, unless the line holding it restates the problem (3+ words)."""
    number = None
    for number in _NUMBER.finditer(text):  # noqa: B007 (the last one)
        pass
    if number is None:
        return None
    start, end = text.rfind("\n", 0, number.start()) + 1, text.find("\n", number.end())
    line = " ".join(text[max(start, number.start() - 1000) : end if end >= 0 else None].split())
    restated = len(_WORD.findall(line)) >= 3 and line in " ".join(problem.split())
    return None if restated else number.group(0)


# How an output that records no finish reason shows it was cut: its last line, after its last
# box, ends with a comma, an operator, an ellipsis or a word no sentence ends with
_DANGLING = re.compile(
    r"(?:[,;:(=+]|\.\.\.|…|(?<![A-Za-z])(?:the|an|of|to|in|on|at|by|for|with|from|and|or|but"
    r"|so|if|then|that|which|is|are|was|be|we|let|me|us|this|its))[\s*]*+$"
)


def stops_mid_sentence(
    gen: str, reasoning: str | None = None, starts_in_think: bool = False
) -> bool:
    """Whether an output stops mid-sentence after its last answer (`...is 230. But just to be
    thorough, let me`, `So maybe \\boxed{10\\%} but...`) or never closes its reasoning: what
    a row without a finish reason is counted as unfinished for (`<think>` aside, a sentence
    ending without a period is finished: `I hope it is correct`)."""
    text = response_text(gen, reasoning, starts_in_think)
    if text is None:
        return True
    line = text[-2000:].rstrip().rsplit("\n", 1)[-1]
    box = _last_box(line, len(line))
    return _DANGLING.search(line, box[1] if box else 0) is not None


def canonical_answer(answer: str) -> str:
    """A normal form for majority voting: spacing, `\\left`/`\\right`, `\\text{}` wrappers,
    `dfrac`/`tfrac` and leading zeros of integers do not split votes."""
    text = TEXT_WRAPPER.sub(r"\1", answer)
    text = text.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    text = _SPACING.sub("", text)
    return _LEADING_ZEROS.sub("", text)
