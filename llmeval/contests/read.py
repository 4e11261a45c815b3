"""A contest's files as problems: a MathArena folder (`problems/<i>.tex`, `answers.csv`, an
optional `config.yaml` with the instruction and date), a CSV with problem and answer columns, a
JSONL of problems (`problems.load_problems`) or a generation file in any layout eval reads
(`evaluate.layouts`), each problem once."""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llmeval.errors import InputError
from llmeval.evaluate.layouts import MISSING, RowSource, nested, text_field
from llmeval.files import read_file, without_bom
from llmeval.jsonl import read_dicts
from llmeval.problems import InputKeys, load_problems
from llmeval.records import Problem
from llmeval.tasks import iso_date

MATHARENA = "MathArena folder"
# fields a generation row holds its outputs in (layouts.py's harnesses, ours, upstream's)
_OUTPUTS = {"gen", "generation", "resps", "responses", "generated_responses", "code"}


@dataclass
class Contest:
    """A contest as read: its problems in order, the form its files had, and what its own
    files say of it (MathArena's config: the instruction, the date)."""

    problems: list[Problem]
    form: str
    instruction: str | None = None
    date: str | None = None


def read_contest(path: Path, name: str) -> Contest:
    """The problems of a contest's files; ids its files lack are `<name>/<i>`, in order."""
    if path.is_dir():
        return _matharena(path, name)
    if path.suffix.lower() == ".csv":
        return Contest(_csv(path, name), "CSV")
    if path.suffix.lower() == ".json":  # one JSON document (SkyThought's results.json)
        return _generations(path, name)
    first = next(read_dicts(path, skip_torn=False), None)
    if first is None:
        raise InputError(path, "no problems in the file")
    row = first[1]
    if not (_OUTPUTS & row.keys()) and "answer" in row:  # problems, not generations
        keys = InputKeys(question="question" if "question" in row and "problem" not in row
                         and "prompt" not in row else None)  # fmt: skip
        problems = load_problems(path, keys)
        if all(p.id.startswith("sha256:") for p in problems):  # no ids: number them
            problems = [p.model_copy(update={"id": f"{name}/{i}"})
                        for i, p in enumerate(problems, start=1)]  # fmt: skip
        return Contest(problems, "JSONL")
    return _generations(path, name)


def _matharena(folder: Path, name: str) -> Contest:
    """MathArena's layout: `problems/<i>.tex` and `answers.csv` (`id,answer`), one answer per
    problem; `config.yaml`'s `instruction` (a format string: `{{}}` is `{}`) and `date`."""
    answers_csv, problems_dir = folder / "answers.csv", folder / "problems"
    if not answers_csv.is_file() or not problems_dir.is_dir():
        raise InputError(folder, "a folder needs problems/<i>.tex and answers.csv (MathArena's "
                         "layout); else give a JSONL or CSV file")  # fmt: skip
    texts: dict[int, str] = {}
    for tex in problems_dir.glob("*.tex"):
        if not tex.stem.isdigit():
            raise InputError(tex, "a problem file is named by its number (problems/<i>.tex)")
        texts[int(tex.stem)] = _text(tex).strip()
        if not texts[int(tex.stem)]:
            raise InputError(tex, "is empty")
    answers: dict[int, str] = {}
    for line, row in _csv_rows(answers_csv, ("id", "answer")):
        number = str(row["id"]).strip()
        if not number.isdigit() or int(number) in answers:
            why = "is not a problem number" if not number.isdigit() else "comes twice"
            raise InputError(answers_csv, f"id {number!r} {why}", line=line)
        answers[int(number)] = row["answer"]
    if texts.keys() != answers.keys():
        lone = sorted(texts.keys() - answers.keys())
        extra = sorted(answers.keys() - texts.keys())
        raise InputError(folder, f"problems without an answer: {lone or 'none'}; answers "
                         f"without a problem: {extra or 'none'}")  # fmt: skip
    problems = [Problem(id=f"{name}/{i}", problem=texts[i], answer=answers[i])
                for i in sorted(texts)]  # fmt: skip
    config = _config(folder / "config.yaml")
    instruction = config.get("instruction")
    if instruction is not None:  # MathArena formats it: `{{}}` stands for `{}`
        instruction = instruction.replace("{{", "{").replace("}}", "}")
    return Contest(problems, MATHARENA, instruction, _date(config, folder / "config.yaml"))


def _csv(path: Path, name: str) -> list[Problem]:
    """A CSV with `problem` (or `question`) and `answer` columns, `id` optional."""
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    for line, row in _csv_rows(path, ("answer",), question=True):
        text = row.get("problem", row.get("question", ""))
        if not text.strip():
            raise InputError(path, "empty problem", line=line)
        pid = (row.get("id") or "").strip() or f"{name}/{len(problems) + 1}"
        if pid in seen:
            raise InputError(path, f"id {pid!r} also on line {seen[pid]}", line=line)
        seen[pid] = line
        problems.append(Problem(id=pid, problem=text, answer=row["answer"]))
    if not problems:
        raise InputError(path, "no problems in the file")
    return problems


