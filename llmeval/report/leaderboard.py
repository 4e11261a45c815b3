"""The leaderboard of a report over several runs: a row per model (per setting where runs of
one model on one task differ in it), a column per task with avg@n ± stderr, the average over
tasks, and each row's rank as a range from paired tests (`ranking`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
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


LIVE_RANKS = (
    "Runs in progress: each pair is tested only on the rounds (sample indices 0..k−1) that both "
    "runs have completed on each task. These ranks are provisional: the test is repeated at "
    "every refresh (report --follow) or new report as the runs grow, and a test repeated on "
    "growing data finds a difference by chance more often than 5%, so one found during a run "
    "may not hold at its end. They are final once every run is complete."
)


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


def rounds(score: TaskScore) -> int:
    """The sample indices 0..k-1 of a run that every planned problem has: all n once complete."""
    return score.n_samples if score.complete else score.rounds_complete


def _per_problem(run: rd.Run, label: str, k: int) -> tuple[rd.Problems, dict[str, str]]:
    """A run's problems, each with its samples 0..k-1, and the keys that match them across
    runs."""
    source = run.files[label]
    counted = [s for s in source.samples if s.sample_idx < k]
    return rd.problems_of(counted, run.policy), rd.problem_keys(source)


def _common_rounds(run: rd.Run, a: str, b: str) -> tuple[int, int]:
    """The samples two runs are compared on: every sample when both are complete, else the
    rounds both have completed (an incomplete run's later rounds are the short samples that
    finished first, and a complete one's extra rounds would weigh its side differently)."""
    sa, sb = run.scores[a], run.scores[b]
    if sa.complete and sb.complete:
        return sa.n_samples, sb.n_samples
    k = min(rounds(sa), rounds(sb))
    return k, k


def pair_tests(run: rd.Run, layout: Board) -> list[ranking.PairTest]:
    """Every two rows on the problems of the tasks both hold (of runs in progress, on the
    rounds both have completed), Holm-corrected together."""
    found = []
    for a, b in combinations(layout.rows, 2):
        diffs = []
        for task in layout.tasks:
            la, lb = layout.cells.get((a, task)), layout.cells.get((b, task))
            if la is None or lb is None:
                continue
            ka, kb = _common_rounds(run, la, lb)
            (pa, keys_a), (pb, keys_b) = _per_problem(run, la, ka), _per_problem(run, lb, kb)
            shared = rd.pair_problems(pa, pb, keys_a, keys_b)
            diffs.append([fraction_correct(pa[x]) - fraction_correct(pb[y])
                          for x, y in shared.items()])  # fmt: skip
        test = ranking.sign_flip_test(diffs)
        found.append(ranking.PairTest(a, b, test.statistic, sum(map(len, diffs)), test.p,
                                      exact=test.exact, floor=test.floor))  # fmt: skip
    keep = ranking.holm([t.p for t in found])
    return [
        replace(t, significant=kept and t.problems > 0) for t, kept in zip(found, keep, strict=True)
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
    live = not all(score.complete for score in run.scores.values())
    head = ["rank (provisional)" if live else "rank", "model",
            *(f"{task} %" for task in layout.tasks), "average %"]  # fmt: skip
    head += ["after the model's date %"] if dated else []
    rows = [cells for _, cells in lines]
    pairs = [[t.a, t.b, t.problems, f"{100 * t.diff:+.1f}", f"{t.p:.2g}",
              "exact" if t.exact else "saddlepoint", "yes" if t.significant else "no"]
             for t in tests]  # fmt: skip
    pair_head = ["row A", "row B", "shared problems", "A − B (points)", "p", "p by",
                 "significant"]  # fmt: skip
    return section(
        "leaderboard",
        "Leaderboard",
        table(head, rows, "scores leaderboard"),
        note(ranking.separation(len(layout.rows), tests)),
        note(LIVE_RANKS) if live else "",
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
