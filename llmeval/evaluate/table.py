"""Output of `eval`: the rich score table, the JSON result, the per-sample verdict export,
and the progress display (a rich bar on a terminal, plain lines otherwise)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from rich import box
from rich.console import Console
from rich.table import Table

from llmeval.evaluate.run import EvalResult
from llmeval.files import atomic_file
from llmeval.records import ScoreReport

if TYPE_CHECKING:
    from rich.progress import Progress


def _pct(value: float | None, digits: int = 1) -> str:
    return "n/a" if value is None else f"{100 * value:.{digits}f}"


def _pct_err(value: float | None, err: float | None) -> str:
    """A percentage with its standard error, when there is one."""
    if value is None:
        return "n/a"
    return _pct(value) if err is None else f"{_pct(value)} ± {_pct(err)}"


def _largest_k(report: ScoreReport) -> str | None:
    """The k of the pass@k column: the largest k all tasks share."""
    common = set.intersection(*(set(t.pass_at_k) for t in report.tasks)) if report.tasks else set()
    return max(common, key=int) if common else None


def score_table(report: ScoreReport, width: int = 150) -> Table:
    """One row per generation file: the headline figures in percent (the file column is left
    out on terminals narrower than 110 columns; the JSON result names the files)."""
    table = Table(
        title=f"llmeval eval (percent; acc = avg@n ± clustered stderr, {report.policy} policy)",
        box=box.SIMPLE_HEAD,
        collapse_padding=True,
        pad_edge=False,
    )
    k = _largest_k(report)
    with_file = width >= 110
    table.add_column("task", no_wrap=True)
    if with_file:
        table.add_column("file", overflow="fold")
    judge = any(t.judge for t in report.tasks)
    headers = ("probs", "n", "acc ± se", "strict", "lenient", *(("judge",) if judge else ()))
    for name in (*headers, f"pass@{k or 'k'}", "maj@n", "no-ans", "t/o", "trunc", "complete"):
        table.add_column(name, justify="right", no_wrap=True)
    for score in report.tasks:
        maj = score.maj_at_k.get(str(score.n_samples)) if score.maj_at_k else None
        scored = score.samples_scored or 1
        complete = "yes" if score.complete else f"no, {score.samples_missing} missing"
        cells = [score.task, Path(score.file).name] if with_file else [score.task]
        table.add_row(
            *cells,
            str(score.n_problems),
            str(score.n_samples),
            _pct_err(score.accuracy, score.stderr),
            _pct(score.policies.get("strict")),
            _pct(score.policies.get("lenient")),
            *((_pct(score.judge.accuracy if score.judge else None),) if judge else ()),
            _pct(score.pass_at_k.get(k)) if k else "n/a",
            _pct(maj),
            _pct(score.n_no_answer / scored),
            str(score.n_timeout),
            _pct(score.truncation_rate),
            complete,
        )
    return table


def group_tables(report: ScoreReport) -> list[Table]:
    """Accuracy by subject and by level, for tasks that carry them (MATH-500)."""
    tables = []
    for score in report.tasks:
        for label, groups in (("subject", score.by_subject), ("level", score.by_level)):
            if not groups:
                continue
            table = Table(title=f"{score.task} by {label}")
            for name in (label, "problems", "accuracy"):
                table.add_column(name, justify="left" if name == label else "right")
            for name, group in groups.items():
                acc = _pct_err(group.accuracy, group.stderr)
                table.add_row(name, str(group.n_problems), acc)
            tables.append(table)
    return tables


def print_report(report: ScoreReport, console: Console | None = None) -> None:
    """Print the score table (and per-group tables) and the cache line."""
    console = console or Console(width=None if sys.stdout.isatty() else 150)
    console.print(score_table(report, console.width))
    for table in group_tables(report):
        console.print(table)
    cache = report.cache
    console.print(
        f"verdicts: {cache.hits} cached, {cache.new} verified now ({cache.timeouts} timeouts); "
        f"verifier: {report.verifier}",
        markup=False,
        highlight=False,
    )


def export_verdicts(path: Path, result: EvalResult) -> int:
    """One JSON line per sample (`--export-verdicts`), written whole (`atomic_file`: an
    earlier export stays if writing fails); returns the lines written."""
    judged = result.judged
    lines = 0
    with atomic_file(path) as out:
        for f, (source, statuses) in enumerate(zip(result.files, result.statuses, strict=True)):
            for i, (sample, status) in enumerate(zip(source.samples, statuses, strict=True)):
                row: dict[str, Any] = {
                    "task": source.task.name,
                    "file": str(source.path),
                    "problem_id": sample.problem_id,
                    "sample_idx": sample.sample_idx,
                    "status": status,
                    "correct": status == "correct" and not sample.truncated,
                    "truncated": sample.truncated,
                    "pred": sample.answer,
                    "gold": sample.gold,
                }
                if judged is not None:
                    row["judge"] = judged.samples[f].get(i, (None, ""))[0]
                out.write(json.dumps(row, ensure_ascii=False).encode("utf-8", "replace") + b"\n")
                lines += 1
    return lines


class EvalProgress:
    """Progress of judging: verified now / from cache / remaining, in samples."""

    def __init__(self, stream: TextIO | None = None, enabled: bool = True) -> None:
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.live = enabled and self.stream.isatty()
        self._bar: Progress | None = None
        self._task: Any = None
        self._last_line = 0.0

    def __call__(self, verified: int, cached: int, remaining: int) -> None:
        if not self.enabled:
            return
        info = f"{verified} verified, {cached} cached or trivial, {remaining} remaining"
        if self.live:
            self._update_bar(verified + cached, verified + cached + remaining, info)
            return
        now = time.monotonic()
        if remaining == 0 or now - self._last_line >= 2.0:
            self._last_line = now
            print(f"llmeval eval: {info}", file=self.stream, flush=True)

    def _update_bar(self, done: int, total: int, info: str) -> None:
        if self._bar is None:
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(
                TextColumn("judging"),
                BarColumn(),
                TextColumn("{task.fields[info]}"),
                TimeElapsedColumn(),
                console=Console(file=self.stream),
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task("judge", total=total, info="")
        self._bar.update(self._task, completed=done, info=info)

    def close(self) -> None:
        """Stop the bar, if one is showing."""
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
