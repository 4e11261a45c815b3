"""The settings that tell runs apart (issue 28.8-28.10), in eval and the report: runs of one
model on one task under other settings are two rows labelled by what differs, a baseline
comparison says what differs, reasoning and answer tokens per run, the server's identity."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from llmeval.cli.main import main
from llmeval.records import RunSpec, ServerInfo, TaskScore
from llmeval.runs.names import run_names, run_settings, setting_labels, shard_layout
from llmeval.tasks import DATA_DIR
from tests.support.synthetic import generation, output, write_jsonl

RNG = random.Random(28)
FLAGS = ["--workers", "1", "--no-progress"]
AIME = [json.loads(line) for line in (DATA_DIR / "aime24.jsonl").open()][:4]


def _run(folder: Path, right: int, usage: dict[str, Any] | None = None, **spec: Any) -> Path:
    """A run of 4 problems x 2 samples, `right` of each problem's samples right, in its own
    folder with its run spec (`spec` over the defaults)."""
    folder.mkdir(parents=True)
    rows = []
    for p in AIME:
        for i in range(2):
            row = generation(
                p["id"], i, p["answer"], output(p["answer"] if i < right else "7", 200, RNG)
            )
            row["prompt"] = p["problem"]
            if usage is not None:
                row["usage"] = usage
            rows.append(row)
    path = write_jsonl(folder / "aime24.jsonl", rows)
    settings = {"model": "Qwen3-8B", "n_samples": 2, "task": "aime24", **spec}
    Path(f"{path}.spec.json").write_text(RunSpec(**settings).model_dump_json())
    return path


def _eval(tmp_path: Path, *args: str) -> list[dict[str, Any]]:
    result = tmp_path / "result.json"
    assert main(["eval", *args, "--result-json", str(result), *FLAGS]) == 0
    return json.loads(result.read_text())["tasks"]


def test_runs_of_one_model_and_task_under_other_settings_are_told_apart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    high = _run(tmp_path / "high", 2, reasoning_effort="high", max_tokens=4096)
    low = _run(tmp_path / "low", 1, reasoning_effort="low", max_tokens=4096)
    tasks = _eval(tmp_path, str(high), str(low))
    assert [(t["settings"]["reasoning_effort"], t["accuracy"]) for t in tasks] == [
        ("high", 1.0),
        ("low", 0.5),
    ]
    table = "".join(capsys.readouterr().out.split())
    assert "Qwen3-8B·effort=high" in table and "Qwen3-8B·effort=low" in table
    assert "max_tokens=" not in table and "temp=" not in table  # alike in both: not named
    page = tmp_path / "r.html"
    assert main(["report", str(high), str(low), "--out", str(page), *FLAGS]) == 0
    text = page.read_text()
    assert "aime24 · Qwen3-8B · effort=high" in text and "aime24 · Qwen3-8B · effort=low" in text
    base = tmp_path / "cmp.html"
    args = ["report", str(high), "--baseline", str(low), "--out", str(base), *FLAGS]
    assert main(args) == 0
    compared = base.read_text()
    assert "<td>reasoning_effort: high vs low</td>" in compared
    assert "<th>Qwen3-8B · effort=high %</th><th>Qwen3-8B · effort=low %</th>" in compared
    other = _run(tmp_path / "t1", 1, reasoning_effort="high", max_tokens=4096, temperature=1.0)
    assert main(["report", str(high), "--baseline", str(other), "--out", str(base), *FLAGS]) == 0
    assert "<td>temperature: 0.6 vs 1.0</td>" in base.read_text()


def test_labels_name_only_the_settings_that_differ() -> None:
    specs = [
        RunSpec(model="m", n_samples=4, reasoning_effort="high"),
        RunSpec(model="m", n_samples=4, reasoning_effort="low", thinking_budget=4096),
        RunSpec(model="m", n_samples=4, temperature=1.0, prompt_template="{problem}\n" * 9),
    ]
    labels = setting_labels([run_settings(s) for s in specs] + [{}])
    assert labels[0] == "effort=high · temp=0.6"  # (the default temperature: it differs)
    assert labels[1] == "effort=low · budget=4096 · temp=0.6"
    assert re.fullmatch(r"temp=1\.0 · template=#[0-9a-f]{6}", labels[2])
    assert labels[3] == ""  # no run spec: no settings named
    scores = [
        TaskScore.model_construct(task="aime24", model="m", file=f"/r/{name}/aime24.jsonl",
                                  settings=run_settings(spec))
        for name, spec in (("a", specs[0]), ("b", specs[0]), ("c", specs[1]))
    ]  # fmt: skip
    assert [str(name) for name in run_names(scores)] == [
        "aime24 · m · effort=high (a/aime24.jsonl)",
        "aime24 · m · effort=high (b/aime24.jsonl)",
        "aime24 · m · effort=low · budget=4096",
    ]


def test_settings_that_differ_only_between_tasks_name_no_run() -> None:
    """The demo's GPQA runs with its own template and cap beside AIME: nothing to tell apart
    (they were labelled `max_tokens=128 · template=#599d4e` and `max_tokens=48 · ...`); a cap
    that differs between two runs of the model on one task names every run of that model, so
    that its leaderboard rows hold one setting across tasks."""
    aime = RunSpec(model="m", n_samples=1, max_tokens=128, prompt_template="{problem} box")
    gpqa = RunSpec(model="m", n_samples=8, max_tokens=48, prompt_template="{problem} letter")
    aime_long = aime.model_copy(update={"max_tokens": 4096})
    tasks = ["aime24", "gpqa_diamond", "aime24"]
    scores = [
        TaskScore.model_construct(task=t, model="m", file=f"/r/{i}/{t}.jsonl",
                                  settings=run_settings(s))
        for i, (t, s) in enumerate(zip(tasks, (aime, gpqa, aime_long), strict=True))
    ]  # fmt: skip
    assert [str(name) for name in run_names(scores[:2])] == ["aime24 · m", "gpqa_diamond · m"]
    assert [str(name) for name in run_names(scores)] == [
        "aime24 · m · max_tokens=128",
        "gpqa_diamond · m · max_tokens=48",
        "aime24 · m · max_tokens=4096",
    ]


def test_alike_runs_are_told_apart_by_as_much_of_their_paths_as_it_takes() -> None:
    files = ["/x/m/aime24.jsonl", "/y/m/aime24.jsonl", "/y/n/aime24.jsonl"]
    scores = [
        TaskScore.model_construct(task="aime24", model=model, file=file, settings={})
        for model, file in zip("aab", files, strict=True)
    ]
    assert [str(name) for name in run_names(scores)] == [
        "aime24 · a (/x/m/aime24.jsonl)",
        "aime24 · a (/y/m/aime24.jsonl)",
        "aime24 · b",
    ]
    scores[1], scores[2] = scores[2], scores[1]
    scores[1].file, scores[2].file = files[1], files[2]
    assert [str(name) for name in run_names(scores)] == [
        "aime24 · a (m/aime24.jsonl)",
        "aime24 · b",
        "aime24 · a (n/aime24.jsonl)",
    ]


def test_the_files_of_a_run_in_a_few_words() -> None:
    assert shard_layout(["a.jsonl"], []) == ""
    shards = ["0/3", "1/3", "2/3"]
    assert shard_layout(shards, shards) == "shards 0-2 of 3"
    assert shard_layout(["a", "0/4", "2/4", "3/4", "1/2"], ["0/4", "2/4", "3/4", "1/2"]) == (
        "file + shards 1 of 2; 0, 2-3 of 4"
    )


def test_reasoning_and_answer_tokens_per_run(tmp_path: Path) -> None:
    ours = {"prompt_tokens": 80, "completion_tokens": 1000, "reasoning_tokens": 900}
    raw = {"completion_tokens": 500, "completion_tokens_details": {"reasoning_tokens": 300}}
    garbage = {"completion_tokens": 100, "reasoning_tokens": 400}  # more than the completion
    runs = [
        _run(tmp_path / name, 1, usage, reasoning_effort=name)
        for name, usage in (("a", ours), ("b", raw), ("c", garbage), ("d", None))
    ]
    a, b, c, d = _eval(tmp_path, *map(str, runs))
    assert (a["mean_reasoning_tokens"], a["mean_answer_tokens"]) == (900, 100)
    assert (b["mean_reasoning_tokens"], b["mean_answer_tokens"]) == (300, 200)
    assert (c["mean_reasoning_tokens"], c["mean_answer_tokens"]) == (400, None)
    assert (d["mean_reasoning_tokens"], d["mean_answer_tokens"]) == (None, None)
    page = tmp_path / "r.html"
    assert main(["report", str(runs[0]), "--out", str(page), *FLAGS]) == 0
    text = page.read_text()
    assert "<th>reasoning tokens</th><th>answer tokens</th>" in text
    assert "<td>1,000</td><td>900</td><td>100</td>" in text  # the tokens section's
    assert main(["report", str(runs[3]), "--out", str(page), *FLAGS]) == 0
    assert "reasoning tokens" not in page.read_text()  # no row reports them


def test_the_reports_run_details_show_the_servers_identity(tmp_path: Path) -> None:
    server = ServerInfo(model_id="Qwen/Qwen3-8B", version="0.11.2", system_fingerprint="fp_9a1")
    path = _run(tmp_path / "a", 1, server=server)
    page = tmp_path / "r.html"
    assert main(["report", str(path), "--out", str(page), *FLAGS]) == 0
    text = page.read_text()
    assert (
        "<td>server</td><td>model_id=Qwen/Qwen3-8B, version=0.11.2, system_fingerprint=fp_9a1"
        in text
    )


def test_settings_the_server_ignored_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 42.7: runs at effort low and high and with a thinking budget, from a server that
    ignores both (the loopback server, as vLLM does for most models): every text alike, so
    eval's table and the report say the server appears to ignore the setting. Runs with
    another seed (other texts) are not named."""
    from tests.infer_helpers import AIME24, infer
    from tests.support.fake_model import load_answers
    from tests.support.threaded_server import serve

    runs = {"low": ["--reasoning-effort", "low"], "high": ["--reasoning-effort", "high"],
            "budget": ["--thinking-budget", "64"], "seed": ["--seed", "7"]}  # fmt: skip
    with serve(answers=load_answers(AIME24), accuracy=0.5) as srv:
        for name, flags in runs.items():
            out = tmp_path / name / "aime24.jsonl"
            assert infer(srv.url, AIME24, out, "--n-samples", "2", *flags) == 0
    files = [str(tmp_path / name / "aime24.jsonl") for name in runs]
    capsys.readouterr()
    tasks = _eval(tmp_path, *files[:3])
    low = tasks[[t["file"] for t in tasks].index(files[0])]
    assert low["same_texts"] == (
        f"the same text as {files[1]} in all 60 samples both hold, though they differ in "
        f"reasoning_effort low vs high; the same text as {files[2]} in all 60 samples both "
        "hold, though they differ in reasoning_effort low vs unset, thinking_budget unset vs "
        "64: the server appears to ignore the setting"
    )
    out = capsys.readouterr().out
    assert out.count("settings that changed nothing?: aime24 · test-model · ") == 3
    page = tmp_path / "report.html"
    assert main(["report", *files[:3], "-o", str(page), *FLAGS]) == 0
    assert page.read_text(encoding="utf-8").count("settings that changed nothing?") == 3
    # another seed: other texts, nothing to say (seed is a sampling setting too)
    assert all(t["same_texts"] is None for t in _eval(tmp_path, files[0], files[3]))


def test_only_sampling_settings_that_should_change_a_text_count() -> None:
    from llmeval.evaluate.reading import InputRun
    from llmeval.evaluate.unchanged import sampling_differences
    from llmeval.tasks import TASKS

    def run(**spec: Any) -> InputRun:
        settings = {"model": "m", "n_samples": 2, **spec}
        return InputRun(Path("x.jsonl"), TASKS["aime24"], spec=RunSpec(**settings))

    assert sampling_differences(run(seed=1), run(seed=2)) == {"seed": (1, 2)}
    # greedy: the seed and top_p change nothing; the effort still should
    assert sampling_differences(run(temperature=0, seed=1), run(temperature=0, seed=2)) == {}
    assert sampling_differences(
        run(temperature=0, reasoning_effort="low"), run(temperature=0, reasoning_effort="high")
    ) == {"reasoning_effort": ("low", "high")}
    # a cap, a template or n besides: not alike but for sampling
    assert sampling_differences(run(seed=1, max_tokens=10), run(seed=2)) == {}
    assert sampling_differences(run(prompt_template="{problem}!"), run()) == {}
    assert sampling_differences(run(n_samples=4), run()) == {}
