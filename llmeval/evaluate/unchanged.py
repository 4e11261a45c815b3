"""Settings that changed nothing: runs of one model on one task whose run specs differ only in
sampling settings (effort, budget, temperature, ...) yet hold the same text for every sample
they share, compared by a digest per sample. The server appears to ignore the setting (vLLM
ignores `reasoning_effort` for models whose template does not read it)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Any

from llmeval.evaluate.reading import InputRun
from llmeval.runs.spec import brief

# what changes the text a server samples; a cap (max_tokens) may change none when no sample
# reaches it, and n never does
SAMPLING = frozenset({"temperature", "top_p", "top_k", "min_p", "seed", "extra_body",
                      "reasoning_effort", "thinking_budget"})  # fmt: skip
GREEDY_ALIKE = frozenset({"seed", "top_p", "top_k", "min_p"})  # change nothing at temperature 0


def sampling_differences(a: InputRun, b: InputRun) -> dict[str, tuple[Any, Any]]:
    """The sampling settings two runs of one model on one task differ in, when they differ in
    nothing else that changes the samples ({} otherwise, or when either lacks a run spec)."""
    if a.spec is None or b.spec is None or a.task.name != b.task.name:
        return {}
    found = a.spec.differences(b.spec)
    if a.spec.temperature == b.spec.temperature == 0:
        found = {k: v for k, v in found.items() if k not in GREEDY_ALIKE}
    return found if found and found.keys() <= SAMPLING else {}


def comparable(runs: Sequence[InputRun]) -> set[int]:
    """The positions of the runs some other run differs from only in sampling settings: only
    their samples need a digest (read before their rows: their specs and tasks tell)."""
    return {
        k for (i, a), (j, b) in combinations(enumerate(runs), 2) if sampling_differences(a, b)
        for k in (i, j)
    }  # fmt: skip


def _digests(run: InputRun) -> dict[tuple[str, int], int | None]:
    return {(s.problem_id, s.sample_idx): s.digest for s in run.samples}


def same_texts(runs: Sequence[InputRun]) -> dict[int, str]:
    """{position of a run: what it shares with others}: for each other run that differs from
    it only in sampling settings and holds the same text for every sample both hold, that
    run's file, the settings and the samples compared."""
    found: dict[int, list[str]] = {}
    digests: dict[int, dict[tuple[str, int], int | None]] = {}
    for (i, a), (j, b) in combinations(enumerate(runs), 2):
        differ = sampling_differences(a, b)
        if not differ:
            continue
        da = digests.setdefault(i, _digests(a))
        db = digests.setdefault(j, _digests(b))
        shared = da.keys() & db.keys()
        if not shared or any(da[k] is None or da[k] != db[k] for k in shared):
            continue
        for mine, other, flip in ((i, b, False), (j, a, True)):
            settings = ", ".join(
                f"{name} {_shown(y if flip else x)} vs {_shown(x if flip else y)}"
                for name, (x, y) in differ.items()
            )
            found.setdefault(mine, []).append(
                f"the same text as {other.path} in all {len(shared)} samples both hold, though "
                f"they differ in {settings}"
            )
    return {
        i: "; ".join(lines) + ": the server appears to ignore the setting"
        for i, lines in found.items()
    }


def _shown(value: Any) -> str:
    return "unset" if value in (None, "", {}) else brief(value, 40)
