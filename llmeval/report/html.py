"""Assemble the one-file HTML report: static sections, embedded JSON data, lazily read texts.

Data sits in `<script type="application/json">` blocks with `<`, `>` and `&` escaped, so text
such as `</script>` cannot end the block; the page's JS inserts model text with textContent
only, and a Content-Security-Policy lets only the report's own script run.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import os
import re
from concurrent.futures import ThreadPoolExecutor
from html import escape
from importlib import resources
from string import Template
from typing import Any

from llmeval.evaluate.metrics import fraction_correct, group_by_problem
from llmeval.evaluate.samples import Sample
from llmeval.records import ProblemScore
from llmeval.report import sections
from llmeval.report.comparison import comparison
from llmeval.report.data import Run, sample_texts
from llmeval.report.grid import GLYPHS, NAMES, cell_kind, grid_section
from llmeval.report.leaderboard import leaderboard
from llmeval.report.tokens import Prices, tokens_section

PROBLEMS_TABLE = '<div id="controls"></div><table id="ptable"></table>'  # filled by report.js
_UNSAFE = re.compile("[<>&\u2028\u2029]")  # could end a script block or a JS line


def embed_json(obj: Any) -> str:
    """JSON safe to place inside a `<script>` element: no `<`, `>` or `&` left raw."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _asset(name: str) -> str:
    return resources.files("llmeval.report").joinpath("assets", name).read_text(encoding="utf-8")


def problem_rows(run: Run) -> tuple[list[dict], list[list]]:
    """The problems table's rows (sample headers included) and, apart, each problem's texts.

    The majority answer is eval's (equivalent answers vote together)."""
    rows, texts = [], []
    outcomes = run.problems()
    for task, source in sorted(run.files.items()):
        score = run.scores.get(task)
        scored = {p.problem_id: p for p in score.problems} if score else {}
        for pid, samples in group_by_problem(source.samples).items():
            frac = fraction_correct(outcomes[task][pid])
            unparsed = pid in source.gold_unparsed
            rows.append(_problem_row(task, frac, samples, scored.get(pid), run.policy, unparsed))
            shown = [sample_texts(s) for s in samples]
            prompt = source.prompts.get(pid, "")
            texts.append([prompt, [[t.reasoning or "", t.gen] for t in shown]])
    return rows, texts


def _problem_row(
    task: str,
    frac: float,
    samples: list[Sample],
    maj: ProblemScore | None,
    policy: str,
    unparsed: bool,
) -> dict[str, Any]:
    """A problem's row: its fraction correct, eval's majority answer, the counts, and its
    samples' headers, each with its grid cell (`unparsed`: its gold is)."""
    first = samples[0]
    return {
        "task": task,
        "id": first.problem_id,
        "subject": first.meta.get("subject"),
        "level": first.meta.get("level"),
        "frac": frac,
        "n": len(samples),
        "maj": maj.majority_answer if maj else None,
        "majok": maj.majority_correct if maj else False,
        "gold": first.gold,
        "wrong": sum(not s.correct(policy) for s in samples),
        "noans": sum(s.status[policy] == "no_answer" for s in samples),
        "trunc": sum(s.truncated for s in samples),
        "s": [
            [
                s.sample_idx,
                s.status[policy],
                s.answer_for(policy),
                t.finish_reason,
                s.completion_tokens,
                t.latency_s,
                cell_kind(s, policy, unparsed),
            ]
            for s, t in ((s, sample_texts(s)) for s in samples)
        ],
    }


def _gzip_b64(item: list) -> str:
    raw = json.dumps(item, ensure_ascii=False).encode("utf-8", "replace")
    return base64.b64encode(gzip.compress(raw, compresslevel=6, mtime=0)).decode("ascii")


def _text_blocks(texts: list[list], compress: bool) -> str:
    """One inert script element per problem; gzip+base64 when compressing, else escaped JSON."""
    if compress:
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:  # zlib frees the GIL
            bodies = list(pool.map(_gzip_b64, texts, chunksize=8))
        head = '<script type="text/plain" id="t{}" data-enc="gzip">'
    else:
        bodies = [embed_json(item) for item in texts]
        head = '<script type="application/json" id="t{}">'
    return "\n".join(f"{head.format(i)}{body}</script>" for i, body in enumerate(bodies))


def render_report(
    run: Run,
    meta: dict[str, str],
    baseline: Run | None = None,
    compress: bool = True,
    prices: Prices | None = None,
) -> str:
    """The whole report as one HTML string; `meta["provisional"]`, where set, heads the page."""
    rows, texts = problem_rows(run)
    provisional = meta.get("provisional")
    body = [
        f'<p class="provisional">{escape(provisional)}</p>' if provisional else "",
        leaderboard(run),
        sections.overview(run, meta),
        sections.pictures(run),
        grid_section(bool(rows)),
        sections.section("problems", "Problems and samples", PROBLEMS_TABLE),
        comparison(run, baseline) if baseline is not None else "",
        tokens_section(run, prices),
        sections.overturned(run),
        sections.serving(run),
    ]
    script = _asset("report.js")
    csp_hash = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()
    parts = {
        "TITLE": escape(f"llmeval report: {meta.get('model', run.label)}"),
        "CSP": f"default-src 'none'; script-src 'sha256-{csp_hash}'; style-src 'unsafe-inline'",
        "CSS": _asset("report.css"),
        "NAV": " ".join(
            f'<a href="#{n}">{n}</a>' for n in re.findall(r'<section id="(\w+)">', "".join(body))
        ),
        "BODY": "\n".join(filter(None, body)),
        "DATA": embed_json(
            {"problems": rows, "label": run.label, "glyphs": GLYPHS, "kinds": NAMES}
        ),
        "TEXTS": _text_blocks(texts, compress),
        "JS": script,
    }
    return Template(_asset("report.html")).substitute(parts)
