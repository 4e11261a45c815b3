"""The task registry: every task's name, answer kind, prompt template, date, source and checksum,
whether shipped in `data/` or added by the user (`llmeval task add`, kept in the user task folder);
a task from a name or a file name."""

from __future__ import annotations

import datetime
import difflib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator

AnswerKind = Literal["math", "choice"]
# "held": the day the contest was sat (its first day, for a set of two papers); "published":
# the day the set became public (a benchmark gathered from older sources)
DateKind = Literal["held", "published"]

# The R1 report's instruction, appended to the bare problem; `{problem}` is replaced
# literally (not str.format: the template itself holds braces).
MATH_TEMPLATE = "{problem}\nPlease reason step by step, and put your final answer within \\boxed{}."
CHOICE_TEMPLATE = (
    "{problem}\nPlease reason step by step, and put the letter of your final answer "
    "(A, B, C or D) within \\boxed{}."
)
PLACEHOLDER = "{problem}"

DATA_DIR = Path(__file__).resolve().parent / "data"
TASKS_ENV = "LLMEVAL_TASKS"  # the user task folder, if not the default under the data home
# what a user task may be called: a file name that `get_task` reads back the same
NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


@dataclass(frozen=True)
class Source:
    """Where a task's problems come from: a repository, the path in it, the commit, the licence;
    of a user task, the path it was added from and the form its files had."""

    repository: str
    path: str
    commit: str = ""
    licence: str = ""
    form: str = ""  # a user task's: "MathArena folder", "CSV", "JSONL", ...

    def __str__(self) -> str:
        if self.repository:
            return f"{self.repository}, {self.path}, {self.commit} ({self.licence})"
        return f"{self.path} ({self.form})" if self.form else self.path


@dataclass(frozen=True)
class Task:
    """One benchmark: how its prompts are built, how its answers are judged, when it was held,
    where its problems come from and their SHA-256."""

    name: str
    kind: AnswerKind
    template: str
    date: str | None = None  # ISO date (see `date_kind`); None: the generic task
    date_kind: DateKind = "held"
    title: str = ""
    source: Source | None = None
    sha256: str | None = None  # of its data file as shipped (or as added)
    folder: Path | None = DATA_DIR  # where its data file lies; None: no data (generic)

    @property
    def data_file(self) -> Path | None:
        """Its problems: `<folder>/<name>.jsonl` (None for the generic task)."""
        return None if self.folder is None else self.folder / f"{self.name}.jsonl"

    @property
    def shipped(self) -> bool:
        """Whether its problems ship in `data/` (else the user added them, or it has none)."""
        return self.folder == DATA_DIR


def _shipped(name: str, title: str, date: str, source: tuple[str, ...], sha256: str,
             kind: AnswerKind = "math", date_kind: DateKind = "held") -> Task:  # fmt: skip
    template = CHOICE_TEMPLATE if kind == "choice" else MATH_TEMPLATE
    return Task(name, kind, template, date, date_kind, title, Source(*source), sha256)


