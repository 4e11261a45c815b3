"""`llmeval eval`: verify the final answers of generation files and print per-task scores, write
the JSON result and the verdict export; its options and `evaluate` are `report`'s too."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

from llmeval.cli.flags import from_flags
from llmeval.cli.follow import add_follow, check_follow, follow, named_paths, with_paths
from llmeval.errors import PartialError, UsageError
from llmeval.evaluate.layouts import RowKeys
from llmeval.evaluate.options import DEFAULT_TIMEOUT_S, EvalOptions
from llmeval.evaluate.run import EvalResult, run_eval
from llmeval.evaluate.table import export_verdicts, print_report
from llmeval.files import OWN_OUTPUTS, file_kind, write_json_atomic
from llmeval.progress import Progress
from llmeval.records import ScoreReport
from llmeval.runs.layout import SIDE_SUFFIXES, SPEC_SUFFIX
from llmeval.terminal import printable_copy
from llmeval.verify.pool import DEFAULT_MEMORY_MB, default_workers

if TYPE_CHECKING:
    from llmeval.judge.ask import JudgeOptions


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `eval` parser (upstream LLMEval spellings accepted as aliases)."""
    parser = sub.add_parser(
        "eval",
        help="verify final answers and print per-task scores",
        description="Verify the final answer of every sample in generation files (files, "
        "folders or globs) and print per-task scores. Verdicts are cached beside each file.",
    )
    add = parser.add_argument
    add("paths", nargs="*", metavar="PATH", help="generation files, folders, globs")
    add("--input_path", dest="input_path", action="append", default=[], help=argparse.SUPPRESS)
    add("--result-json", "--result_path", dest="result_json", type=Path,
        help="write the JSON result")  # fmt: skip
    add("--export-verdicts", type=Path, help="write one JSON line per sample with its verdict")
    add("--require-complete", action="store_true",
        help="exit 6 when any run is incomplete, once the table and the outputs are written "
        "(for pipelines that must not publish partial figures)")  # fmt: skip
    add_follow(parser, "redrawing the table (and rewriting --result-json) at each refresh")
    add_eval_options(parser)
    parser.set_defaults(func=run)


def add_eval_options(parser: argparse.ArgumentParser) -> None:
    """The options of evaluating, shared by `eval` and `report`."""
    add = parser.add_argument
    add("--task", "--task_name", dest="task",
        help="task of every file (aime24, math_opensource/aime24, ...); default: the run spec "
        "beside the file, else its name")  # fmt: skip
    add("--cache", "--cache_path", dest="cache", type=Path, help="one verdict cache file for all")
    add("--no-cache", action="store_true", help="neither read nor write verdicts")
    add("--workers", "--max_workers", dest="workers", type=int, default=default_workers(),
        help="verifier processes (default and most: all cores)")  # fmt: skip
    add("--timeout", type=float, default=DEFAULT_TIMEOUT_S,
        help="hard deadline per verification, seconds of the verifier's CPU time (default "
        "%(default)s)")  # fmt: skip
    add("--memory-mb", type=int, default=DEFAULT_MEMORY_MB,
        help="address-space cap per verifier process (default %(default)s; 0: none)")  # fmt: skip
    add("--policy", choices=["strict", "lenient"], default="strict",
        help="whose accuracy is `accuracy`: strict (boxed answers only; the default) or "
        "lenient (also 'the answer is X' in finished unboxed outputs, decimal "
        "approximations); the table and JSON show both")  # fmt: skip
    add("--judge-url", help="an OpenAI-compatible server whose model judges the answers the "
        "rules call incorrect (opt-in; `accuracy` stays the rules')")  # fmt: skip
    add("--judge-model", help="the judge's model name (required with --judge-url)")
    add("--judge-api-key", help="the judge's bearer token (default $LLMEVAL_JUDGE_API_KEY)")
    add("--judge-workers", type=int, default=8, help="judge requests in flight (default 8)")
    add("--judge-max-tokens", type=int, default=2048, help="the judge's reply budget (2048)")
    add("--judge-timeout", type=float, default=300.0,
        help="seconds per judge question, retries included (default %(default)g)")  # fmt: skip
    add("--answer-key", default="answer", help="field of the gold answer")
    add("--response-key", default="gen", help="field of the model output (a list: n samples)")
    add("--id-key", help="field of the problem id (default: problem_id, else doc_id, else the "
        "prompt's hash); dotted keys read nested fields (doc.ID)")  # fmt: skip
    add("--filter", dest="lm_filter", metavar="NAME",
        help="lm-evaluation-harness samples files: the filter whose rows are read (default: "
        "the first in the file)")  # fmt: skip
    add("--model", help="the model of every run read (report: not the baseline's; default: "
        "the run spec's, else the rows', else the nearest folder not a benchmark's)")  # fmt: skip
    add("--model-date", metavar="YYYY-MM-DD",
        help="the model's date, for runs whose spec records none: the score over the contests "
        "held after it is shown beside the score over all")  # fmt: skip
    add("--no-progress", action="store_true", help="no progress display")


