"""infer -> eval against a real llama-server serving the tiny random model."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from scripts.local.llama_server import LlamaServer
from tests.integration.conftest import (
    assert_complete,
    eval_result,
    infer_cmd,
    problems,
    records,
    run_ok,
    task_result,
)

pytestmark = pytest.mark.integration


def ids(path: Path) -> list[str]:
    return [r["id"] for r in records(path)]


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "no-stream"])
def test_round_trip(tiny_server: LlamaServer, tmp_path: Path, stream: bool) -> None:
    aime = problems(tmp_path / "in", "aime24", 4)
    math = problems(tmp_path / "in", "math500", 3)
    outs = []
    for inp in (aime, math):
        out = tmp_path / "out" / inp.name
        run_ok(infer_cmd(inp, out, tiny_server.base_url, n=3, max_tokens=48, stream=stream))
        recs = records(out)
        assert_complete(recs, ids(inp), 3)
        for rec in recs:
            assert rec["finish_reason"] in ("stop", "length")
            assert rec["usage"]["prompt_tokens"] > 0
            assert 0 < rec["usage"]["completion_tokens"] <= 48
            assert rec["model"] == "tiny-random" and rec["prompt"] and rec["answer"]
            assert (rec.get("ttft_s") is not None) == stream
        outs.append(out)
        # what llama-server says about itself: its model and build, no /version (a 404)
        server = json.loads(Path(f"{out}.spec.json").read_text())["server"]
        assert server["model_id"] == "tiny-random" and server["version"] is None
        assert server["system_fingerprint"].startswith("b")
    # A rerun asks for nothing and changes nothing.
    before = [o.read_bytes() for o in outs]
    run_ok(infer_cmd(aime, outs[0], tiny_server.base_url, n=3, max_tokens=48, stream=stream))
    assert outs[0].read_bytes() == before[0]

    result = eval_result(*outs, result=tmp_path / "scores.json")
    for task, count in (("aime24", 4), ("math500", 3)):
        score = task_result(result, task)
        assert score["n_problems"] == count and score["n_samples"] == 3
        assert score["complete"] is True
        # Random characters never box the right answer; every sample is scored, none lost.
        assert score["accuracy"] == 0.0
        recs = records(tmp_path / "out" / f"{task}.jsonl")
        n_length = sum(r["finish_reason"] == "length" for r in recs)
        assert score["n_truncated"] == n_length


def test_seeds_reproduce(tiny_server: LlamaServer, tmp_path: Path) -> None:
    inp = problems(tmp_path, "aime24", 3)

    def gens(name: str, **flags: object) -> dict[tuple[str, int], str]:
        out = tmp_path / name / "aime24.jsonl"
        run_ok(infer_cmd(inp, out, tiny_server.base_url, n=2, max_tokens=32, **flags))
        return {(r["problem_id"], r["sample_idx"]): r["gen"] for r in records(out)}

    # One request at a time: llama.cpp is not batch-invariant, so the same seed in a batch of
    # other requests can drift after a few tokens (seen with 4 in flight).
    first, again = gens("a", seed=7, workers=1), gens("b", seed=7, workers=1)
    assert first == again
    # Samples of one problem differ from each other (distinct per-sample seeds) ...
    assert len({first[k] for k in first if k[0] == ids(inp)[0]}) == 2
    # ... and another base seed gives other samples.
    other = gens("c", seed=8, workers=1)
    assert sum(other[k] != first[k] for k in first) >= len(first) - 1


def test_length_is_recorded_and_counted_truncated(tiny_server: LlamaServer, tmp_path: Path) -> None:
    inp = problems(tmp_path, "math500", 4)
    out = tmp_path / "out" / "math500.jsonl"
    run_ok(infer_cmd(inp, out, tiny_server.base_url, n=2, max_tokens=4, temperature=0.0))
    recs = records(out)
    n_length = sum(r["finish_reason"] == "length" for r in recs)
    assert n_length >= 6  # 4 tokens of random characters rarely end on </s>
    assert all(r["usage"]["completion_tokens"] <= 4 for r in recs)
    score = task_result(eval_result(out, result=tmp_path / "scores.json"), "math500")
    assert score["n_truncated"] == n_length
    assert score["accuracy"] == 0.0 and score["complete"] is True


def test_the_judge_round_trip(tiny_server: LlamaServer, tmp_path: Path) -> None:
    """eval --judge-url against the real server: random text answers, so the replies carry no
    verdict (unparsed; the rules' verdicts stand). A finished reply is cached; one cut at
    --judge-max-tokens is not, so a rerun asks exactly those again."""
    from tests.integration.conftest import TINY, run
    from tests.support.synthetic import generation, write_jsonl

    rows = [
        generation(f"p{i}", k, str(i), f"So the answer is $\\boxed{{{i + k + 1}}}$.")
        for i in range(3)
        for k in range(2)
    ]
    path = write_jsonl(tmp_path / "aime24_judged.jsonl", rows)
    result = tmp_path / "r.json"
    cmd = [sys.executable, "-m", "llmeval", "eval", str(path), "--result-json", str(result),
           "--judge-url", tiny_server.base_url, "--judge-model", TINY,
           "--judge-max-tokens", "48"]  # fmt: skip
    first = run(cmd)
    assert first.returncode == 0, first.stderr[-3000:]
    (task,) = json.loads(result.read_text())["tasks"]
    judge = task["judge"]
    assert task["accuracy"] == 0.0 and judge["model"] == TINY
    assert judge["asked"] == 6 and judge["unparsed"] >= 1  # random text: no verdict line
    assert "judge: asking tiny-random about 6 answers" in first.stderr
    cut = "a reply that did not finish is not read" in first.stderr  # (warned 3 times at most)
    second = run(cmd)
    assert second.returncode == 0, second.stderr[-3000:]
    again = json.loads(result.read_text())["tasks"][0]["judge"]
    assert again["asked"] == 6 and again["unparsed"] == judge["unparsed"]
    assert ("judge: asking tiny-random about" in second.stderr) == cut
