"""Runs whose samples were drawn under several settings (a resume with --force): which samples
under which settings, from the `settings` id each row records and the run spec's segments.
Pure: no I/O."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from llmeval.records import RunSpec, Segment

UNRECORDED = "unrecorded"


def index_ranges(indices: Iterable[int]) -> str:
    """Indices as ranges: `0-79`, `0-3, 8, 10-11` (sorted, each once)."""
    spans: list[list[int]] = []
    for index in sorted(set(indices)):
        if spans and index == spans[-1][1] + 1:
            spans[-1][1] = index
        else:
            spans.append([index, index])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)


def _shown(value: Any, limit: int = 40) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _differing(segments: list[Segment]) -> list[str]:
    """The fields whose values differ among `segments`."""
    names = sorted({k for s in segments for k in s.fields})
    return [k for k in names if len({json.dumps(s.fields.get(k)) for s in segments}) > 1]


def mixed_settings(spec: RunSpec | None, drawn: dict[str | None, set[int]]) -> str | None:
    """`samples 0-79 at temperature 0.6, 80-95 at temperature 1.0` when a run's samples were
    drawn under several settings (`drawn`: the sample indices under each row's settings id; rows
    without one were drawn before any change: the first segment's), else None."""
    segments = spec.segments if spec is not None else []
    first = segments[0].id if segments else UNRECORDED
    groups: dict[str, set[int]] = {}
    for sid, indices in drawn.items():
        groups.setdefault(sid or first, set()).update(indices)
    if len(groups) < 2:
        return None
    known = {s.id: s for s in segments}
    order = [s.id for s in segments if s.id in groups]
    order += sorted((g for g in groups if g not in known), key=lambda g: min(groups[g]))
    fields = _differing([known[g] for g in order if g in known])
    parts = []
    for sid in order:
        if sid in known and fields:
            how = ", ".join(f"{k} {_shown(known[sid].fields.get(k))}" for k in fields)
        else:
            how = f"settings {sid} (not in the run spec)" if sid != UNRECORDED else "unrecorded"
        parts.append(f"{index_ranges(groups[sid])} at {how}")
    return "samples " + "; ".join(parts)
