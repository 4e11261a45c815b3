"""Shards: pair ownership by a stable hash, the Slurm array's shard, the files of a run."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from llmeval.client.protocol import build_body
from llmeval.records import RunSpec
from llmeval.runs.layout import RunFiles, run_output, shard_file, shard_of, shards_folder
from llmeval.runs.pairs import Shard, pair_hash, parse_shard, slurm_shard
from llmeval.sampling import Sampling

PAIRS = [(f"aime24/{p}", k) for p in range(30) for k in range(64)]


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 64])
def test_every_pair_belongs_to_exactly_one_shard_of_any_n(n: int) -> None:
    owners = Counter(sum(Shard(k, n).owns(pid, idx) for k in range(n)) for pid, idx in PAIRS)
    assert owners == {1: len(PAIRS)}


def test_the_samples_of_one_problem_spread_over_every_shard() -> None:
    shards = [Shard(k, 8) for k in range(8)]
    for problem in range(30):
        owners = {s for s in shards for idx in range(64) if s.owns(f"aime24/{problem}", idx)}
        assert owners == set(shards)
    sizes = Counter(next(s for s in shards if s.owns(*pair)) for pair in PAIRS)
    assert min(sizes.values()) > len(PAIRS) / 8 * 0.8  # roughly even


def test_the_hash_is_the_same_in_another_process() -> None:
    """Python's hash() of a str is salted per process; the pair hash must not be."""
    code = "from llmeval.runs.pairs import pair_hash; print(pair_hash('aime24/7', 12))"
    env = {"PYTHONHASHSEED": "random", "PATH": ""}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert int(out.stdout) == pair_hash("aime24/7", 12)


@pytest.mark.parametrize(
    ("text", "shard"), [("0/1", Shard(0, 1)), ("3/8", Shard(3, 8)), (" 2 / 4 ", Shard(2, 4))]
)
def test_parse_shard(text: str, shard: Shard) -> None:
    assert parse_shard(text) == shard
    assert str(shard) == text.replace(" ", "")


@pytest.mark.parametrize("text", ["4/4", "1/0", "-1/4", "a/b", "3", "1/2/3", ""])
def test_parse_shard_refuses(text: str) -> None:
    with pytest.raises(ValueError, match="K"):
        parse_shard(text)


def test_slurm_array_tasks_are_shards() -> None:
    assert slurm_shard({}) is None
    assert slurm_shard({"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "8"}) == Shard(3, 8)
    one_based = {"SLURM_ARRAY_TASK_ID": "8", "SLURM_ARRAY_TASK_COUNT": "8"}
    assert slurm_shard({**one_based, "SLURM_ARRAY_TASK_MIN": "1"}) == Shard(7, 8)
    stepped = {"SLURM_ARRAY_TASK_ID": "8", "SLURM_ARRAY_TASK_COUNT": "4"}
    assert slurm_shard({**stepped, "SLURM_ARRAY_TASK_STEP": "4"}) == Shard(2, 4)
    with pytest.raises(ValueError, match="--shard K/N"):
        slurm_shard({"SLURM_ARRAY_TASK_ID": "9", "SLURM_ARRAY_TASK_COUNT": "3"})  # --array=1,5,9


def test_the_files_of_a_run(tmp_path: Path) -> None:
    output = tmp_path / "m" / "aime24.jsonl"
    assert shards_folder(output) == tmp_path / "m" / "aime24.shards"
    assert list(RunFiles.of(output).files) == []
    files = [shard_file(output, Shard(k, n)) for n, k in [(4, 1), (3, 2), (3, 0)]]
    for path in [output, *files]:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}\n")
    (shards_folder(output) / "notes.jsonl").write_text("{}\n")
    assert list(RunFiles.of(output).files) == [output, files[2], files[1], files[0]]
    assert shard_of(files[1]) == Shard(2, 3) and shard_of(output) is None
    assert shard_of(tmp_path / "0-of-2.jsonl") is None  # not in a shards folder
    assert run_output(files[0]) == output and run_output(output) == output


def test_effort_and_budget_are_sent_and_refused_in_extra_body() -> None:
    sampling = Sampling(reasoning_effort="high", thinking_budget=4096)
    body = json.loads(build_body("m", [], sampling, seed=1, stream=False))
    assert body["reasoning_effort"] == "high" and body["thinking_token_budget"] == 4096
    plain = json.loads(build_body("m", [], Sampling(), seed=1, stream=False))
    assert "reasoning_effort" not in plain and "thinking_token_budget" not in plain
    for extra in ({"reasoning_effort": "low"}, {"thinking_token_budget": 10}):
        with pytest.raises(ValueError, match="llmeval sets it"):
            Sampling(extra_body=extra)
    with pytest.raises(ValueError):
        Sampling(reasoning_effort="high; rm -rf")
    with pytest.raises(ValueError):
        Sampling(thinking_budget=0)


def test_run_specs_of_one_run_may_differ_only_in_local_fields() -> None:
    spec = RunSpec(model="m", n_samples=64, shard="0/3", base_urls=["http://a/v1"])
    other = spec.model_copy(update={"shard": "2/3", "base_urls": ["http://b/v1"]})
    assert spec.differences(other, merging=True) == {}
    more = spec.model_copy(update={"n_samples": 96})
    assert spec.differences(more) == {}
    assert spec.differences(more, merging=True) == {"n_samples": (64, 96)}
    effort = spec.model_copy(update={"reasoning_effort": "high"})
    assert spec.differences(effort) == {"reasoning_effort": (None, "high")}
