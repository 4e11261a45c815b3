"""`llmeval report`: one self-contained HTML file of scores, leaderboard, pictures, per-sample
grid, samples, comparison with a baseline, tokens and cost (`--follow`: rewritten as runs grow)."""

from __future__ import annotations

import argparse
import logging
import time
from datetime import UTC, datetime
from pathlib import Path

from llmeval import __version__
from llmeval.cli.eval import add_eval_options, evaluate, refuse_overwrite
from llmeval.cli.follow import add_follow, check_follow, follow, named_paths, stamp, with_paths
from llmeval.errors import UsageError
from llmeval.evaluate.headline import cache_notes
from llmeval.files import atomic_file
from llmeval.records import ScoreReport, TaskScore
from llmeval.report.tokens import Prices
from llmeval.runs.names import shard_layout
from llmeval.terminal import printable_copy

log = logging.getLogger("llmeval")


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `report` parser (eval's options: it evaluates what is not verified yet)."""
    parser = sub.add_parser(
        "report",
        help="write one self-contained HTML report of generation files",
        description="Evaluate generation files (verdicts from eval's cache where present) and "
        "write one HTML file: scores, pictures, every sample, a comparison with --baseline, "
        "serving figures. No network needed to view it.",
    )
    add = parser.add_argument
    add("paths", nargs="*", metavar="PATH", help="generation files, folders, globs")
    add("--out", "-o", type=Path, default=Path("report.html"), help="the HTML file")
    add("--baseline", nargs="+", metavar="PATH", default=[], help="run to compare with")
    add("--label", help="name of the run in the report (default: its model)")
    add("--baseline-label", help="name of the baseline (default: its model)")
    add(
        "--price-in",
        type=float,
        metavar="USD",
        help="dollars per million prompt tokens: with --price-out, a cost column and picture",
    )
    add("--price-out", type=float, metavar="USD",
        help="dollars per million completion tokens (reasoning included)")  # fmt: skip
    add_follow(parser, "rewriting the HTML file (marked provisional) at each refresh")
    add_eval_options(parser)
    add("--no-compress", action="store_true",
        help="embed texts as plain JSON (bigger file) instead of gzip+base64")  # fmt: skip
    parser.set_defaults(func=run, input_path=[])


def _check_comparable(diffs: list, baseline: list[str]) -> None:
    """A comparison of nothing is refused: no task in both runs, or no problem in both."""
    if not diffs:
        raise UsageError(f"--baseline {' '.join(baseline)}: no task in both runs to compare")
    if not any(d.n_common for d in diffs):
        shown = "; ".join(f"{d.task}: {d.only_run} vs {d.only_baseline} problems" for d in diffs)
        raise UsageError(
            f"--baseline {' '.join(baseline)}: no problem is in both runs, by id or by problem "
            f"text ({shown}): nothing to compare"
        )


def _files(score: TaskScore) -> str:
    """A run's file, with its shards where it has some."""
    layout = shard_layout(score.files, score.shards)
    return f"{score.file} ({layout})" if layout else score.file


def _prices(args: argparse.Namespace) -> Prices | None:
    """The prices of --price-in and --price-out (both or neither), checked."""
    given = [args.price_in, args.price_out]
    if given == [None, None]:
        return None
    if None in given:
        raise UsageError("--price-in and --price-out go together (give 0 for a free side)")
    if not all(0 <= value < 1e6 for value in given):  # (NaN too)
        raise UsageError("--price-in and --price-out are dollars per million tokens, 0 or more")
    return Prices(args.price_in, args.price_out)


def run(args: argparse.Namespace) -> int:
    """Evaluate the run (and the baseline), build the report, write it; with --follow, again
    at every refresh until every run is complete."""
    if args.out.is_dir():
        raise UsageError(f"--out {args.out} is a folder; give a file name")
    prices, interval = _prices(args), check_follow(args)
    if interval is None:
        _write(args, prices)
        return 0
    args.no_progress = True
    refreshed = f"; llmeval report --follow rewrites it every {interval:g} s"
    return follow(
        interval, lambda paths: _write(with_paths(args, paths), prices, refreshed),
        lambda _: None, named_paths(args), args.wait,
    )  # fmt: skip


def _write(args: argparse.Namespace, prices: Prices | None, refreshed: str = "") -> ScoreReport:
    """Evaluate, build and write the report once; its figures alone are kept, to be shown
    (`--follow`'s lines), every name in them made printable."""
    started = time.monotonic()
    result = evaluate(args, keep_texts=True)
    # the HTML side loads when `report` runs, not for every command
    from llmeval.report.data import compare
    from llmeval.report.html import render_report
    from llmeval.report.inputs import run_from_eval, tell_apart

    current, cache = run_from_eval(result, args.label), result.report.cache
    notes = cache_notes(cache)  # verdicts used that llmeval did not write here
    meta = {
        "model": current.label,
        "files": ", ".join(_files(score) for score in result.report.tasks),
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "llmeval": result.report.llmeval_version or __version__,
        "verifier": result.report.verifier,
        "verdicts": "; ".join([f"{cache.hits} cached, {cache.new} verified now", *notes]),
    }
    incomplete = sum(not score.complete for score in result.report.tasks)
    if incomplete:
        meta["provisional"] = (
            f"Provisional: {incomplete} of {len(result.report.tasks)} runs are incomplete, so "
            f"their figures will change. Written {stamp()}{refreshed}."
        )
    baseline, baseline_results = None, []
    if args.baseline:  # evaluated with the same options (--model names the run's), a copy
        base = {**vars(args), "paths": args.baseline, "input_path": [], "model": None}
        baseline_results.append(evaluate(argparse.Namespace(**base), keep_texts=True))
        baseline = run_from_eval(baseline_results[0], args.baseline_label)
        tell_apart(current, baseline)
        meta["model"], meta["baseline"] = current.label, baseline.label
        _check_comparable(compare(current, baseline), args.baseline)
    refuse_overwrite({"--out": args.out}, [result, *baseline_results], args.cache)
    page = render_report(current, meta, baseline, not args.no_compress, prices)
    with atomic_file(args.out) as handle:
        handle.write(page.encode("utf-8", "replace"))
    log.info(
        "report: %s (%.1f MB, %d samples, %.1f s)",
        args.out, len(page) / 1e6, len(current.samples), time.monotonic() - started,
    )  # fmt: skip
    return printable_copy(result.report)
