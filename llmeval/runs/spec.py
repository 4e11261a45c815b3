"""A run's settings: the one reader of run specs, the one rule that decides whether files are
one run (asked by infer before it writes and by eval before it reads), and the settings history
its samples were drawn under (`--force` continues a run under new settings and keeps the old).

Each file of a run has a spec; its history is its `segments` (each settings its samples were
drawn under, oldest first), or its one settings. Files are one run when one of them, the
leader, has in its history the current settings of every other: a shard continued with
--force and a shard started fresh at the new settings are one run, drawn under mixed settings;
a shard still at the old settings lags behind the leader (eval reads it, infer refuses to draw
more at the old settings). Files none of which holds the others' settings are two runs.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from llmeval.errors import InputError, UsageError
from llmeval.files import link_out_of_folder, read_file, without_bom
from llmeval.records import RunSpec, Segment, cache_key
from llmeval.runs.layout import RunFiles, spec_path
from llmeval.runs.pairs import Shard, parse_shard

log = logging.getLogger("llmeval")
UNRECORDED = "unrecorded"
# The fields a settings id has hashed since ids were introduced; a field added since enters
# the id only when it is set, so that a run's id is the same whichever llmeval computes it.
_ID_FIELDS = frozenset(
    {"temperature", "top_p", "top_k", "min_p", "max_tokens", "seed", "system_prompt",
     "prompt_template", "extra_body", "reasoning_effort", "thinking_budget", "model", "task",
     "input_keys", "input_sha256"}
)  # fmt: skip


def read_spec(file: Path) -> RunSpec | None:
    """The run spec of a generation file (`<file>.spec.json`), None when there is none; a spec
    that is a link out of its folder is not read (a warning says so), one that is no run spec
    is an error naming it."""
    path = spec_path(file)
    target = link_out_of_folder(path)
    if target is not None:
        log.warning("%s is a link out of its folder (to %s): not read", path, target)
        return None
    if not path.exists():
        return None
    try:
        spec = RunSpec.read(without_bom(read_file(path), path))
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(map(str, error["loc"])) or "the file"
        raise InputError(path, f"not a valid run spec ({where}: {error['msg']})") from None
    own = RunSpec.own_fields_in(spec.extra_body)
    if own:
        log.warning(
            "%s: its run's --extra-body replaced llmeval's own %s in every request (the "
            "per-sample seeds or settings the rows record were not sent)",
            path,
            ", ".join(own),
        )
    return spec


def settings_of(spec: RunSpec) -> Segment:
    """A spec's current settings as a segment: the fields that change samples, and their id."""
    ignored = RunSpec.RESUMABLE_CHANGES | {"schema_version"}
    fields = {
        name: value
        for name, value in spec.model_dump(mode="json").items()
        if name not in ignored and (name in _ID_FIELDS or value != _default(name))
    }
    return Segment(id=cache_key(json.dumps(fields, sort_keys=True), size=12), fields=fields)


def _default(name: str) -> Any:
    """A RunSpec field's default, as JSON would hold it."""
    return RunSpec.model_fields[name].get_default(call_default_factory=True)


def history(spec: RunSpec) -> list[Segment]:
    """Every settings a file's samples were drawn under, oldest first: its segments, else its
    one settings."""
    return list(spec.segments) or [settings_of(spec)]


@dataclass(frozen=True)
class SpecFile:
    """One file of a run as the one-run rule sees it: its path, spec and the shard it is."""

    path: Path
    spec: RunSpec | None
    shard: Shard | None = None


def spec_files(run: RunFiles) -> list[SpecFile]:
    """A run's files, each with its spec (`read_spec`) and the shard it is."""
    return [SpecFile(path, read_spec(path), run.shard(path)) for path in run.files]


def one_run(files: Sequence[SpecFile]) -> RunSpec | None:
    """The spec of the run these files are, once they are proved one run: with several files,
    each has a spec, a shard file's spec names its shard, and one file (the leader) has every
    other's current settings in its history. The run's spec is the leader's, with the largest n
    (a resume may grow it) and every file's history; else one line naming the files and a
    field they differ in."""
    if len(files) == 1:
        return files[0].spec
    for file in files:
        other = files[1 if file is files[0] else 0].path
        if file.spec is None:
            raise InputError(
                file.path,
                f"no run spec beside it ({file.path.name}.spec.json): it cannot be shown to be "
                f"one run with {other}; move one of them out of the run",
            )
        if _named_shard(file.spec) != file.shard:
            raise InputError(
                file.path,
                f"its run spec is of shard {file.spec.shard or 'none'}, its name of shard "
                f"{file.shard or 'none'}: not a file of this run as written",
            )
    specs = [(file.path, file.spec) for file in files if file.spec is not None]
    leader = _leader(specs)
    segments = _union(history(spec) for _, spec in [leader, *specs])
    ns = sorted({spec.n_samples for _, spec in specs})
    if len(ns) > 1:
        log.warning("%s: its files were written with n = %s (a resume grew it); the run plans "
                    "n = %d", leader[0], ", ".join(map(str, ns)), ns[-1])  # fmt: skip
    return leader[1].model_copy(
        update={"n_samples": ns[-1], "segments": segments if len(segments) > 1 else []}
    )