def options_from_args(args: argparse.Namespace, keep_texts: bool = False) -> EvalOptions:
    """Check the flags and turn them into `EvalOptions` (a value out of its bounds names its
    flag)."""
    paths = named_paths(args)
    if not paths:
        raise UsageError("give at least one generation file, folder or glob")
    if args.cache and args.no_cache:
        raise UsageError("--cache and --no-cache do not go together")
    if args.cache and args.cache.name.endswith(SPEC_SUFFIX):  # it made the run unreadable
        raise UsageError(f"--cache {args.cache}: a run spec's name; name a .jsonl file")
    keys = RowKeys(
        answer=args.answer_key, response=args.response_key, id=args.id_key, lm_filter=args.lm_filter
    )
    return from_flags(
        EvalOptions,
        paths=paths,
        task=args.task,
        cache=args.cache,
        use_cache=not args.no_cache,
        workers=args.workers,
        timeout=args.timeout,
        memory_mb=args.memory_mb or None,
        keys=keys,
        keep_texts=keep_texts,
        policy=args.policy,
        model=args.model or None,
        model_date=args.model_date,
    )


def judge_from_args(args: argparse.Namespace) -> JudgeOptions | None:
    """The judge the flags name, checked (None: no judge asked)."""
    if not (args.judge_url or args.judge_model):
        return None
    from llmeval.client.endpoints import normalize_base_url
    from llmeval.judge.ask import JudgeOptions

    if not (args.judge_url and args.judge_model):
        raise UsageError("--judge-url and --judge-model go together")
    return from_flags(
        JudgeOptions,
        flag_prefix="judge_",
        url=normalize_base_url(args.judge_url, "--judge-url"),
        model=args.judge_model,
        api_key=args.judge_api_key or os.environ.get("LLMEVAL_JUDGE_API_KEY") or None,
        workers=args.judge_workers,
        timeout=args.judge_timeout,
        max_tokens=args.judge_max_tokens,
    )


def evaluate(args: argparse.Namespace, keep_texts: bool = False) -> EvalResult:
    """Evaluate the files the flags name, showing progress unless told not to."""
    options, judge = options_from_args(args, keep_texts), judge_from_args(args)
    if args.no_progress or args.quiet:
        return run_eval(options, judge=judge)
    shown = Progress("eval")

    def progress(verified: int, known: int, remaining: int) -> None:
        info = f"{verified} verified now, {known} cached or needing no verifier"
        shown.update(verified + known, verified + known + remaining, info, last=not remaining)

    try:
        return run_eval(options, progress, judge)
    finally:
        shown.close()


def refuse_overwrite(
    outputs: dict[str, Path | None], results: list[EvalResult], cache: Path | None
) -> None:
    """An output flag (`--result-json`, `--export-verdicts`, report's `--out`) naming a file
    the run read or keeps (a generation file, its run spec or verdict cache), or any file
    holding JSON rows, a run spec, verdicts or a JSON document other than an output's own
    (told by its content, not its name: `files.file_kind`), is refused before anything is
    written: it would be replaced."""
    kept = {os.path.realpath(cache)} if cache else set()
    for result in results:
        for file in (f for run in result.runs for f in run.files):
            kept.update(os.path.realpath(f"{file}{s}") for s in ("", *SIDE_SUFFIXES))
    for flag, path in outputs.items():
        if path is not None and os.path.realpath(path) in kept:
            raise UsageError(f"{flag} {path}: a file this run reads or keeps; it would be replaced")
        kind = file_kind(path) if path is not None else None
        if kind is not None and kind not in OWN_OUTPUTS:
            raise UsageError(
                f"{flag} {path}: holds {kind}, which an output never replaces; name another file"
            )


def _score(args: argparse.Namespace) -> ScoreReport:
    """Evaluate, then write the JSON result and the verdict export (each whole: a script
    watching them never reads half a file); the figures alone are kept, to be shown: every
    name in them (models, files, subjects, settings) made printable (`printable_copy`)."""
    result = evaluate(args)
    outputs = {"--result-json": args.result_json, "--export-verdicts": args.export_verdicts}
    refuse_overwrite(outputs, [result], args.cache)
    if args.result_json:
        write_json_atomic(args.result_json, result.report)
    if args.export_verdicts:
        export_verdicts(args.export_verdicts, result)
    return printable_copy(result.report)


def run(args: argparse.Namespace) -> int:
    """Judge, write the outputs, then print the table (a reader that closes stdout early, as
    `| head` does, loses nothing and is no error); with --follow, again at every refresh.
    With --require-complete, a run still incomplete at the end is an error (exit 6)."""
    interval = check_follow(args)
    shown: list[ScoreReport] = []

    def score(flags: argparse.Namespace) -> ScoreReport:
        shown[:] = [_score(flags)]
        return shown[0]

    if interval is not None:
        args.no_progress = True  # the refreshes are the progress
        code = follow(interval, lambda paths: score(with_paths(args, paths)), print_report,
                      named_paths(args), args.wait)  # fmt: skip
    else:
        print_report(score(args))
        code = 0
    if code == 0 and args.require_complete and shown:
        require_complete(shown[0])
    return code


def require_complete(report: ScoreReport) -> None:
    """Raise `PartialError` when a run of the report lacks samples (the table names them)."""
    incomplete = sum(not task.complete for task in report.tasks)
    if incomplete:
        raise PartialError(
            f"--require-complete: {incomplete} of {len(report.tasks)} runs are incomplete "
            "(named under the table), so these figures are not final"
        )
