"""Server-rendered HTML of the report's static sections: overview, pictures, comparison, serving.

Every value that may come from a file is escaped here; only this module's own markup is raw.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from llmeval.report import charts as sc
from llmeval.report import data as rd

SPEC_FIELDS = (
    "model",
    "n_samples",
    "temperature",
    "top_p",
    "top_k",
    "min_p",
    "max_tokens",
    "seed",
    "system_prompt",
    "extra_body",
    "llmeval_version",
)


def pct(v: float | None, digits: int = 1) -> str:
    """0.4567 -> '45.7'; missing -> '–'."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    return f"{100 * v:.{digits}f}"


def table(head: Sequence[str], rows: Sequence[Sequence[object]], cls: str = "") -> str:
    """A plain table; every cell is escaped."""
    th = "".join(f"<th>{escape(str(h))}</th>" for h in head)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in row) + "</tr>" for row in rows
    )
    return f'<table class="{cls}"><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>'


def _last(d: dict) -> tuple[str, float | None]:
    """The entry of the largest k in a {k: value} dict."""
    if not d:
        return "", None
    k = max(d, key=lambda x: int(x))
    return k, d[k]


HEAD = ["task", "problems", "n", "scored", "accuracy % ± stderr", "sample stderr %",
        "pass@k %", "maj@k %", "no-answer %", "timeout %", "truncated %", "mean tokens",
        "complete"]  # fmt: skip


def score_row(task: str, s: dict) -> list[object]:
    """One task's headline figures (eval's `TaskScore` fields), in percent."""
    k, pk = _last(s.get("pass_at_k", {}))
    mk, mj = _last(s.get("maj_at_k", {}))
    scored = max(s["samples_scored"], 1)
    tokens = s.get("mean_completion_tokens")
    missing = s.get("samples_missing", 0)
    return [
        task, s["n_problems"], s["n_samples"], f"{s['samples_scored']}/{s['samples_expected']}",
        f"{pct(s['accuracy'])} ± {pct(s['stderr'])}", pct(s.get("sample_stderr"), 2),
        f"{pct(pk)} (k={k})", f"{pct(mj)} (k={mk})", pct(s["n_no_answer"] / scored),
        pct(s["n_timeout"] / scored), pct(s["n_truncated"] / scored),
        "–" if tokens is None else f"{tokens:.0f}",
        "yes" if s.get("complete") else f"NO ({missing} missing)",
    ]  # fmt: skip


def overview(run: rd.Run, meta: dict[str, str]) -> str:
    """Per-task table from eval's figures, groups (subject, level), run settings, versions."""
    rows = [score_row(task, s) for task, s in sorted(run.scores.items())]
    groups = "".join(_groups(task, s) for task, s in sorted(run.scores.items()))
    specs = "".join(_spec(task, spec) for task, spec in sorted(run.specs.items()))
    facts = "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in meta.items())
    return (
        f'<section id="overview"><h2>Overview</h2><dl class="facts">{facts}</dl>'
        f"{table(HEAD, rows, 'scores')}{groups}{specs}</section>"
    )


def _groups(task: str, s: dict) -> str:
    """Accuracy by subject and by level (MATH-500), folded."""
    out = []
    for key, name in (("by_subject", "subject"), ("by_level", "level")):
        rows = [
            [g, v["n_problems"], f"{pct(v['accuracy'])} ± {pct(v.get('stderr'))}"]
            for g, v in (s.get(key) or {}).items()
        ]
        if rows:
            out.append(
                details(
                    f"{task}: accuracy by {name}",
                    table([name, "problems", "accuracy %"], rows, "scores"),
                    "spec",
                )
            )
    return "".join(out)


def _spec(task: str, spec: dict) -> str:
    rows = [[k, spec[k]] for k in SPEC_FIELDS if spec.get(k) not in (None, "", {}, [])]
    return details(f"run settings: {task}", table(["field", "value"], rows), "spec")


def details(summary: str, inner: str, cls: str) -> str:
    """A folded block; the summary is escaped, `inner` is markup built here."""
    return f'<details class="{cls}"><summary>{escape(summary)}</summary>{inner}</details>'


def pictures(run: rd.Run) -> str:
    """Four charts per task."""
    out = ['<section id="pictures"><h2>Pictures</h2>']
    for task, problems in sorted(run.problems().items()):
        score, spec = run.scores.get(task, {}), run.specs.get(task, {})
        charts = "".join(task_charts(task, problems, score, spec))
        out.append(f'<h3>{escape(task)}</h3><div class="charts">{charts}</div>')
    out.append("</section>")
    return "".join(out)


def task_charts(task: str, problems: rd.Problems, score: dict, spec: dict) -> list[str]:
    """pass/maj@k, stderr vs n, accuracy vs length cap, length histogram, difficulty."""
    pm = rd.pass_maj_curve(score)
    se = rd.stderr_curve(problems)
    samples = [s for r in problems.values() for s in r]
    top = max([s.tokens or 0 for s in samples] + [spec.get("max_tokens") or 0])
    caps = rd.default_caps(top)
    cap = rd.length_cap_curve(problems, caps)
    hist = rd.length_histograms(samples)
    order = rd.difficulty(problems)
    return [
        sc.line_chart(
            [sc.Series("pass@k", pm["k"], pm["pass"]), sc.Series("maj@k", pm["k"], pm["maj"])],
            title=f"{task}: pass@k and maj@k",
            x_label="k",
            y_label="score",
            log2_x=True,
            y_range=(0.0, 1.0),
            legend_low=True,
        ),
        sc.line_chart(
            [
                sc.Series("stderr (problems)", se["n"], se["stderr"]),
                sc.Series("sample stderr", se["n"], se["sample_stderr"]),
                sc.Series("observed spread", se["n"], se["observed"], dashed=True),
            ],
            title=f"{task}: standard error vs samples per problem",
            x_label="n samples",
            y_label="standard error",
            log2_x=True,
        ),
        sc.line_chart(
            [
                sc.Series("accuracy", cap["cap"], cap["accuracy"]),
                sc.Series("truncated", cap["cap"], cap["truncated"], dashed=True),
            ],
            title=f"{task}: accuracy under a length cap",
            x_label="max completion tokens",
            y_label="fraction",
            log2_x=True,
            y_range=(0.0, 1.0),
        ),
        sc.histogram(
            hist["edges"],
            [("correct", hist["correct"]), ("wrong", hist["wrong"])],
            title=f"{task}: completion length",
            x_label="completion tokens",
            y_label="samples",
        ),
        sc.sorted_bars(
            order,
            title=f"{task}: per-problem difficulty (sorted)",
            x_label=f"{len(order)} problems",
            y_label="fraction correct",
        ),
    ]
