"""Output of `eval`: the rich score table (its columns and the lines under it: `headline.py`),
accuracy by subject and level, the cache line, and the per-sample verdict export."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from llmeval.evaluate import headline
from llmeval.evaluate.cutoff import cutoff_lines
from llmeval.evaluate.live import NO_ROUND_NOTE, progress_table
from llmeval.evaluate.run import EvalResult
from llmeval.files import atomic_file
from llmeval.records import ScoreReport
from llmeval.runs.names import run_names, shard_layout


def _text(text: str) -> Text:
    """Names, subjects and paths as they are written: a server or a file chose them, and rich
    would read `[/]` (an error) or `[link=...]` (a terminal hyperlink) as markup."""
    return Text(text)


MIN_WIDTH = 80  # below it, the table is printed 80 wide (the terminal wraps) rather than cut


def score_table(report: ScoreReport, names: list[str]) -> Table:
    """One row per run (a model on one task, its settings where runs differ in them): the
    headline figures (`headline.columns`). The run column holds the run's name (`runs.names`)
    over its size and file name (with its shards), and folds where the terminal is narrow;
    number columns never wrap, so no figure is cut (80 columns suffice)."""
    table = Table(
        title=f"llmeval eval: {headline.title(report.policy)}",
        box=box.SIMPLE_HEAD,
        padding=0,  # the box puts one space between columns
        show_edge=False,
        pad_edge=False,
    )
    table.add_column("run: task · model, size · file", overflow="fold", min_width=16)
    columns = headline.columns(report.tasks, report.policy)
    for column in columns:
        table.add_column(column.name, justify="right", no_wrap=True)
    for score, name in zip(report.tasks, names, strict=True):
        layout = shard_layout(score.files, score.shards)
        where = Path(score.file).name + (f" ({layout})" if layout else "")
        table.add_row(
            _text(f"{name}\n{score.n_problems}×{score.n_samples} · {where}"),
            *(column.cell(score) for column in columns),
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
    runs = [str(name) for name in run_names(report.tasks)]
    console.print(score_table(report, runs))
    writing = [i for i, t in enumerate(report.tasks) if t.being_written and not t.complete]
    if writing:  # what runs being written score so far, honestly (evaluate/live.py)
        console.print(
            progress_table([report.tasks[i] for i in writing], [runs[i] for i in writing])
        )
        console.print(NO_ROUND_NOTE, markup=False, highlight=False)
    for line in headline.notes(report.tasks, runs) + headline.token_notes(report.tasks, runs):
        console.print(line, markup=False, highlight=False)
    for line in cutoff_lines(report.tasks):  # (only where a model has a date)
        console.print(line, markup=False, highlight=False)
    for score, run in zip(report.tasks, runs, strict=True):
        for label, groups in (("subject", score.by_subject), ("level", score.by_level)):
            if not groups:
                continue
            table = Table(title=_text(f"{run} by {label}"))
            for name in (label, "problems", "accuracy"):
                table.add_column(name, justify="left" if name == label else "right")
            for name, group in groups.items():
                row = (str(group.n_problems), headline.pct_err(group.accuracy, group.stderr))
                table.add_row(_text(name), *row)
            console.print(table)
    cache = report.cache
    for line in [
        f"verdicts: {cache.hits} cached, {cache.new} verified now ({cache.timeouts} timeouts); "
        f"verifier: {report.verifier}",
        *headline.cache_notes(cache),
    ]:
        console.print(line, markup=False, highlight=False)


def export_verdicts(path: Path, result: EvalResult) -> None:
    """One JSON line per sample (`--export-verdicts`), written whole (`atomic_file`): `status`,
    `correct` and `pred` under the chosen policy, and each policy's status and answer."""
    policy = result.report.policy
    files = [(run, path, samples) for run in result.runs for path, samples in run.by_file()]
    with atomic_file(path) as out:
        for source, file, samples in files:
            for sample in samples:
                row: dict[str, Any] = {
                    "task": source.task.name,
                    "model": source.model,
                    "file": str(file),
                    "problem_id": sample.problem_id,
                    "sample_idx": sample.sample_idx,
                    "status": sample.status[policy],
                    "correct": sample.correct(policy),
                    "truncated": sample.truncated,
                    "unfinished": sample.unfinished,
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