def _csv_rows(
    path: Path, needed: tuple[str, ...], question: bool = False
) -> list[tuple[int, dict[str, str]]]:
    """The rows of a CSV file by its header (line numbers as a reader counts them); a missing
    column or an empty answer names the file (and line)."""
    reader = csv.DictReader(io.StringIO(_text(path), newline=""))
    header = [h.strip() for h in reader.fieldnames or []]
    reader.fieldnames = header
    missing = [repr(column) for column in needed if column not in header]
    if question and not {"problem", "question"} & set(header):
        missing.append("'problem' (or 'question')")
    if missing:
        raise InputError(path, f"no column {', '.join(missing)}; its header has "
                         f"{', '.join(map(repr, header)) or 'nothing'}")  # fmt: skip
    rows = []
    for row in reader:
        line = reader.line_num
        answer = (row.get("answer") or "").strip()
        if not answer:
            raise InputError(path, "empty answer", line=line)
        rows.append((line, {**{k: v or "" for k, v in row.items() if k}, "answer": answer}))
    return rows


def _generations(path: Path, name: str) -> Contest:
    """A generation file in any layout eval reads: each problem once (its id, else its text),
    with the gold its rows give; rows that disagree on a gold name both lines."""
    source = RowSource(path)
    found: dict[str, tuple[int, Problem]] = {}
    for line, row in source:
        text = next((v for k in ("problem", "question", "doc.problem", "doc.question")
                     if isinstance(v := nested(row, k), str) and v.strip()), None)  # fmt: skip
        prompt = None if text else text_field(nested(row, "prompt"), "prompt", path, line)
        gold = text_field(nested(row, "answer"), "answer", path, line).strip()
        ids = (nested(row, k) for k in ("problem_id", "doc_id", "id", "idx"))
        pid_value = next((v for v in ids if v is not MISSING and v is not None), None)
        key = str(pid_value) if pid_value is not None else (text or prompt or "")
        if not key or not gold:
            raise InputError(path, "a row without a problem (problem, question or prompt) or "
                             "without a gold answer (answer)", line=line)  # fmt: skip
        if key in found:
            first_line, known = found[key]
            if known.answer != gold:
                raise InputError(path, f"gold {gold!r} of problem {key!r} differs from "
                                 f"{known.answer!r} on line {first_line}", line=line)  # fmt: skip
            continue
        pid = str(pid_value) if pid_value is not None else f"{name}/{len(found) + 1}"
        found[key] = line, Problem(id=pid, problem=text, prompt=prompt, answer=gold)
    source.said()
    if not found:
        raise InputError(path, "no problems in the file")
    kind = "JSON" if path.suffix.lower() == ".json" else "JSONL"
    return Contest([p for _, p in found.values()], f"{kind} ({source.layout or 'generations'})")


def _text(path: Path) -> str:
    try:
        return without_bom(read_file(path), path).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _config(path: Path) -> dict[str, Any]:
    """MathArena's `config.yaml`, read as the flat `key: value` lines it holds (a scalar a line:
    quoted as YAML quotes, or plain); nested values are not read. No YAML library is needed."""
    if not path.is_file():
        return {}
    config: dict[str, Any] = {}
    for line, raw in enumerate(_text(path).splitlines(), start=1):
        match = re.fullmatch(r"([A-Za-z_][\w-]*):\s*(.*?)\s*", raw)
        if raw.startswith((" ", "\t", "#", "-")) or not raw.strip() or match is None:
            continue
        key, value = match[1], match[2]
        try:
            config[key] = _scalar(value)
        except ValueError as exc:
            raise InputError(path, f"{key}: {exc}", line=line) from None
    return config


def _scalar(value: str) -> Any:
    """A YAML scalar on one line: "double" (JSON's escapes are YAML's), 'single' ('' is '),
    or plain (a comment after ` #` dropped)."""
    if value.startswith('"'):
        end = value.rfind('"')
        if end == 0:
            raise ValueError("an unclosed double-quoted value")
        return json.loads(value[: end + 1])
    if value.startswith("'"):
        if not value.endswith("'") or len(value) < 2:
            raise ValueError("an unclosed single-quoted value")
        return value[1:-1].replace("''", "'")
    return value.split(" #", 1)[0].strip()


def _date(config: dict[str, Any], path: Path) -> str | None:
    """The config's `date` (YYYY-MM-DD), if it has one."""
    date = config.get("date")
    try:
        return None if date is None else iso_date(str(date))
    except ValueError as exc:
        raise InputError(path, f"date: {exc}") from None
