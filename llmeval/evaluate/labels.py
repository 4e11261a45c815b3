"""How eval's table and the report name runs: task and model, the settings that tell runs of
one model on one task apart (only those that differ among the runs shown), and the files of a
run of several in a few words (`shards 0-2 of 3`)."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from llmeval.evaluate.segments import index_ranges
from llmeval.records import RunSpec, TaskScore
from llmeval.transcripts import ToolSettings

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


def run_settings(spec: RunSpec | None) -> dict[str, Any]:
    """The settings of a run that tell it from another of its model and task ({}: no spec)."""
    values = {} if spec is None else {name: getattr(spec, name) for name in RUN_SETTINGS}
    return {name: str(v) if isinstance(v, ToolSettings) else v for name, v in values.items()}


def setting_labels(
    settings: Sequence[Mapping[str, Any]], tasks: Sequence[str] | None = None
) -> list[str]:
    """Per run, `effort=high · temp=1.0`: its values of the settings that differ among the runs
    that record them (of its task, with `tasks`: a setting that differs only between contests,
    GPQA's letter template beside AIME's, tells no two runs apart); a run without a run spec
    names none, a setting left unset is not named."""
    keys = list(tasks) if tasks is not None else [""] * len(settings)
    pairs = list(zip(settings, keys, strict=True))
    shown = {key: _differing([s for s, k in pairs if k == key]) for key in set(keys)}
    return [
        " · ".join(f"{RUN_SETTINGS[n]}={_value(s[n])}" for n in shown[k] if s.get(n) not in _UNSET)
        for s, k in zip(settings, keys, strict=True)
    ]


def _differing(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    """The settings whose values differ among `runs` (those that record them)."""
    return [
        name
        for name in RUN_SETTINGS
        if len({json.dumps(s[name], sort_keys=True) for s in runs if name in s}) > 1
    ]


_UNSET: tuple[Any, ...] = (None, "", {})


def _value(value: Any) -> str:
    """A setting's value in a label: long texts (a template) by a short digest of their own."""
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    if len(text) <= 24 and text.isprintable():
        return text
    return "#" + hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:6]


def run_labels(scores: Sequence[TaskScore]) -> list[str]:
    """A label per run: its task, its model where the runs hold several models or settings tell
    them apart, those settings (`aime24 · Qwen3-8B · effort=high`), and its file name (or more
    of its path) where that still leaves two runs alike."""
    several = len({s.model for s in scores}) > 1
    settings = setting_labels([s.settings for s in scores], [s.task for s in scores])
    labels = [
        " · ".join([s.task, *([s.model] if several or extra else []), *([extra] if extra else [])])
        for s, extra in zip(scores, settings, strict=True)
    ]
    return distinct(labels, [s.file for s in scores])


def distinct(labels: list[str], files: list[str]) -> list[str]:
    """Labels told apart by their runs' file names (or more of their paths) where alike."""
    labels = list(labels)
    for label, count in Counter(labels).items():
        if count == 1:
            continue
        group = [i for i, lab in enumerate(labels) if lab == label]
        for part in _PATH_PARTS:
            names = [f"{label} ({part(Path(files[i]))})" for i in group]
            if len(set(names)) == len(names):
                break
        for i, name in zip(group, names, strict=True):
            labels[i] = name
    return labels


_PATH_PARTS = (lambda p: p.name, lambda p: f"{p.parent.name}/{p.name}", str)


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
