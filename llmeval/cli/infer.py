"""`llmeval infer`: flags (with the upstream tool's spellings) -> `InferOptions` -> `run_infer`."""

from __future__ import annotations

import argparse
import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path

from llmeval.cli.flags import from_flags
from llmeval.client.endpoints import ClientConfig, normalize_base_url
from llmeval.client.tools import FENCES, TOOL_FIELDS
from llmeval.errors import UsageError
from llmeval.infer.options import InferOptions
from llmeval.problems import InputKeys
from llmeval.records import Generation
from llmeval.runs.pairs import Shard, parse_shard, slurm_shard
from llmeval.sampling import Sampling
from llmeval.tasks import MATH_TEMPLATE, get_task, task_from_filename, task_names, unknown_task
from llmeval.transcripts import ToolSettings

DEFAULT_BASE_URL = "http://127.0.0.1:8000/v1"
log = logging.getLogger("llmeval")


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `infer` parser."""
    p = sub.add_parser(
        "infer",
        help="draw samples from an OpenAI-compatible server into a JSONL file (resumable)",
        description="One request and one output line per (problem, sample); reruns resume.",
    )
    add = p.add_argument  # each flag's dest is its first spelling's (`--n-samples`: n_samples)
    add("--input", "--input_file", help="problems JSONL (default: the --task's own problems)")
    add("--output", "--output_file", required=True, help="generations JSONL")
    add("--base-url", "--base_url", action="append",
        help=f"server URL, repeatable (default $LLMEVAL_BASE_URL or {DEFAULT_BASE_URL})",
    )  # fmt: skip
    add("--model", "--model_name", help="model name (default: the only one served)")
    add("--n-samples", "--n_samples", type=int, default=1)
    add("--max-workers", "--max_workers", type=int, default=64, help="requests in flight")
    add("--temperature", type=float, default=0.6)
    add("--top-p", "--top_p", type=float, default=0.95)
    add("--top-k", "--top_k", type=int)
    add("--min-p", "--min_p", type=float)
    add("--max-tokens", "--max_tokens", type=int, default=32768)
    add("--max-reply-bytes", type=int, default=0,
        help="cut longer replies there (0: 64 per --max-tokens token, at least 1 MiB)")  # fmt: skip
    add("--seed", type=int, default=0, help="base seed; each sample's seed derives from it")
    add("--timeout", "--request_timeout", type=float, default=600.0,
        help="seconds to wait for the next byte")  # fmt: skip
    add("--deadline", type=float,
        help="seconds for a whole answer, else it is retried (default: none)")  # fmt: skip
    add("--max-retries", "--max_retries", type=int, default=8)
    add("--retry-delay", type=float, default=1.0, help="first backoff ceiling, seconds")
    add("--retry-max-delay", type=float, default=60.0, help="backoff cap, seconds")
    add("--system-prompt", "--system_prompt")
    add("--system_prompt_type", help="upstream; only 'empty'")
    add("--prompt-template", "--prompt_template",
        help="user message with {problem}, or @FILE (default: the task's)")  # fmt: skip
    add("--task", help="task name (default: from the input file name)")
    add("--extra-body", "--extra_body", help="JSON object merged into requests")
    add("--enable-thinking", "--enable_thinking", action="store_true",
        help="send chat_template_kwargs.enable_thinking=true")  # fmt: skip
    add("--reasoning-effort", "--reasoning_effort", metavar="LEVEL",
        help="send reasoning_effort (low, medium, high, or what the server takes)")  # fmt: skip
    add("--thinking-budget", "--thinking_budget", type=int, metavar="TOKENS",
        help="send vLLM's thinking_token_budget (its server needs --reasoning-parser)")  # fmt: skip
    add("--shard", metavar="K/N",
        help="ask only for shard K of N's samples, into <output>.shards/K-of-N.jsonl; auto: "
        "the Slurm array task's (the default inside one); none: the whole run")  # fmt: skip
    _add_tool_flags(p)
    add("--api-key", "--api_key", help="bearer token (default $OPENAI_API_KEY)")
    add("--stream", action=argparse.BooleanOptionalAction, default=True,
        help="stream responses (SSE); --no-stream for servers without it")  # fmt: skip
    add("--question-key", "--input_key",
        help="key of the question (default: problem, else prompt sent verbatim)")  # fmt: skip
    add("--answer-key", "--answer_key", "--label_key", default="answer")
    add("--id-key", "--id_key", help="key of the id (default: id, else doc_id)")
    add("--response_key", help="upstream: also write the text under this key")
    add("--http", help=argparse.SUPPRESS)  # removed: one HTTP stack; a clear error below
    add("--force", action="store_true", help="resume even though parameters changed")
    add("--model-date", metavar="YYYY-MM-DD",
        help="the model's date (its release or training cut-off), kept in the run spec: eval "
        "shows its score over the contests held after it")  # fmt: skip
    add("--progress", choices=["auto", "bar", "plain"], default="auto")
    add("--progress-interval", type=float, default=5.0, help="seconds between plain lines")
    p.set_defaults(func=run)


def options_from_args(args: argparse.Namespace) -> InferOptions:
    """Check the flags and build `InferOptions`."""
    if args.http is not None:
        raise UsageError(
            "--http was removed: llmeval has one HTTP stack (httpx on aiohttp); drop the flag"
        )
    urls = args.base_url or [os.environ.get("LLMEVAL_BASE_URL") or DEFAULT_BASE_URL]
    for url in urls:
        normalize_base_url(url)
    _check_response_key(args.response_key)
    if args.system_prompt_type not in (None, "empty", "none"):
        raise UsageError(
            f"--system_prompt_type {args.system_prompt_type!r} is not known here; "
            "pass the text with --system-prompt"
        )
    task = get_task(args.task) if args.task else None
    if args.task and task is None:
        raise UsageError("--task: " + unknown_task(args.task))
    problems = args.input
    if problems is None:
        if task is None or task.data_file is None:
            raise UsageError("give the problems: --input FILE, or --task NAME of a task that "
                             "has its own (llmeval tasks lists them)")  # fmt: skip
        problems = str(task.data_file)
    task = task or task_from_filename(problems)
    if task is None:
        _warn_no_task(problems, bool(args.prompt_template))
    key = args.api_key or os.environ.get("OPENAI_API_KEY") or None
    client = from_flags(
        ClientConfig, base_urls=urls, api_key=key, stream=args.stream, timeout=args.timeout,
        deadline=args.deadline,        max_retries=args.max_retries, retry_delay=args.retry_delay,
        retry_max_delay=args.retry_max_delay, max_workers=args.max_workers,
        max_reply_bytes=args.max_reply_bytes or max(64 * args.max_tokens, 1 << 20),
    )  # fmt: skip
    template = _template(args.prompt_template) or (task.template if task else MATH_TEMPLATE)
    shard, shard_source = _shard(args.shard, os.environ)
    return from_flags(
        InferOptions,
        input=problems,
        output=args.output,
        client=client,
        sampling=_sampling(args, template),
        model=args.model,
        n_samples=args.n_samples,
        keys=InputKeys(question=args.question_key, answer=args.answer_key, id=args.id_key),
        task=task.name if task else None,
        force=args.force,
        response_key=args.response_key,
        progress={"auto": None, "bar": True, "plain": False}[args.progress],
        progress_interval=args.progress_interval,
        shard=shard,
        shard_source=shard_source,
        tools=_tools(args),
        model_date=args.model_date,
    )


def _add_tool_flags(p: argparse.ArgumentParser) -> None:
    """The flags of models that run Python while they reason (docs/tools.md)."""
    add = p.add_argument
    add("--tools", choices=["python"], help="offer the model a Python tool (sandboxed)")
    add("--tool-protocol", choices=["native", "inline"],
        help="native: OpenAI function calling (default); inline: ```python blocks")  # fmt: skip
    add("--tool-fences", choices=sorted(FENCES), help="inline: the model family's fences (qwen)")
    add("--max-tool-calls", type=int, metavar="N", help="calls per sample (default 8)")
    add("--tool-timeout", type=float, metavar="S", help="CPU seconds per call (default 10)")
    add("--tool-memory", type=int, metavar="MB", help="memory per call (default 2048)")
    add("--tool-output-chars", type=int, metavar="N",
        help="of a call's output the model sees, head and tail (default 4000)")  # fmt: skip
    add("--tool-state", choices=["stateless", "replay"],
        help="replay: rerun a sample's earlier successful blocks before each call")  # fmt: skip
    add("--sandbox-cmd", metavar="PREFIX", help="run each call under this command (a container)")


_TOOL_FLAGS = {"protocol": "tool_protocol", "fences": "tool_fences", "max_calls": "max_tool_calls",
               "timeout_s": "tool_timeout", "memory_mb": "tool_memory",
               "output_chars": "tool_output_chars", "state": "tool_state",
               "sandbox_cmd": "sandbox_cmd"}  # fmt: skip


def _tools(args: argparse.Namespace) -> ToolSettings | None:
    """`--tools` and its limits as `ToolSettings`; tool flags without --tools are refused."""
    given = {name: getattr(args, dest) for name, dest in _TOOL_FLAGS.items()}
    given = {name: value for name, value in given.items() if value is not None}
    if args.tools is None:
        if given:
            flag = "--" + _TOOL_FLAGS[next(iter(given))].replace("_", "-")
            raise UsageError(f"{flag} needs --tools python")
        return None
    extra = json.loads(args.extra_body or "{}")
    if isinstance(extra, dict) and (own := [k for k in TOOL_FIELDS if k in extra]):
        raise UsageError(f"--extra-body may not set {own[0]!r} with --tools: the tool loop sets it")
    if given.get("fences") and given.get("protocol") != "inline":
        raise UsageError("--tool-fences needs --tool-protocol inline")
    flags = {name: "--" + dest.replace("_", "-") for name, dest in _TOOL_FLAGS.items()}
    return from_flags(ToolSettings, flag_names=flags, tools=args.tools, **given)


# What a generation row holds (llmeval's fields) and what eval reads from other harnesses' rows
# (ids, sample index, problem text, reasoning, subject, level): never the text's second name.
OWN_KEYS = set(Generation.model_fields) | {"doc_id", "sample_index", "reasoning_content",
                                           "problem", "question", "subject", "level"}  # fmt: skip


def _check_response_key(key: str | None) -> None:
    """Refuse a --response_key that names a field llmeval writes or reads (`gen` is the text:
    upstream's default name, a no-op)."""
    if key is not None and key != "gen" and key in OWN_KEYS:
        raise UsageError(
            f"--response_key {key!r} names a field llmeval writes or reads itself (the run "
            "could not be resumed or scored); pick another name"
        )


def _warn_no_task(path: str, own_template: bool) -> None:
    """No task in the input's name nor --task: what eval will make of the run."""
    known = f"{', '.join(task_names())}, math"
    if own_template:
        then = "eval will need --task NAME (math: boxed answers checked as math)"
    else:
        then = "asked with the math template; eval scores it as the generic task 'math'"
    log.warning(
        "%s names no task llmeval knows (%s): %s; --task NAME says which", path, known, then
    )


def _shard(flag: str | None, env: Mapping[str, str]) -> tuple[Shard | None, str | None]:
    """`--shard K/N`, `auto` or `none`; without it, the Slurm array task's shard, if any; and
    where it came from."""
    if flag == "none":
        return None, None
    if flag not in (None, "auto"):
        try:
            return parse_shard(flag), "--shard"
        except ValueError as exc:
            raise UsageError(f"--shard: {exc}") from None
    try:
        shard = slurm_shard(env)
    except ValueError as exc:
        raise UsageError(f"{exc} (or --shard none for the whole run)") from None
    if shard is None and flag == "auto":
        raise UsageError(
            "--shard auto: not in a Slurm array (SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT "
            "are not set); give --shard K/N"
        )
    if shard is None:
        return None, None
    task, count = env.get("SLURM_ARRAY_TASK_ID"), env.get("SLURM_ARRAY_TASK_COUNT")
    return shard, f"Slurm array task {task} of {count}"


def _sampling(args: argparse.Namespace, template: str) -> Sampling:
    """The sampling flags as one `Sampling`; a value it refuses names its flag."""
    return from_flags(
        Sampling,
        temperature=args.temperature,
        top_p=args.top_p,
        top_k=args.top_k,
        min_p=args.min_p,
        max_tokens=args.max_tokens,
        seed=args.seed,
        system_prompt=args.system_prompt or None,
        prompt_template=template,
        extra_body=_extra_body(args.extra_body, args.enable_thinking),
        reasoning_effort=args.reasoning_effort,
        thinking_budget=args.thinking_budget,
    )


def _template(flag: str | None) -> str | None:
    """`--prompt-template`: the text, or the file it names with `@FILE`."""
    if flag and flag.startswith("@"):
        try:
            return Path(flag[1:]).read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"--prompt-template {flag}: {exc.strerror}") from None
    return flag


