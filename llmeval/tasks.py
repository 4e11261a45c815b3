"""The task table: name -> data file, answer kind, prompt template; task from a file name."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

AnswerKind = Literal["math", "choice"]

# The R1 report's instruction, appended to the bare problem; `{problem}` is replaced
# literally (not str.format: the template itself holds braces).
MATH_TEMPLATE = "{problem}\nPlease reason step by step, and put your final answer within \\boxed{}."
CHOICE_TEMPLATE = (
    "{problem}\nPlease reason step by step, and put the letter of your final answer "
    "(A, B, C or D) within \\boxed{}."
)
PLACEHOLDER = "{problem}"

DATA_DIR = Path(__file__).resolve().parent / "data"


@dataclass(frozen=True)
class Task:
    """One benchmark: how its prompts are built and how its answers are judged."""

    name: str
    kind: AnswerKind
    template: str
    shipped: bool = True  # its problems ship in data/ (the generic task has none)

    @property
    def data_file(self) -> Path | None:
        """The benchmark file shipped in `data/` (None for the generic task)."""
        return DATA_DIR / f"{self.name}.jsonl" if self.shipped else None


TASKS: dict[str, Task] = {
    name: Task(name, "math", MATH_TEMPLATE)
    for name in (
        "aime24",
        "aime25",
        "aime26",
        "hmmt25",
        "math500",
        "amc23",
        "minerva_math",
        "olympiadbench",
    )
}
TASKS["gpqa_diamond"] = Task("gpqa_diamond", "choice", CHOICE_TEMPLATE)
# Any problems with boxed answers (a file of one's own): the math template and verifier; a
# run's problems are its run spec's input, else the file's own. Named, never guessed from a
# file name.
GENERIC = Task("math", "math", MATH_TEMPLATE, shipped=False)

# Other harnesses' names of these benchmarks (NeMo-Skills' folders eval-results/<name>/).
ALIASES = {"math-500": "math500", "hmmt_feb25": "hmmt25"}

# Longest names first so "aime24" never shadows a longer name that starts with it.
_BY_LENGTH = sorted(TASKS, key=len, reverse=True)


def get_task(name: str) -> Task | None:
    """The task of a name as users write it (`aime24`, upstream `math_opensource/aime24`;
    `math`: the generic task)."""
    base = name.strip().rsplit("/", 1)[-1].lower()
    return GENERIC if base == GENERIC.name else TASKS.get(ALIASES.get(base, base))


def unknown_task(name: str) -> str:
    """What an unknown task name is told: the nearest names, and every name."""
    names = [*TASKS, GENERIC.name]
    base = name.strip().rsplit("/", 1)[-1].lower()
    near = difflib.get_close_matches(base, names, n=2, cutoff=0.5)
    nearest = f" (nearest: {', '.join(near)})" if near else ""
    return (
        f"unknown task {name!r}{nearest}; tasks: {', '.join(TASKS)}, and math (any problems "
        "with a boxed answer)"
    )


def task_from_filename(path: str | Path) -> Task | None:
    """The task a file name points to: `aime24_bz64.jsonl` -> aime24; None if none fits."""
    stem = Path(path).name.lower()
    if stem in ALIASES:
        return TASKS[ALIASES[stem]]
    for find in (re.match, re.search):  # a name opening the file name, else one inside it
        for name in _BY_LENGTH:
            if find(rf"(?<![a-z0-9]){re.escape(name)}(?![a-z0-9])", stem):
                return TASKS[name]
    return None


def render_prompt(template: str, problem: str) -> str:
    """The user message: the template with `{problem}` replaced by the problem text."""
    if PLACEHOLDER not in template:
        return f"{problem}{template}" if template.startswith("\n") else f"{problem}\n{template}"
    return template.replace(PLACEHOLDER, problem)
