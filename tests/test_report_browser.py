"""The report in headless Chromium: table, filters, expanding samples, no injected script runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from llmeval.report.html import render_report
from tests.support.cdp import CHROMIUM, IN_CHROMIUM, Browser
from tests.support.report_fixtures import HOSTILE, hostile_run, make_run

pytestmark = IN_CHROMIUM

ROWS = "document.querySelectorAll('#ptable tr.prow').length"


def _set_filter(b: Browser, value: str) -> None:
    b.eval(
        "(() => { const s = document.getElementById('filter-select');"
        f" s.value = {json.dumps(value)}; s.dispatchEvent(new Event('change')); }})()"
    )


@pytest.mark.parametrize("compress", [True, False], ids=["gzip", "json"])
def test_report_in_chromium(tmp_path: Path, compress: bool) -> None:
    run = hostile_run(n_problems=20, n=8)
    problems = run.problems()["aime24"]
    want_noans = sum(any(o.status == "no_answer" for o in r) for r in problems.values())
    assert 0 < want_noans < len(problems)
    page = tmp_path / "report.html"
    page.write_text(
        render_report(
            run, {"model": "m"}, baseline=make_run("old", n_problems=20, n=8), compress=compress
        )
    )

    with Browser(CHROMIUM, tmp_path / "profile", size=(1400, 1800)) as b:
        b.open(page.as_uri())
        b.wait_for("document.body.dataset.ready === '1'")
        title = b.eval("document.title")
        assert title == "llmeval report: m"
        assert b.eval(ROWS) == len(problems)
        assert b.eval("document.querySelectorAll('#pictures svg').length") == 5

        _set_filter(b, "no_answer")
        assert b.eval(ROWS) == want_noans
        _set_filter(b, "all")
        assert b.eval(ROWS) == len(problems)

        b.click("#ptable th[data-key='frac']")  # sort: hardest first
        fracs = b.eval(
            "[...document.querySelectorAll('#ptable tr.prow')].map(r => r.children[4].textContent)"
        )
        assert [float(f.rstrip("%")) for f in fracs] == sorted(float(f.rstrip("%")) for f in fracs)

        evil = "#ptable tr.prow[data-i='0']"
        assert b.eval(f'document.querySelector("{evil}").dataset.id') == f"evil{HOSTILE}"
        b.click(evil)
        assert b.wait_for("document.querySelectorAll('tr.srow').length") == 8
        b.click("tr.srow")
        gen = b.wait_for(
            "document.querySelector('pre.gen') && document.querySelector('pre.gen').textContent"
        )
        assert gen == f"{HOSTILE} \\boxed{{1}}"
        assert b.eval("document.querySelector('pre.reasoning').textContent") == HOSTILE
        b.wait_for("!document.querySelector('pre.problem').textContent.startsWith('loading')")
        assert b.eval("document.querySelector('pre.problem').textContent") == HOSTILE

        # Nothing from the model text ran or became markup.
        assert b.eval("typeof window.__pwned") == "undefined"
        assert b.eval("document.title") == title
        assert b.eval("document.querySelectorAll('img').length") == 0
        assert b.eval("document.querySelectorAll('script').length") == 1 + 20 + 1

        b.click("#ptable tr.prow[data-i='0']")  # fold again
        assert b.eval("document.querySelectorAll('tr.srow').length") == 0
        b.click("#ptable tr.prow[data-i='3']")
        b.wait_for("document.querySelectorAll('tr.srow').length")
        b.screenshot(tmp_path / "report.png")
    assert (tmp_path / "report.png").stat().st_size > 10_000


def _in_chromium(tmp_path: Path, charts: str, script: str) -> Any:
    """What `script` gives on a page holding only `charts`, once it has loaded."""
    page = tmp_path / "charts.html"
    page.write_text(f"<!DOCTYPE html><html><body>{charts}</body></html>", encoding="utf-8")
    with Browser(CHROMIUM, tmp_path / "profile", size=(1000, 1200)) as b:
        b.open(page.as_uri())
        b.wait_for("document.readyState === 'complete'")
        return b.eval(script)


def test_chart_titles_fit_their_charts(tmp_path: Path) -> None:
    """A long task and model name: each title line lies inside its chart (it ran off the edge)."""
    from llmeval.report.charts import line_chart

    title = "aime24 · DeepSeek-R1-Distill-Qwen-7B-step-12000: standard error vs samples per problem"
    chart = line_chart(title, "n", "se", [1.0, 2.0, 4.0], {"se": [0.1, 0.07, 0.05]})
    overflow = _in_chromium(
        tmp_path,
        chart,
        "(() => { const svg = document.querySelector('svg.chart');"
        " const width = svg.viewBox.baseVal.width;"
        " return [...svg.querySelectorAll('text.title')].map(t => {"
        " const box = t.getBBox(); return box.x + box.width - width; }); })()",
    )
    assert len(overflow) == 2 and max(overflow) <= 0, overflow


def test_legends_below_the_plot_cover_no_data(tmp_path: Path) -> None:
    """Issue 42.8: the cost-vs-accuracy and length-cap legends lie under the plot area, each
    entry inside the picture, however many runs and however long their names (they sat on the
    points and lines)."""
    from llmeval.report.charts import BOTTOM, H, line_chart
    from llmeval.report.scatter import scatter

    names = [f"aime24 · DeepSeek-R1-Distill-Qwen-7B-step-{1000 * k} · effort=high"
             for k in range(8)]  # fmt: skip
    cost = scatter("aime24: cost vs accuracy", "cost of the run ($)", "accuracy",
                   [(name, 0.5 + k, 0.1 * k, 0.05) for k, name in enumerate(names)])  # fmt: skip
    cap = line_chart("aime24: accuracy under a length cap", "max completion tokens", "fraction",
                     [2048.0, 4096.0, 8192.0], {"accuracy": [0.9, 0.95, 0.99],
                     "truncated": [0.9, 0.5, 0.01]}, dashed={"truncated"}, y_range=(0.0, 1.0),
                     legend="below")  # fmt: skip
    boxes = _in_chromium(
        tmp_path,
        cost + cap,
        "[...document.querySelectorAll('svg.chart')].map(svg => {"
        " const view = svg.viewBox.baseVal; const shift = svg.querySelector('g') ?"
        " svg.querySelector('g').transform.baseVal.consolidate().matrix.f : 0;"
        " return [view.width, view.height, shift, [...svg.querySelectorAll('text.legend')]"
        ".map(t => { const r = t.getBBox(); return [r.x, r.y, r.width, r.height]; })]; })",
    )
    assert [len(legend) for *_, legend in boxes] == [8, 2]
    for width, height, shift, legend in boxes:
        for x, y, w, h in legend:
            assert y + shift > H - BOTTOM + 16, (y, shift)  # under the plot and its x label
            assert x >= 0 and x + w <= width and y + shift + h <= height, (x, w, y, h)
