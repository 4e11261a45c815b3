"""What a run is called, by one function every screen uses (eval's table, its runs in progress
and notes, `--follow`, the report, the leaderboard): `aime24 · Qwen3-8B · effort=high`, its
task, its model and the settings that tell it from the runs shown beside it, and its file where
that still leaves two alike. A run continued with --force is named by its mixed settings
(`temp=mixed (0.6, 1.0)`), never by its last ones. Its model is its run spec's, else its rows',
else the nearest folder that is not a benchmark's or a harness's."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llmeval.records import RunSpec, TaskScore
from llmeval.runs.spec import differing, index_ranges

# The run spec's fields that make two runs of one model on one task differ, and their names in
# a label (`effort=high`), in the order labels show them.
RUN_SETTINGS = {
    "reasoning_effort": "effort",
    "thinking_budget": "budget",
    "temperature": "temp",
    "max_tokens": "max_tokens",
    "prompt_template": "template",
    "system_prompt": "system",
    "top_p": "top_p",
    "top_k": "top_k",
    "min_p": "min_p",
    "seed": "seed",
    "extra_body": "extra",
    "tools": "tools",  # --tools and its limits: runs with and without tools are two runs
}
MIXED = "mixed"  # a setting's value in `run_settings` when the run's samples differ in it
_UNSET: tuple[Any, ...] = (None, "", {})
# Folders named for a benchmark or a harness's results, never for a model: NeMo-Skills
# <model>/eval-results/<benchmark>/, LIMO outputs/<model>/<benchmark>/, the Qwen2.5-Math
# harness <model>/math_eval/<data>/ and <model>/<data>_eval/<data>/.
_NOT_MODELS = {"eval-results", "aime", "amc", "math", "minerva", "gpqa", "gaokao", "kaoyan",
               "cn_math_2024", "grade_school_math"}  # fmt: skip
_HARNESS_FOLDER = re.compile(r"[\w.-]*_eval")


def run_settings(spec: RunSpec | None) -> dict[str, Any]:
    """The settings of a run that tell it from another of its model and task ({}: no spec); a
    setting its samples were drawn under several values of is `{"mixed": [values]}`."""
    if spec is None:
        return {}
    settings = {name: getattr(spec, name) for name in RUN_SETTINGS}
    settings["tools"] = spec.tools and str(spec.tools)  # `python/native/8`
    for name in differing(spec.segments):
        if name in settings:
            settings[name] = {MIXED: [s.fields.get(name) for s in spec.segments]}
    return settings


def model_folder(path: Path, is_benchmark: Callable[[str], bool]) -> str:
    """The model a file's folders name: the nearest folder that is not a benchmark's (a task
    or its alias, `is_benchmark`) or a harness's results folder; else the file's own folder."""
    folders = [f.name for f in path.resolve().parents if f.name]
    for name in folders:
        low = name.lower()
        if low not in _NOT_MODELS and not _HARNESS_FOLDER.fullmatch(low) and not is_benchmark(name):
            return name
    return folders[0] if folders else path.stem


@dataclass(frozen=True)
class RunName:
    """A run's name: its task, its model with the settings that tell it apart (what a
    leaderboard row shows), and its file where that still leaves two runs alike."""

    task: str
    model: str
    file: str = ""

    def __str__(self) -> str:
        return f"{self.task} · {self.model}" + (f" ({self.file})" if self.file else "")

    @property
    def row(self) -> str:
        """The leaderboard row: the model and settings, and the file where needed."""
        return self.model + (f" ({self.file})" if self.file else "")


def run_names(scores: Sequence[TaskScore]) -> list[RunName]:
    """Each run's name among the runs shown (`RunName`). A model's runs name the settings
    that differ between two of its runs on one task, on every task (so that a leaderboard row
    holds one settings across tasks; a cap that differs only between contests names none),
    and any setting they hold mixed."""
    varying: dict[str, set[str]] = {}
    by_run: dict[tuple[str, str], list[TaskScore]] = {}
    for score in scores:
        by_run.setdefault((score.model, score.task), []).append(score)
    for (model, _), alike in by_run.items():
        varying.setdefault(model, set()).update(_varying([s.settings for s in alike]))
    models = []
    for score in scores:
        shown = [n for n in RUN_SETTINGS if n in varying[score.model] or _mixed(
            score.settings.get(n))]  # fmt: skip
        models.append(" · ".join(filter(None, (score.model, _label(score.settings, shown)))))
    names = [RunName(s.task, m) for s, m in zip(scores, models, strict=True)]
    for key, count in Counter((s.task, m) for s, m in zip(scores, models, strict=True)).items():
        if count > 1:
            group = [i for i, s in enumerate(scores) if (s.task, models[i]) == key]
            files = _distinct_files([scores[i].file for i in group])
            for i, file in zip(group, files, strict=True):
                names[i] = RunName(scores[i].task, models[i], file)
    return names


def _distinct_files(files: list[str]) -> list[str]:
    """The shortest tails of some paths that tell them apart: the name, the folder and name,
    else the whole path."""
    for part in (lambda p: p.name, lambda p: f"{p.parent.name}/{p.name}", str):
        tails = [part(Path(f)) for f in files]
        if len(set(tails)) == len(tails):
            return tails
    return files


def setting_labels(settings: Sequence[Mapping[str, Any]]) -> list[str]:
    """Per side of a comparison (the settings its runs share), `effort=high · temp=1.0`: its
    values of the settings that differ among the sides and of those it holds mixed."""
    varying = _varying(settings)
    return [
        _label(s, [n for n in RUN_SETTINGS if n in varying or _mixed(s.get(n))]) for s in settings
    ]


def _label(settings: Mapping[str, Any], names: Sequence[str]) -> str:
    """`effort=high · temp=1.0`: the values of `names` a run's settings hold (unset: none)."""
    return " · ".join(
        f"{RUN_SETTINGS[n]}={_value(settings[n])}" for n in names if settings.get(n) not in _UNSET
    )


def _varying(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    """The settings whose values differ among `runs` (those that record them)."""
    return [
        name
        for name in RUN_SETTINGS
        if len({json.dumps(s[name], sort_keys=True) for s in runs if name in s}) > 1
    ]


def _mixed(value: Any) -> bool:
    return isinstance(value, dict) and set(value) == {MIXED}


def _value(value: Any) -> str:
    """A setting's value in a label: long texts (a template) by a short digest of their own;
    mixed values as `mixed (0.6, 1.0)`."""
    if _mixed(value):
        return f"{MIXED} ({', '.join(_value(v) for v in value[MIXED])})"
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    if len(text) <= 24 and text.isprintable():
        return text
    return "#" + hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:6]


def shard_layout(files: Sequence[str], shards: Sequence[str]) -> str:
    """A run's files in a few words: "" for one file; `shards 0-2 of 3`, `file + shards 0, 2
    of 3; 1 of 4` (the unsharded file and shards of two N: a run resharded half-way)."""
    if not shards:
        return "" if len(files) < 2 else f"{len(files)} files"
    by_count: dict[int, list[int]] = {}
    for text in shards:
        index, count = (int(part) for part in text.split("/"))
        by_count.setdefault(count, []).append(index)
    groups = "; ".join(f"{index_ranges(ks)} of {n}" for n, ks in sorted(by_count.items()))
    return ("file + " if len(files) > len(shards) else "") + "shards " + groups
