"""The verdict ledger (`tests/support/ledger.py`, `tests/data/verdict_ledger.jsonl`): every verdict
llmeval decided on purpose, recomputed in full, equals the file line for line, so a verdict that
changes is a decision made in the same commit (`make ledger` rewrites the file and prints what
changed); a grader's case where llmeval differs carries its reason, and only such a case."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from llmeval.verify.pool import default_workers
from tests.support import ledger


def test_make_ledger_recomputes_the_ledger_unchanged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What `make ledger` runs, on a copy: every entry recomputed is the committed one."""
    copy = tmp_path / "verdict_ledger.jsonl"
    shutil.copy(ledger.LEDGER, copy)
    assert ledger.main(["--workers", str(default_workers()), "--ledger", str(copy)]) == 0
    out, err = capsys.readouterr()
    assert err.strip() == "no change", f"`make ledger` rewrites the ledger:\n{err[:6000]}"
    assert copy.read_text() == ledger.LEDGER.read_text(), "the ledger's order changed"
    assert out.startswith("verdict_ledger.jsonl: ") and out.endswith(" entries, 0 changed\n")


def test_each_grader_case_where_llmeval_differs_gives_its_reason() -> None:
    entries = [json.loads(line) for line in ledger.LEDGER.read_text().splitlines()]
    graded = [entry for entry in entries if "expected" in entry]
    unexplained = [e for e in graded if ledger.differs(e) and "reason" not in e]
    stale = [e for e in graded if not ledger.differs(e) and "reason" in e]
    assert len(graded) > 600 and not unexplained and not stale, (unexplained[:3], stale[:3])
