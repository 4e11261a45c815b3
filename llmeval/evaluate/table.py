"""Output of `eval`: the rich score table and the per-sample verdict export."""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from llmeval.evaluate.run import EvalResult
from llmeval.files import atomic_file
from llmeval.records import ScoreReport


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}"


def _pct_err(value: float | None, err: float | None) -> str:
    """A percentage with its standard error, when there is one."""
    return _pct(value) if value is None or err is None else f"{_pct(value)} ± {_pct(err)}"


def _text(text: str) -> Text:
    """Names, subjects and paths as they are written: a server or a file chose them, and rich
    would read `[/]` (an error) or `[link=...]` (a terminal hyperlink) as markup."""
    return Text(text)


MIN_WIDTH = 80  # below it, the table is printed 80 wide (the terminal wraps) rather than cut


def score_table(report: ScoreReport) -> Table:
    """One row per run (a model's generation file for one task): the headline figures in
    percent. The run column stacks task and size, model and file name, and folds where the
    terminal is narrow; number columns never wrap, so no figure is cut (80 columns suffice)."""
    other = "lenient" if report.policy == "strict" else "strict"
    table = Table(
        title=f"llmeval eval: percent; acc = avg@n ± clustered stderr, {report.policy} policy",
        box=box.SIMPLE_HEAD,
        padding=0,  # the box puts one space between columns
        show_edge=False,
        pad_edge=False,
    )
    # the k of the pass@k column: the largest k all tasks share
    common = set.intersection(*(set(t.pass_at_k) for t in report.tasks)) if report.tasks else set()
    k = max(common, key=int) if common else None
    judge = any(t.judge for t in report.tasks)
    table.add_column("run: task, model, file", overflow="fold", min_width=16)
    names = (
        "acc ± se",
        other,
        *(("judge",) if judge else ()),
        f"pass@{k or 'k'}",
        "maj@n",
        "no-ans",
        "t/o",
        "trunc",
        "complete",
    )
    for name in names:
        table.add_column(name, justify="right", no_wrap=True)
    # a file by its name; by its whole path where two runs would read alike
    alike = Counter((t.task, t.model, Path(t.file).name) for t in report.tasks)
    for score in report.tasks:
        judge_cell = (_pct(score.judge.accuracy if score.judge else None),) if judge else ()
        name = Path(score.file).name
        file = name if alike[(score.task, score.model, name)] == 1 else score.file
        table.add_row(
            _text(f"{score.task} · {score.n_problems}×{score.n_samples}\n{score.model}\n{file}"),
            _pct_err(score.accuracy, score.stderr),
            _pct(score.policies.get(other)),
            *judge_cell,
            _pct(score.pass_at_k.get(k)) if k else "n/a",
            _pct(score.maj_at_k.get(str(score.n_samples))),
            _pct(score.n_no_answer / (score.samples_scored or 1)),
            str(score.n_timeout),
            _pct(score.truncation_rate),
            "yes" if score.complete else f"no: {score.samples_missing}",
        )
    return table


class _Console(Console):
    """A console whose reader may stop reading (`| head`): the rest goes nowhere, no error."""

    def on_broken_pipe(self) -> None:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        self.quiet = True


def print_report(report: ScoreReport) -> None:
    """Print the score table, accuracy by subject and by level (MATH-500), the cache line."""
    # a pipe or a file gets 150 columns, unless COLUMNS says otherwise
    console = _Console(width=None if sys.stdout.isatty() or "COLUMNS" in os.environ else 150)
    console.width = max(console.width, MIN_WIDTH)  # (print's own width can only narrow)
    console.print(score_table(report))
    for score in report.tasks:
        if not score.complete:
            console.print(
                f"incomplete: {score.task} · {score.model}: {score.n_problems_missing} problems "
                f"without a sample, {score.samples_missing} samples missing in all",
                markup=False,
                highlight=False,
            )
        if score.n_problems_foreign:
            console.print(
                f"left out: {score.task} · {score.model}: {score.n_problems_foreign} problems "
                f"not in the task (see the warning)",
                markup=False,
                highlight=False,
            )
    for score in report.tasks:
        for label, groups in (("subject", score.by_subject), ("level", score.by_level)):
            if not groups:
                continue
            table = Table(title=_text(f"{score.task} · {score.model} by {label}"))
            for name in (label, "problems", "accuracy"):
                table.add_column(name, justify="left" if name == label else "right")
            for name, group in groups.items():
                row = (str(group.n_problems), _pct_err(group.accuracy, group.stderr))
                table.add_row(_text(name), *row)
            console.print(table)
    cache = report.cache
    console.print(
        f"verdicts: {cache.hits} cached, {cache.new} verified now ({cache.timeouts} timeouts); "
        f"verifier: {report.verifier}",
        markup=False,
        highlight=False,
    )


def export_verdicts(path: Path, result: EvalResult) -> None:
    """One JSON line per sample (`--export-verdicts`), written whole (`atomic_file`): `status`,
    `correct` and `pred` under the chosen policy, and each policy's status and answer."""
    policy = result.report.policy
    with atomic_file(path) as out:
        for source in result.files:
            for sample in source.samples:
                row: dict[str, Any] = {
                    "task": source.task.name,
                    "model": source.model,
                    "file": str(source.path),
                    "problem_id": sample.problem_id,
                    "sample_idx": sample.sample_idx,
                    "status": sample.status[policy],
                    "correct": sample.correct(policy),
                    "truncated": sample.truncated,
                    "pred": sample.answer_for(policy),
                    "gold": sample.gold,
                    **{
                        p: {"status": sample.status[p], "pred": sample.answer_for(p)}
                        for p in sample.status
                    },
                }
                if any(t.judge for t in result.report.tasks):
                    row["judge"] = sample.judge or None
                out.write(json.dumps(row, ensure_ascii=False).encode("utf-8", "replace") + b"\n")
