"""The report's server-rendered sections (overview, pictures, judge, serving) and the markup
every section is built of (tables, sections, folded blocks, notes, percentages).

Every value that may come from a file is escaped here; only this module's own markup is raw.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from html import escape

from llmeval.evaluate import headline, live
from llmeval.evaluate.cutoff import cutoff_lines
from llmeval.evaluate.headline import pct
from llmeval.evaluate.reading import InputRun
from llmeval.records import TaskScore
from llmeval.report import charts as sc
from llmeval.report import data as rd
from llmeval.runs.names import shard_layout

SPEC_FIELDS = ("model", "n_samples", "temperature", "top_p", "top_k", "min_p", "max_tokens",
               "reasoning_effort", "thinking_budget", "seed", "system_prompt", "prompt_template",
               "extra_body", "tools", "sandbox", "llmeval_version")  # fmt: skip
JUDGE_ROWS = 500  # overturned samples shown at most


def table(head: Sequence[str], rows: Sequence[Sequence[object]], cls: str = "") -> str:
    """A plain table; every cell is escaped."""
    th = "".join(f"<th>{escape(str(h))}</th>" for h in head)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in row) + "</tr>" for row in rows
    )
    return f'<table class="{cls}"><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>'


def section(name: str, title: str, *parts: str) -> str:
    """A top-level section, `name` its id (and link); the title is escaped, `parts` are markup."""
    return f'<section id="{name}"><h2>{escape(title)}</h2>{"".join(parts)}</section>'


def details(summary: str, inner: str, cls: str) -> str:
    """A folded block; the summary is escaped, `inner` is markup built here."""
    return f'<details class="{cls}"><summary>{escape(summary)}</summary>{inner}</details>'


def overview(run: rd.Run, meta: dict[str, str]) -> str:
    """eval's table of the runs (the same columns: `headline`) with the lines under it, groups
    (subject, level), run settings, versions."""
    labels = sorted(run.scores)
    scores = [run.scores[label] for label in labels]
    columns = headline.columns(scores, run.policy)
    head = ["run", "model", "problems", "n", *(column.name for column in columns)]
    rows = [
        [label, s.model, s.n_problems, s.n_samples, *(column.cell(s) for column in columns)]
        for label, s in zip(labels, scores, strict=True)
    ]
    lines = [headline.title(run.policy), *headline.notes(scores, labels), *cutoff_lines(scores)]
    groups = "".join(_groups(label, s) for label, s in zip(labels, scores, strict=True))
    groups += _tools(labels, scores)
    specs = "".join(_spec(task, f) for task, f in sorted(run.files.items()) if f.spec is not None)
    scored = {f"problems of {label}": f"{s.problems_file} (SHA-256 {s.problems_sha256})"
              for label, s in zip(labels, scores, strict=True) if s.problems_sha256}  # fmt: skip
    facts = "".join(
        f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in {**meta, **scored}.items()
    )
    facts = f'<dl class="facts">{facts}</dl>'
    table_ = table(head, rows, "scores")
    return section(
        "overview", "Overview", _in_progress(labels, scores), facts, table_, *map(note, lines),
        groups, specs,
    )  # fmt: skip


def _in_progress(labels: list[str], scores: list[TaskScore]) -> str:
    """The headline of runs not yet complete: coverage and the complete-rounds estimate
    avg@k ± se (eval --follow's line), not the mean over finished samples, which reads high."""
    lines = [
        f'<p class="headline">{escape(label)}: {escape(live.progress_text(s))}</p>'
        for label, s in zip(labels, scores, strict=True)
        if not s.complete
    ]
    return "".join(lines) + note(live.NO_ROUND_NOTE) if lines else ""


def _groups(task: str, s: TaskScore) -> str:
    """Accuracy by subject and by level (MATH-500), folded."""
    out = ""
    for groups, name in ((s.by_subject, "subject"), (s.by_level, "level")):
        rows = [
            [g, v.n_problems, f"{pct(v.accuracy)} ± {pct(v.stderr)}"] for g, v in groups.items()
        ]
        if rows:
            inner = table([name, "problems", "accuracy %"], rows, "scores")
            out += details(f"{task}: accuracy by {name}", inner, "spec")
    return out


def _tools(labels: list[str], scores: list[TaskScore]) -> str:
    """How the runs drawn with tools used them (eval's figures)."""
    rows = [
        [label, f"{t.with_calls} of {t.samples}", f"{t.calls_per_sample:.2f}",
         pct(t.error_rate), pct(t.timeout_rate), t.out_of_calls, t.answer_in_output]
        for label, s in zip(labels, scores, strict=True)
        if (t := s.tools) is not None and t.calls_per_sample is not None
    ]  # fmt: skip
    head = ["run", "samples with calls", "calls per sample", "errors %", "timeouts %",
            "ran out of calls", "answer only in a tool output (not scored)"]  # fmt: skip
    return table(head, rows, "scores") if rows else ""


def _spec(task: str, source: InputRun) -> str:
    """A run's settings (its run spec's; objects such as `extra_body` as the JSON they were
    given), its files where it has several, and the server's identity as each file's run spec
    records it (one row per identity where they differ)."""
    assert source.spec is not None
    fields = source.spec.model_dump(mode="json")
    rows = [
        [k, json.dumps(v, ensure_ascii=False) if isinstance(v, dict | list) else v]
        for k in SPEC_FIELDS
        if (v := fields.get(k)) not in (None, "", {}, [])
    ]
    if len(source.parts) > 1:
        layout = shard_layout([str(p) for p in source.files], [str(s) for s in source.shards])
        rows.append(["files", f"{source.path}: {layout}"])
    servers: dict[str, list[str]] = {}  # identity -> the files (shards) that record it
    for part in source.parts:
        server = part.spec.server if part.spec else None
        said = server.model_dump(exclude_none=True) if server else {}
        if said:
            text = ", ".join(f"{k}={v}" for k, v in said.items())
            servers.setdefault(text, []).append(f"shard {part.shard}" if part.shard else "file")
    for text, where in servers.items():
        rows.append(["server" if len(servers) == 1 else f"server ({', '.join(where)})", text])
    return details(f"run settings: {task}", table(["field", "value"], rows), "spec")


def pictures(run: rd.Run) -> str:
    """The charts of each run, or why one is absent."""
    out = []
    for task in sorted(run.files):
        charts = "".join(task_charts(run, task))
        out.append(f'<h3>{escape(task)}</h3><div class="charts">{charts}</div>')
    return section("pictures", "Pictures", *out)


def note(text: str) -> str:
    """One line of the report saying what is not shown, or how to read what is."""
    return f'<p class="note">{escape(text)}</p>'


def task_charts(run: rd.Run, task: str) -> list[str]:
    """pass/maj@k and stderr vs n (more than one sample per problem), accuracy vs length cap
    and the length histogram (token counts known), difficulty; a line for each one absent."""
    source = run.files[task]
    problems = rd.problems_of(source.samples, run.policy)
    counted = [s.completion_tokens for s in source.samples if s.completion_tokens is not None]
    out = []
    if min(len(r) for r in problems.values()) > 1:
        pm = rd.pass_maj_curve(run.scores[task])
        se = rd.stderr_curve(problems)
        errors = {"stderr (problems)": se["stderr"], "sample stderr": se["sample_stderr"],
                  "observed spread": se["observed"]}  # fmt: skip
        out += [
            sc.line_chart(f"{task}: pass@k and maj@k", "k", "score",
                          pm["k"], {"pass@k": pm["pass"], "maj@k": pm["maj"]},
                          y_range=(0.0, 1.0), legend="low"),
            sc.line_chart(f"{task}: standard error vs samples per problem", "n samples",
                          "standard error", se["n"], errors, dashed={"observed spread"}),
        ]  # fmt: skip
    else:
        out.append(note("pass@k, maj@k and the standard error against n need more than one "
                        "sample per problem: not drawn"))  # fmt: skip
    if counted:
        caps = rd.default_caps(source.spec.max_tokens if source.spec else max(counted))
        cap = rd.length_cap_curve(problems, caps)
        hist = rd.length_histograms([o for r in problems.values() for o in r])
        out += [
            sc.line_chart(f"{task}: accuracy under a length cap", "max completion tokens",
                          "fraction", cap["cap"],
                          {"accuracy": cap["accuracy"], "truncated": cap["truncated"]},
                          dashed={"truncated"}, y_range=(0.0, 1.0), legend="below"),
            sc.histogram(f"{task}: completion length", "completion tokens", "samples",
                         hist["edges"], {"correct": hist["correct"], "wrong": hist["wrong"]}),
        ]  # fmt: skip
    else:
        out.append(note("the files report no token counts: the length pictures are not drawn"))
    order = rd.difficulty(problems)
    out.append(sc.sorted_bars(f"{task}: per-problem difficulty (sorted)",
                              f"{len(order)} problems", "fraction correct", order))  # fmt: skip
    return out


def overturned(run: rd.Run) -> str:
    """The samples the LLM judge turned correct, each with what the judge saw and replied."""
    rows = [
        [
            f"{task} {s.problem_id} #{s.sample_idx}",
            _cut(f.prompts.get(s.problem_id, ""), 600),
            _cut(s.gold),
            _cut(s.answer_for(run.policy) or ""),
            _cut(s.judge_reply, 1500),
        ]
        for task, f in run.files.items()
        for s in f.samples
        if s.judge == "yes"
    ]
    if not rows:
        return ""
    count = len(rows)
    note = f"<p>{count - JUDGE_ROWS} more not shown.</p>" if count > JUDGE_ROWS else ""
    head = ["sample", "problem", "gold", "answer", "judge's reply"]
    intro = f"<p>Samples the rules judged incorrect and the judge turned correct ({count}).</p>"
    return section("judge", "Judge", intro, table(head, rows[:JUDGE_ROWS], "judge"), note)


def _cut(text: str, limit: int = 300) -> str:
    """Model or judge text cut at `limit` characters (`table` escapes every cell)."""
    return text if len(text) <= limit else text[:limit] + " …"


def serving(run: rd.Run) -> str:
    """Output tokens/s, latency and TTFT percentiles, per endpoint."""
    figures = {"tok/s": "tokens_per_s", "latency s": "latency_s", "TTFT s": "ttft_s"}
    head = ["endpoint", "requests", "output tokens"]
    head += [f"{name} p{q}" for name in figures for q in rd.PERCENTILES]
    if not any(rd.sample_texts(s).latency_s is not None for s in run.samples):
        return section("serving", "Serving", note("the files record no timings: no figures"))
    rows = [
        [ep, f["requests"], f["output_tokens"]]
        + [_num(f[key][f"p{q}"]) for key in figures.values() for q in rd.PERCENTILES]
        for ep, f in rd.serving_figures(run.samples).items()
    ]
    how = note("Per request: output tokens/s = completion tokens / (latency − TTFT).")
    return section("serving", "Serving", table(head, rows, "scores"), how)


def _num(v: float) -> str:
    if math.isnan(v):
        return "–"
    return f"{v:.0f}" if v >= 100 else f"{v:.1f}" if v >= 10 else f"{v:.3f}"