# Dates: a contest's day (AIME I's for AIME I and II, AMC 12A's for 12A and 12B, so that "held
# after a model's date" holds for every problem); a benchmark gathered from older problems, the
# day its problems became public. Sources and errata: data/README.md.
QWEN = "QwenLM/Qwen2.5-Math"
LLMEVAL = "jianzhnie/LLMEval"
MATHARENA = "eth-sri/matharena"
TASKS: dict[str, Task] = {task.name: task for task in (
    _shipped("aime24", "AIME 2024 I and II", "2024-02-01",
             (QWEN, "evaluation/data/aime24/test.jsonl", "a45202b", "MIT"),
             "80fcfac188b49c35ee7977a5405500795cddf6a91782d597ca6721ec4ef1f637"),
    _shipped("aime25", "AIME 2025 I and II", "2025-02-06",
             ("GAIR-NLP/AIME-Preview", "eval/data/aime/test2025-I.jsonl + test2025-II.jsonl",
              "7011a9e", "none stated"),
             "5ca12ae0c22377e3252a2751f72af01508af1710af47b433a4aeb06d044134b8"),
    _shipped("aime26", "AIME 2026 I and II", "2026-02-05",
             (LLMEVAL, "data/aime26.jsonl", "66572ad", "Apache-2.0"),
             "8801dca6966c56e4f059334f9b8c7db2984318059fc203479163f484d102f551"),
    _shipped("hmmt24", "HMMT February 2024", "2024-02-17",
             (MATHARENA, "data/hmmt/hmmt_feb_2024", "96440b2", "MIT"),
             "0ef4404ad5139b6b635c5b3d47d723456dfc502bd225f868ec2b7a1137dd3217"),
    _shipped("hmmt25", "HMMT February 2025", "2025-02-15",
             (LLMEVAL, "data/hmmt25.jsonl", "66572ad", "Apache-2.0"),
             "a82f6b915f01e6c1fb80dbf703705645547e4eff98a0dbdc196e821c23391000"),
    _shipped("cmimc24", "CMIMC 2024", "2024-03-15",
             (MATHARENA, "data/cmimc/cmimc_2024", "96440b2", "MIT"),
             "6f582af3462d0bb255d515ab044eecf2d38c85f4bcc74478cb07b976fd65d177"),
    _shipped("amc23", "AMC 12A and 12B 2023", "2023-11-08",
             (QWEN, "evaluation/data/amc23/test.jsonl", "a45202b", "MIT"),
             "bcb69f2efcd0b8251afa1d8ffc50883e75b4ac995a4cddf7e7a4f11cd464792c"),
    _shipped("math500", "MATH-500 (of the MATH test set)", "2021-03-05",
             ("hkust-nlp/simpleRL-reason", "examples/simplelr_math_eval/data/math500/test.jsonl",
              "cf1c785", "MIT"),
             "70c3560b38552e340804ec21b6a5c9be0309dff3df1a31755cd3ff3333602c0a",
             date_kind="published"),
    _shipped("minerva_math", "Minerva OCW courses", "2022-06-29",
             (QWEN, "evaluation/data/minerva_math/test.jsonl", "a45202b", "MIT"),
             "6879c0145ca01398ede0b644e4407446429aad7181ec3253a7fbb8b27ca06900",
             date_kind="published"),
    _shipped("olympiadbench", "OlympiadBench (English, text-only maths)", "2024-02-21",
             (QWEN, "evaluation/data/olympiadbench/test.jsonl", "a45202b", "MIT"),
             "c6e94c85a2da35ce46f54bd24f2d33681025297a0d331f69d30f8a8538182800",
             date_kind="published"),
    _shipped("gpqa_diamond", "GPQA Diamond", "2023-11-20",
             (LLMEVAL, "data/gpqa_diamond.jsonl", "66572ad", "Apache-2.0"),
             "8bd5f3e820fe801291f8b165f761ca70d45af5dee56bc7ea85153e3d5ada7e7a",
             kind="choice", date_kind="published"),
)}  # fmt: skip
# Any problems with boxed answers (a file of one's own): the math template and verifier; a
# run's problems are its run spec's input, else the file's own. Named, never guessed from a
# file name.
GENERIC = Task("math", "math", MATH_TEMPLATE, folder=None)

# Other harnesses' names of these benchmarks (NeMo-Skills' folders eval-results/<name>/,
# MathArena's competitions).
ALIASES = {"math-500": "math500", "hmmt_feb25": "hmmt25", "hmmt_feb_2025": "hmmt25",
           "hmmt_feb_2024": "hmmt24", "cmimc_2024": "cmimc24"}  # fmt: skip


def user_tasks_dir() -> Path:
    """The user task folder: `$LLMEVAL_TASKS`, else `llmeval/tasks` under the user's data
    folder (`$XDG_DATA_HOME`, else ~/.local/share)."""
    if os.environ.get(TASKS_ENV):
        return Path(os.environ[TASKS_ENV]).expanduser()
    home = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(home) / "llmeval" / "tasks"


