"""Generation files that are one JSON document: SkyThought's result files, `results.json`
(problem -> `responses`, a list) and the older `<model>_<data>_..._.json` (problem -> `responses`
keyed by temperature, one response or a list each), read as one row per response, SkyThought's
own `correctness` of each response set beside our verdicts; any other document is refused."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from llmeval.errors import InputError
from llmeval.files import read_file, without_bom
from llmeval.jsonl import iter_lines, loads_text

log = logging.getLogger("llmeval")
Row = dict[str, Any]
LAYOUT = "SkyThought results"
HARNESS_VERDICT = "harness_correct"  # a sample's `meta`: the harness's own verdict, if it gave one
_SHOWN = 5  # differing samples named in the line


def document(path: Path) -> Any:
    """The file as one JSON document when it is one rather than JSON Lines (a `.json` name, a
    first line holding a list, or a first line that is no JSON value while the whole file is
    one: pretty-printed); else None."""
    if path.name.endswith(".json"):
        return _parse_whole(path)
    for _, body, _ in iter_lines(path):
        try:
            first = loads_text(body)
        except (ValueError, UnicodeDecodeError):
            try:
                return _parse_whole(path)
            except InputError:
                return None  # a bad line of JSON Lines: the row reader names it
        return first if isinstance(first, list) else None
    return None


def _parse_whole(path: Path) -> Any:
    try:
        return loads_text(without_bom(read_file(path), path))
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(path, f"not valid JSON ({exc})") from None


def check_results(doc: Any, path: Path) -> None:
    """A JSON document that is no SkyThought result file (an object of problems, each with its
    `responses`) is refused, with what to do."""
    entries = list(doc.values()) if isinstance(doc, dict) else []
    if not entries or not all(isinstance(e, dict) and "responses" in e for e in entries):
        what = f"a list of {len(doc)} items" if isinstance(doc, list) else "an object"
        raise InputError(
            path,
            f"one JSON document ({what}), not JSON Lines (one object per line); a list of "
            f"rows as JSON Lines: jq -c '.[]' {path} > rows.jsonl",
        )


def temperatures(doc: dict[str, Any]) -> list[str]:
    """The temperatures an older result file holds responses at, in file order ([]: a
    `results.json`, whose responses are one list)."""
    found: dict[str, None] = {}
    for entry in doc.values():
        if isinstance(entry["responses"], dict):
            found.update(dict.fromkeys(map(str, entry["responses"])))
    return list(found)


def rows(
    doc: dict[str, Any], wanted: Callable[[str], bool]
) -> Iterator[tuple[int, list[str], Row]]:
    """(entry number, the entry's keys, row) for each response of each problem: `gen` its
    text, `sample_idx` its place, `usage` its token counts, the problem's fields kept; of an
    older file only the responses at the temperatures `wanted` takes. The problem's id is its
    `id` (or `unique_id`), else its key."""
    for number, (key, entry) in enumerate(doc.items(), start=1):
        responses, usages = entry["responses"], entry.get("token_usages")
        if isinstance(responses, dict):
            chosen = [t for t in map(str, responses) if wanted(t)]
            responses = responses.get(chosen[0]) if chosen else []
            usages = usages.get(chosen[0]) if chosen and isinstance(usages, dict) else None
        problem = {k: v for k, v in entry.items() if k not in ("responses", "token_usages")}
        problem.setdefault("problem_id", entry.get("id", entry.get("unique_id", key)))
        if isinstance(entry.get("problem"), str):  # an older file's `prompt` lacks the problem
            problem["prompt"] = entry["problem"]
        outputs = responses if isinstance(responses, list) else [responses]
        counts = usages if isinstance(usages, list) else [usages] * len(outputs)
        for index, (response, usage) in enumerate(
            zip(outputs, _padded(counts, outputs), strict=True)
        ):
            yield number, list(entry), _row(problem, response, usage, index)


def _padded(counts: list[Any], outputs: Sequence[Any]) -> list[Any]:
    return counts[: len(outputs)] + [None] * (len(outputs) - len(counts))


def _row(problem: Row, response: Any, usage: Any, index: int) -> Row:
    """One response as a row; its `correctness` (a bool) goes to the sample's meta."""
    text = response.get("content") if isinstance(response, dict) else response
    row = {**problem, "gen": text, "sample_idx": index}
    if isinstance(usage, dict):
        row["usage"] = usage
    verdict = response.get("correctness") if isinstance(response, dict) else None
    if isinstance(verdict, bool):
        meta = problem.get("meta")
        row["meta"] = {**(meta if isinstance(meta, dict) else {}), HARNESS_VERDICT: verdict}
    return row


def compare_verdicts(name: str, samples: Sequence[Any], policy: str) -> None:
    """Say where SkyThought's own verdicts (`meta[HARNESS_VERDICT]`) and ours under `policy`
    differ: how many of the samples it judged, and the first few, with the answer we read."""
    harness = "SkyThought"
    judged = [s for s in samples if isinstance(s.meta.get(HARNESS_VERDICT), bool)]
    if not judged:
        return
    differ = [s for s in judged if s.meta[HARNESS_VERDICT] != s.correct(policy)]
    if not differ:
        log.info("%s: %s's own correctness agrees with the %s verdicts on all %d samples it "
                 "judged", name, harness, policy, len(judged))  # fmt: skip
        return
    shown = "; ".join(
        f"{s.problem_id} #{s.sample_idx}: {harness} "
        f"{'correct' if s.meta[HARNESS_VERDICT] else 'incorrect'}, {policy} {s.status[policy]}"
        f"{' (truncated)' if s.truncated else ''}, answer {s.answer_for(policy)!r}"
        for s in differ[:_SHOWN]
    )
    more = f"; {len(differ) - _SHOWN} more (--export-verdicts lists every sample)" * (
        len(differ) > _SHOWN
    )
    log.warning("%s: %s's own correctness differs from the %s verdicts on %d of the %d samples "
                "it judged: %s%s", name, harness, policy, len(differ), len(judged), shown,
                more)  # fmt: skip
