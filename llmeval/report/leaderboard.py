"""The leaderboard of a report over several runs: a row per model (per setting where runs of
one model on one task differ in it), a column per task with avg@n ± stderr, the average over
tasks, and each row's rank as a range from paired tests (`ranking`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import combinations

from llmeval.evaluate.cutoff import held_before
from llmeval.evaluate.metrics import fraction_correct
from llmeval.records import TaskScore
from llmeval.report import data as rd
from llmeval.report import ranking
from llmeval.report.sections import details, note, pct, section, table
from llmeval.runs.names import run_names


@dataclass
class Board:
    """Rows (model · settings) by tasks; each cell names the run (a label of `Run.files`)."""

    tasks: list[str]
    rows: list[str]
    cells: dict[tuple[str, str], str] = field(default_factory=dict)


def board(run: rd.Run) -> Board:
    """The rows: each run's name (`runs.names`, the name every screen shows) without its task:
    its model with the settings that tell its runs apart; runs still alike by their files."""
    names = run_names(list(run.scores.values()))
    out = Board(sorted({s.task for s in run.scores.values()}), [])
    for label, name in zip(run.scores, names, strict=True):
        if name.row not in out.rows:
            out.rows.append(name.row)
        out.cells[(name.row, name.task)] = label
    return out


def figure(score: TaskScore) -> tuple[float | None, float | None, str]:
    """A cell's avg ± stderr: avg@n of a complete run; of an incomplete one the complete-rounds
    estimate avg@k (None while k = 0), with what it is."""
    if score.complete:
        return score.accuracy, score.stderr, ""
    k, n = score.rounds_complete, score.n_samples
    if not k:
        return None, None, "no complete round yet"
    return score.rounds_accuracy, score.rounds_stderr, f"avg@{k}, {k} of {n} rounds"


def _per_problem(run: rd.Run, label: str) -> tuple[rd.Problems, dict[str, str]]:
    """A run's problems, each with the samples its cell counts (all; of an incomplete run the
    complete rounds), and the keys that match them across runs."""
    source, score = run.files[label], run.scores[label]
    k = score.n_samples if score.complete else score.rounds_complete
    counted = [s for s in source.samples if s.sample_idx < k]
    return rd.problems_of(counted, run.policy), rd.problem_keys(source)


def pair_tests(run: rd.Run, layout: Board) -> list[ranking.PairTest]:
    """Every two rows on the problems of the tasks both hold, Holm-corrected together."""
    found = []
    for a, b in combinations(layout.rows, 2):
        diffs = []
        for task in layout.tasks:
            la, lb = layout.cells.get((a, task)), layout.cells.get((b, task))
            if la is None or lb is None:
                continue
            (pa, ka), (pb, kb) = _per_problem(run, la), _per_problem(run, lb)
            diffs.append([fraction_correct(pa[x]) - fraction_correct(pb[y])
                          for x, y in rd.pair_problems(pa, pb, ka, kb).items()])  # fmt: skip
        diff, p = ranking.sign_flip_test(diffs)
        found.append(ranking.PairTest(a, b, diff, sum(map(len, diffs)), p))
    keep = ranking.holm([t.p for t in found])
    return [
        ranking.PairTest(t.a, t.b, t.diff, t.problems, t.p, kept and t.problems > 0)
        for t, kept in zip(found, keep, strict=True)
    ]


def _average(cells: list[tuple[float | None, float | None, str]]) -> tuple[float, float | None]:
    """The mean over tasks and its stderr (tasks independent): sqrt(sum se^2) / T."""
    errors = [se for _, se, _ in cells]
    mean = math.fsum(acc or 0.0 for acc, _, _ in cells) / len(cells)
    if any(se is None for se in errors):
        return mean, None
    return mean, math.sqrt(math.fsum(se * se for se in errors if se is not None)) / len(cells)


def _cell(acc: float | None, se: float | None, what: str) -> str:
    shown = "–" if acc is None else pct(acc) + ("" if se is None else f" ± {pct(se)}")
    return f"{shown} ({what})" if what else shown


def leaderboard(run: rd.Run) -> str:
    """The section, when the report covers two rows or more; else nothing."""
    layout = board(run)
    if len(layout.rows) < 2:
        return ""
    tests = pair_tests(run, layout)
    ranks = ranking.rank_ranges(layout.rows, tests)
    dated = any(score.model_date for score in run.scores.values())  # --model-date, or the specs'
    lines = []
    for row in layout.rows:
        labels = [layout.cells.get((row, task)) for task in layout.tasks]
        cells = [figure(run.scores[label]) if label else None for label in labels]
        have = [c for c in cells if c is not None and c[0] is not None]
        average = _average(have) if len(have) == len(cells) else None
        order = -(average[0] if average else -1.0), -sum(c[0] or 0.0 for c in have) / len(cells)
        shown = [_cell(*c) if c else "not run" for c in cells]
        mean = _cell(*average, "") if average else "– (not every task)"
        extra = _after_date(run, labels, cells, shown) if dated else []
        lines.append((order, [ranking.rank_text(*ranks[row]), row, *shown, mean, *extra]))
    lines.sort(key=lambda item: item[0])
    head = ["rank", "model", *(f"{task} %" for task in layout.tasks), "average %"]
    head += ["after the model's date %"] if dated else []
    rows = [cells for _, cells in lines]
    pairs = [[t.a, t.b, t.problems, f"{100 * t.diff:+.1f}", f"{t.p:.4f}",
              "yes" if t.significant else "no"] for t in tests]  # fmt: skip
    pair_head = ["row A", "row B", "shared problems", "A − B (points)", "p", "significant"]
    return section(
        "leaderboard",
        "Leaderboard",
        table(head, rows, "scores leaderboard"),
        note("Cells: avg@n ± clustered stderr, in percent; a run still in progress shows its "
             "complete-rounds estimate avg@k. Average: the mean over tasks (± the tasks' "
             "stderrs combined), given only where a row has every task."),
        note(ranking.METHOD),
        note(CUTOFF_NOTE) if dated else "",
        details("paired tests", table(pair_head, pairs, "scores"), "spec"),
    )  # fmt: skip


BEFORE = " †"  # a cell whose contest was held on or before its model's date
CUTOFF_NOTE = (
    "†: the contest was held on or before the model's date (its run spec's model_date, else "
    "--model-date): its problems may be in the model's training data. After the model's date: "
    "the mean over the contests held after it."
)


def _after_date(run: rd.Run, labels: list[str | None], cells: list, shown: list[str]) -> list[str]:
    """Mark (in `shown`) the cells held on or before their model's date; the row's mean over
    the contests held after it, as its own column."""
    after = []
    for i, label in enumerate(labels):
        before = held_before(run.scores[label]) if label else None
        if before:
            shown[i] += BEFORE
        elif before is False and cells[i] is not None and cells[i][0] is not None:
            after.append(cells[i])
    return [_cell(*_average(after), "") if after else "–"]