def _extra_body(flag: str | None, enable_thinking: bool) -> dict:
    """`--extra-body` as a JSON object, with `--enable-thinking`'s template argument."""
    try:
        extra = json.loads(flag or "{}")
    except ValueError as exc:
        raise UsageError(f"--extra-body is not valid JSON: {exc}") from None
    if not isinstance(extra, dict):
        raise UsageError("--extra-body must be a JSON object")
    if enable_thinking:
        kwargs = extra.get("chat_template_kwargs") or {}
        if not isinstance(kwargs, dict):
            raise UsageError("--extra-body: chat_template_kwargs must be a JSON object")
        if kwargs.get("enable_thinking", True) is not True:
            raise UsageError(
                "--enable-thinking and --extra-body's chat_template_kwargs.enable_thinking "
                f"{json.dumps(kwargs['enable_thinking'])} contradict each other: drop one"
            )
        extra["chat_template_kwargs"] = {**kwargs, "enable_thinking": True}
    return extra


def run(args: argparse.Namespace) -> int:
    """Run `infer`; exit 0 complete, 3 some failed, 2 usage/input, 4 server, 130 interrupted."""
    from llmeval.infer.run import run_infer  # (httpx and asyncio: loaded only when infer runs)

    return run_infer(options_from_args(args))
