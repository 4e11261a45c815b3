"""The settings a run's samples were drawn under: their id (each row records it) and the
history a resume with --force keeps in the run spec's `segments`."""

from __future__ import annotations

import json

from llmeval.records import RunSpec, Segment, cache_key


def segment_of(spec: RunSpec) -> Segment:
    """A spec's settings as a segment: the fields that change samples, and their id."""
    ignored = RunSpec.RESUMABLE_CHANGES | {"schema_version"}
    fields = {k: v for k, v in spec.model_dump(mode="json").items() if k not in ignored}
    return Segment(id=cache_key(json.dumps(fields, sort_keys=True), size=12), fields=fields)


def continued(spec: RunSpec, stored: RunSpec, changed: bool) -> RunSpec:
    """`spec` as it continues the run `stored`: the stored segments kept and, when the settings
    `changed` (--force), the stored settings and these added."""
    segments = list(stored.segments)
    if changed:
        segments = segments or [segment_of(stored)]
        mine = segment_of(spec)
        if all(s.id != mine.id for s in segments):
            segments.append(mine)
    model_date = spec.model_date or stored.model_date  # a resume without --model-date keeps it
    return spec.model_copy(update={"segments": segments, "model_date": model_date})