def meta_file(name: str, folder: Path | None = None) -> Path:
    """Where a user task's registry entry lies (beside its data file `<name>.jsonl`)."""
    return (folder or user_tasks_dir()) / f"{name}.task.json"


def user_task(name: str, folder: Path | None = None) -> Task | None:
    """A task the user added, by its name (None: no such task, or an entry not readable)."""
    folder = folder or user_tasks_dir()
    path = meta_file(name, folder)
    if not NAME.fullmatch(name) or not path.is_file():
        return None
    try:
        entry: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return Task(
            name, entry["kind"], entry["template"], entry["date"], entry.get("date_kind", "held"),
            entry.get("title", ""), Source(**entry["source"]), entry["sha256"], folder,
        )  # fmt: skip
    except (OSError, ValueError, KeyError, TypeError):
        return None


def user_tasks() -> list[Task]:
    """Every task in the user task folder, by name."""
    folder = user_tasks_dir()
    names = sorted(p.name.removesuffix(".task.json") for p in folder.glob("*.task.json"))
    return [task for name in names if (task := user_task(name, folder)) is not None]


def get_task(name: str) -> Task | None:
    """The task of a name as users write it (`aime24`, upstream `math_opensource/aime24`;
    `math`: the generic task; a task the user added)."""
    base = name.strip().rsplit("/", 1)[-1].lower()
    if base == GENERIC.name:
        return GENERIC
    return TASKS.get(ALIASES.get(base, base)) or user_task(base)


def taken(name: str) -> bool:
    """Whether a name is a shipped task's, an alias or the generic task's (a user task may not
    take it)."""
    return name in TASKS or name in ALIASES or name == GENERIC.name


def task_names() -> list[str]:
    """Every task's name: the shipped ones, then the user's own (`task add`)."""
    return [*TASKS, *(t.name for t in user_tasks())]


def unknown_task(name: str) -> str:
    """What an unknown task name is told: the nearest names, and every name."""
    names = [*task_names(), GENERIC.name]
    base = name.strip().rsplit("/", 1)[-1].lower()
    near = difflib.get_close_matches(base, names, n=2, cutoff=0.5)
    nearest = f" (nearest: {', '.join(near)})" if near else ""
    return (
        f"unknown task {name!r}{nearest}; tasks: {', '.join(names[:-1])}, and math (any "
        "problems with a boxed answer)"
    )


def task_from_filename(path: str | Path) -> Task | None:
    """The task a file name points to: `aime24_bz64.jsonl` -> aime24; None if none fits. A
    shipped task's name wins over a user task's."""
    stem = Path(path).name.lower()
    if stem in ALIASES:
        return TASKS[ALIASES[stem]]
    for tasks in (list(TASKS.values()), user_tasks()):
        by_length = sorted(tasks, key=lambda t: len(t.name), reverse=True)  # aime24 < aime24x
        for find in (re.match, re.search):  # a name opening the file name, else one inside it
            for task in by_length:
                if find(rf"(?<![a-z0-9]){re.escape(task.name)}(?![a-z0-9])", stem):
                    return task
    return None


def iso_date(text: str) -> str:
    """`text` when it is a calendar date written YYYY-MM-DD (the form every date here takes),
    else a ValueError saying so."""
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            datetime.date.fromisoformat(text)
            return text
    except ValueError:
        pass
    raise ValueError(f"{text!r} is not a date written YYYY-MM-DD")


# a date field of an options model: checked as `iso_date` checks it
IsoDate = Annotated[str, AfterValidator(iso_date)]


def render_prompt(template: str, problem: str) -> str:
    """The user message: the template with `{problem}` replaced by the problem text."""
    if PLACEHOLDER not in template:
        return f"{problem}{template}" if template.startswith("\n") else f"{problem}\n{template}"
    return template.replace(PLACEHOLDER, problem)
