"""A real small model (SmolLM2-135M-Instruct) through infer and eval: realistic text end to end."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from scripts.local.llama_server import LlamaServer
from scripts.local.smollm import SMOLLM2_NAME
from tests.integration.conftest import (
    assert_complete,
    eval_result,
    infer_cmd,
    problems,
    records,
    run_ok,
    task_result,
)

pytestmark = [pytest.mark.integration, pytest.mark.smollm]


def test_smollm_round_trip(smollm_server: LlamaServer, tmp_path: Path) -> None:
    inp = problems(tmp_path / "in", "math500", 2)
    out = tmp_path / "math500.jsonl"
    cmd = infer_cmd(inp, out, smollm_server.base_url, n=2, max_tokens=96, model=SMOLLM2_NAME)
    run_ok(cmd)
    recs = records(out)
    assert_complete(recs, [r["id"] for r in records(inp)], 2)
    for rec in recs:
        words = re.findall(r"[A-Za-z]{3,}", rec["gen"])
        assert len(words) >= 8, rec["gen"]  # English prose, not random characters
        assert rec["finish_reason"] in ("stop", "length")
    score = task_result(eval_result(out, result=tmp_path / "scores.json"), "math500")
    assert score["n_problems"] == 2 and score["complete"] is True
    n_length = sum(r["finish_reason"] == "length" for r in recs)
    assert score["n_truncated"] == n_length
    assert 0.0 <= score["accuracy"] <= 1.0
