"""The report's new pictures in headless Chromium (issue 31.4-31.7): the leaderboard, the
per-sample grid (glyphs, solve-rate order, a cell opening its sample's text, hostile ids
inert), the cost-versus-accuracy pictures; nothing loaded from anywhere else."""

from __future__ import annotations

import json
from pathlib import Path

from llmeval.cli.main import main
from llmeval.report.grid import GLYPHS
from llmeval.report.html import render_report
from tests.support.cdp import CHROMIUM, IN_CHROMIUM, Browser
from tests.support.model_runs import two_models_three_tasks
from tests.support.report_fixtures import HOSTILE, hostile_run

pytestmark = IN_CHROMIUM
CELLS = "document.querySelectorAll('#grids details[open] td.gc:not(.gc-missing)')"


def test_leaderboard_grid_and_cost_in_chromium(tmp_path: Path) -> None:
    files = two_models_three_tasks(tmp_path / "runs")
    page = tmp_path / "report.html"
    argv = ["report", *map(str, files), "-o", str(page), "--price-in", "1", "--price-out", "4"]
    assert main([*argv, "--workers", "1", "--no-progress"]) == 0
    rows = {f"{r['problem_id']}#{r['sample_idx']}": r for f in files[:1] for r in _rows(f)}

    with Browser(CHROMIUM, tmp_path / "profile", size=(1400, 1800)) as b:
        b.open(page.as_uri())
        b.wait_for("document.body.dataset.ready === '1'")
        assert (
            b.eval("document.querySelectorAll('#leaderboard table.leaderboard tbody tr').length")
            == 2
        )
        assert b.eval("document.querySelectorAll('#tokens svg.chart').length") == 3
        # a grid per run, the first open: 30 problems x 4 samples, a glyph and a label each
        assert b.eval("document.querySelectorAll('#grids details').length") == 6
        assert b.eval(f"{CELLS}.length") == 120
        glyphs = b.eval(f"[...{CELLS}].map(c => c.textContent)")
        assert set(glyphs) <= set(GLYPHS.values()) and {"✓", "✗"} <= set(glyphs)
        assert b.eval(f"[...{CELLS}].every(c => c.getAttribute('aria-label').includes('sample'))")
        solved = b.eval(
            "[...document.querySelectorAll('#grids details[open] tbody tr')]"
            ".map(r => parseFloat(r.children[1].textContent))"
        )
        assert solved == sorted(solved, reverse=True) and len(solved) == 30
        # a cell opens its sample's text in the problems table
        cell = "document.querySelectorAll('#grids details[open] td.gc-incorrect')"
        pid = b.eval(f"[...{cell}][0].closest('tr').dataset.id")
        idx = b.eval(f"[...{cell}][0].dataset.sample")
        b.eval(f"[...{cell}][0].click()")
        gen = b.wait_for(
            "document.querySelector('pre.gen') && document.querySelector('pre.gen').textContent"
        )
        expected = rows[f"{pid}#{idx}"]["gen"].rsplit("</think>", 1)[-1].lstrip()
        assert gen == expected
        opened = "document.querySelector('#ptable tr.prow.open')"
        assert b.eval(f"{opened}.dataset.id") == pid
        # another run's grid is drawn when opened; Enter on a cell opens it too
        b.click("#grids details:nth-of-type(2) > summary")
        assert b.wait_for(f"{CELLS}.length === 240")  # (drawn after the click, not at once)
        assert b.eval("performance.getEntriesByType('resource').length") == 0  # self-contained
        b.screenshot(tmp_path / "grid.png")
    assert (tmp_path / "grid.png").stat().st_size > 10_000


def test_hostile_problem_ids_stay_text_in_the_grid(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(render_report(hostile_run(n_problems=6, n=3), {"model": "m"}))
    with Browser(CHROMIUM, tmp_path / "profile", size=(1200, 900)) as b:
        b.open(page.as_uri())
        b.wait_for("document.body.dataset.ready === '1'")
        labels = b.eval(f"[...{CELLS}].map(c => c.getAttribute('aria-label'))")
        assert (
            len(labels) == 18 and sum(label.startswith(f"evil{HOSTILE}") for label in labels) == 3
        )
        evil = f"[...{CELLS}].find(c => c.getAttribute('aria-label').startsWith('evil'))"
        b.eval(f"{evil}.dispatchEvent(new KeyboardEvent('keydown', {{key: 'Enter'}}))")
        gen = b.wait_for(
            "document.querySelector('pre.gen') && document.querySelector('pre.gen').textContent"
        )
        assert gen == f"{HOSTILE} \\boxed{{1}}"  # the evil problem's sample, as text
        assert b.eval("typeof window.__pwned") == "undefined"
        assert b.eval("document.querySelectorAll('img').length") == 0


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