def _leader(specs: list[tuple[Path, RunSpec]]) -> tuple[Path, RunSpec]:
    """The file whose history holds every file's current settings (of several, the one whose
    history continues the others': a run moved back to earlier settings); else a UsageError
    naming two files and a field they differ in."""
    currents = {path: settings_of(spec).id for path, spec in specs}
    ids = {path: [s.id for s in history(spec)] for path, spec in specs}
    leaders = [(path, spec) for path, spec in specs if set(currents.values()) <= set(ids[path])]
    if leaders:
        path, spec = max(leaders, key=lambda ps: len(ids[ps[0]]))
        if all(ids[path][: len(ids[other])] == ids[other] or currents[other] == currents[path]
               for other, _ in leaders):  # fmt: skip
            return path, spec
    (first, mine), theirs = (
        specs[0],
        next(((p, s) for p, s in specs[1:] if currents[p] != currents[specs[0][0]]), specs[1]),
    )
    # (current settings differ: so do fields, not n nor the history, which a resume changes)
    (name, (a, b)), *rest = mine.differences(theirs[1]).items()
    also = f"; also {', '.join(n for n, _ in rest)}" if rest else ""
    raise UsageError(
        f"{first} and {theirs[0]} are not one run: their run specs differ in {name} "
        f"({brief(a, 40)} vs {brief(b, 40)}{also})"
    )


def _union(histories: Iterable[list[Segment]]) -> list[Segment]:
    """Every segment of some histories once, in the order first met."""
    seen: dict[str, Segment] = {}
    for segments in histories:
        for segment in segments:
            seen.setdefault(segment.id, segment)
    return list(seen.values())


def _named_shard(spec: RunSpec) -> Shard | str | None:
    """The shard a run spec names (its text when that is no shard)."""
    try:
        return None if spec.shard is None else parse_shard(spec.shard)
    except ValueError:
        return spec.shard


def continued(run: RunSpec | None, requested: RunSpec, *, force: bool, where: str) -> RunSpec:
    """The spec infer writes to draw more of the run `run` (its files' one spec, None for a new
    run) with `requested`: the run's history kept; other settings than the run's current ones
    refused unless `force`, which adds them to the history."""
    if run is None:
        return requested
    diff = run.differences(requested)
    segments = history(run)
    if diff:
        shown = "; ".join(f"{k}: {brief(a)} -> {brief(b)}" for k, (a, b) in diff.items())
        if not force:
            raise UsageError(
                f"{where} was made with other parameters ({shown}); use another --output, or "
                "--force to continue with the new ones"
            )
        log.warning("--force: continuing %s with changed parameters (%s); the run spec keeps "
                    "the earlier ones for the samples drawn under them", where, shown)  # fmt: skip
        segments.append(settings_of(requested))
    model_date = requested.model_date or run.model_date  # a resume without --model-date keeps it
    return requested.model_copy(
        update={"segments": segments if len(segments) > 1 else [], "model_date": model_date}
    )


def brief(value: object, limit: int = 60) -> str:
    """A value as short JSON for a message (text as it is), cut with `...` past `limit`."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def index_ranges(indices: Iterable[int]) -> str:
    """Indices as ranges: `0-79`, `0-3, 8, 10-11` (sorted, each once)."""
    spans: list[list[int]] = []
    for index in sorted(set(indices)):
        if spans and index == spans[-1][1] + 1:
            spans[-1][1] = index
        else:
            spans.append([index, index])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)


def differing(segments: Sequence[Segment]) -> list[str]:
    """The fields whose values differ among `segments`."""
    names = sorted({k for s in segments for k in s.fields})
    return [k for k in names if len({json.dumps(s.fields.get(k)) for s in segments}) > 1]


def mixed_settings(spec: RunSpec | None, drawn: dict[str, set[int]]) -> str | None:
    """`samples 0-79 at temperature 0.6; 80-95 at temperature 1.0` when a run's samples were
    drawn under several settings (`drawn`: the sample indices scored under each settings id,
    `UNRECORDED` for rows that record none), else None."""
    if len(drawn) < 2:
        return None
    known = {s.id: s for s in (spec.segments if spec is not None else [])}
    order = [sid for sid in known if sid in drawn]
    order += sorted((g for g in drawn if g not in known), key=lambda g: min(drawn[g]))
    fields = differing([known[g] for g in order if g in known])
    parts = []
    for sid in order:
        if sid in known and fields:
            how = ", ".join(f"{k} {brief(known[sid].fields.get(k), 40)}" for k in fields)
        else:
            how = f"settings {sid} (not in the run spec)" if sid != UNRECORDED else "unrecorded"
        parts.append(f"{index_ranges(drawn[sid])} at {how}")
    return "samples " + "; ".join(parts)
