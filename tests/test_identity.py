"""Identity, decided once (issue 37), through the command line: which rows are one sample,
which texts are one problem, which files are one run, and one name per run on every screen."""

from __future__ import annotations

import json
import random
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from llmeval.cli.main import main
from llmeval.jsonl import JsonlAppender
from llmeval.tasks import DATA_DIR
from tests.infer_helpers import infer, rows
from tests.support.fake_model import load_answers
from tests.support.synthetic import generation, output, write_jsonl
from tests.support.threaded_server import serve

FLAGS = ["--workers", "1", "--no-progress"]
RNG = random.Random(37)
CIRCULATING = Path(__file__).parent / "data" / "aime24_circulating.jsonl"
PROMPT = "\nPlease reason step by step, and put your final answer within \\boxed{}."


def _data(task: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA_DIR / f"{task}.jsonl").open()]


def _eval(tmp_path: Path, *args: str, code: int = 0) -> dict[str, Any]:
    result = tmp_path / "result.json"
    assert main(["eval", *args, "--result-json", str(result), *FLAGS]) == code
    return json.loads(result.read_text()) if code == 0 else {}


def _upstream(row: dict[str, Any]) -> dict[str, Any]:
    """A row of ours as upstream LLMEval writes a sample: no id, no index, `gen` a list."""
    return {"prompt": row["prompt"], "answer": row["answer"], "gen": [row["gen"]]}


# 1. Samples: identical texts are distinct samples; only a repeat that proves itself is a copy


def test_identical_generations_without_an_index_are_distinct_samples(tmp_path: Path) -> None:
    """3 identical right answers and 5 identical wrong ones of one problem, as upstream rows:
    8 samples at 37.5% (2 samples at 50% before: 'copied earlier rows exactly: dropped')."""
    problem = _data("aime24")[0]
    prompt = problem["problem"] + PROMPT
    right = {"prompt": prompt, "answer": problem["answer"], "gen": ["So $\\boxed{204}$."]}
    wrong = dict(right, gen=["So $\\boxed{7}$."])
    path = write_jsonl(tmp_path / "aime24.jsonl", [right] * 3 + [wrong] * 5)
    (task,) = _eval(tmp_path, str(path), "--task", "aime24")["tasks"]
    assert (task["samples_scored"], task["n_copies"], task["accuracy"]) == (8, 0, 0.375)


@pytest.fixture(scope="module")
def brief_run(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """5 problems x 4 samples from the loopback server, a model that answers briefly (its
    texts repeat), written as upstream rows in infer's order."""
    folder = tmp_path_factory.mktemp("brief")
    inp = write_jsonl(folder / "aime24.jsonl", _data("aime24")[:5])
    out = folder / "out" / "aime24.jsonl"
    with serve(answers=load_answers(inp), accuracy=0.5, min_words=0, max_words=0) as srv:
        assert infer(srv.url, inp, out, "--n-samples", "4") == 0
    found = [_upstream(row) for row in rows(out)]
    texts = {(r["prompt"], r["gen"][0]) for r in found}
    assert len(texts) < len(found) == 20  # what this is about: some texts repeat
    return found


def test_a_brief_models_run_as_upstream_rows_scores_every_row(
    tmp_path: Path, brief_run: list[dict[str, Any]]
) -> None:
    path = write_jsonl(tmp_path / "aime24.jsonl", brief_run)
    (task,) = _eval(tmp_path, str(path))["tasks"]
    assert (task["samples_scored"], task["n_copies"], task["n_samples"]) == (20, 0, 4)
    assert task["complete"] is False  # 5 of 30 problems


def test_a_file_concatenated_with_itself_scores_as_the_file_alone(
    tmp_path: Path, brief_run: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a").mkdir()
    alone = write_jsonl(tmp_path / "a" / "aime24.jsonl", brief_run)
    twice = tmp_path / "b" / "aime24.jsonl"
    twice.parent.mkdir()
    twice.write_bytes(alone.read_bytes() * 2)
    (one,) = _eval(tmp_path, str(alone))["tasks"]
    capsys.readouterr()
    (two,) = _eval(tmp_path, str(twice))["tasks"]
    for field in ("samples_scored", "accuracy", "n_samples", "pass_at_k", "stderr"):
        assert two[field] == one[field], field
    assert two["n_copies"] == 20
    captured = capsys.readouterr()
    assert f"{twice}: lines 21-40 repeat lines 1-20 whole, in order" in captured.err
    assert re.search(
        r"copies: aime24 · \S+: 20 rows repeat earlier rows of their file", captured.out
    )


def test_a_run_of_rows_repeated_in_the_middle_is_a_copy_a_short_repeat_is_not(
    tmp_path: Path, brief_run: list[dict[str, Any]]
) -> None:
    """Rows 6-13 (two rounds' worth) appended again after row 20: a copy, named; a block of one
    problem's identical answers is not."""
    path = write_jsonl(tmp_path / "aime24.jsonl", brief_run + brief_run[5:13])
    (task,) = _eval(tmp_path, str(path))["tasks"]
    assert (task["samples_scored"], task["n_copies"]) == (20, 8)


def test_indexed_rows_a_repeated_pair_with_the_same_text_is_a_copy_with_another_a_conflict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    problems = _data("aime24")[:2]
    ours = [generation(p["id"], i, p["answer"], output(p["answer"], 200, RNG)) for p in problems
            for i in range(2)]  # fmt: skip
    other = dict(ours[0], gen=ours[0]["gen"] + " Again.")
    path = write_jsonl(tmp_path / "aime24.jsonl", [*ours, ours[1], other])
    (task,) = _eval(tmp_path, str(path))["tasks"]
    assert (task["samples_scored"], task["n_copies"], task["n_duplicates"]) == (4, 1, 1)
    err = capsys.readouterr().err
    assert f"{path}:6 (problem aime24/60, sample 0, as line 1)" in err


# 2-3. Problems: by id, by text whatever its spacing, by an earlier statement (errata)


def _harness_rows(problems: list[dict[str, Any]], right: int = 1) -> list[dict[str, Any]]:
    """The Qwen2.5-Math harness's rows (`idx`, `question`, `gt`, `code`: n outputs), `right`
    of its 2 outputs answering the gold."""
    return [
        {
            "idx": i,
            "question": p["problem"],
            "gt": p["answer"],
            "code": [output(p["answer"] if j < right else "1", 100, RNG) for j in range(2)],
        }
        for i, p in enumerate(problems)
    ]


def test_outputs_on_the_circulating_aime24_statements_score_all_30_problems(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """aime24 as SkyThought, the Qwen2.5-Math harness and most published runs have it: the 3
    problems the errata corrected match by their earlier statements, and the result says so."""
    circulating = [json.loads(line) for line in CIRCULATING.open()]
    folder = tmp_path / "Qwen2.5-Math-7B" / "math_eval" / "aime24"
    folder.mkdir(parents=True)
    path = write_jsonl(folder / "test_qwen25-math-cot_-1_seed0_t0.0_s0_e-1.jsonl",
                       _harness_rows(circulating))  # fmt: skip
    (task,) = _eval(tmp_path, str(path), "--task", "aime24")["tasks"]
    assert (task["n_problems"], task["n_problems_foreign"], task["complete"]) == (30, 0, True)
    assert task["accuracy"] == 0.5
    assert task["problems_on_earlier_statements"] == ["aime24/71", "aime24/74", "aime24/88"]
    said = "erratum: 3 problems answered on their earlier statements: aime24/71, 74, 88"
    out = capsys.readouterr().out
    assert said in out
    assert task["model"] == "Qwen2.5-Math-7B"  # the harness's folder words are no model
    page = tmp_path / "r.html"
    assert main(["report", str(path), "--task", "aime24", "--out", str(page), *FLAGS]) == 0
    assert said in page.read_text()


def _spaced(text: str) -> str:
    """A problem as NeMo-Skills' copy spaces it: `is  $30$ .` for `is $30$.`."""
    text = re.sub(r"\$([^$]+)\$", lambda m: f" ${m[1].replace(' ', '')}$ ", text)
    return re.sub(r"([.,?])", r" \1", text).replace("\\left(", "(").replace("\\right)", ")")


def test_nemo_skills_copies_that_space_their_math_match_by_text(tmp_path: Path) -> None:
    """A NeMo-Skills aime24 folder: its rows carry no id of ours and space their math; scored
    on 8 of 30 problems before (the rest 'not in the task')."""
    folder = tmp_path / "nemo" / "eval-results" / "aime24"
    folder.mkdir(parents=True)
    problems = _data("aime24")
    texts = [p["problem"] if i < 8 else _spaced(p["problem"]) for i, p in enumerate(problems)]
    assert sum(text != p["problem"] for text, p in zip(texts, problems, strict=True)) == 22
    for seed in range(2):
        write_jsonl(folder / f"output-rs{seed}.jsonl", [
            {"problem": text, "expected_answer": p["answer"],
             "generation": output(p["answer"] if seed == 0 else "1", 100, RNG)}
            for text, p in zip(texts, problems, strict=True)
        ])  # fmt: skip
    (task,) = _eval(tmp_path, str(folder))["tasks"]
    assert (task["n_problems"], task["n_problems_foreign"], task["complete"]) == (30, 0, True)
    assert (task["accuracy"], task["model"]) == (0.5, "nemo")


def test_problems_match_by_id_else_the_longest_text_inside_else_an_earlier_statement() -> None:
    from llmeval.records import Problem
    from llmeval.runs.problems import match_problems

    refs = (
        Problem(id="a", problem="Compute $2+2$.", answer="4"),
        Problem(id="b", problem="Compute $2+2$. Then double it.", answer="8",
                earlier_statements=["Compute 2+2, then triple it."]),
    )  # fmt: skip
    texts = {
        "b": "anything",  # the same id wins over any text
        "x": "Q: Compute 2+2. Then  double it.\nPlease reason",  # holds both texts: the longer
        "y": "Compute  $ 2 + 2 $ .\nPlease reason",
        "w": "Compute 2+2, then triple it. Box it.",  # b's earlier statement
        "z": "Compute 3+3.",
    }
    match = match_problems(refs, texts)
    assert match.ids == {"b": "b", "x": "b", "y": "a", "w": "b"}
    assert (match.earlier, match.foreign) == (["b"], ["z"])


def test_a_file_of_mostly_other_problems_suggests_the_generic_task(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mine = [{"problem": f"What is {i} + {i}?", "answer": str(2 * i)} for i in range(8)]
    problems = _data("aime24")[:2] + mine
    rows_ = [{"prompt": p["problem"] + PROMPT, "answer": p["answer"],
              "gen": [f"So $\\boxed{{{p['answer']}}}$."]} for p in problems]  # fmt: skip
    path = write_jsonl(tmp_path / "aime24_mine.jsonl", rows_)
    (task,) = _eval(tmp_path, str(path))["tasks"]
    assert (task["n_problems"], task["n_problems_foreign"]) == (2, 8)
    err = capsys.readouterr().err
    assert "8 of its 10 problems are not in" in err and "2 matched" in err
    assert "--task math" in err
    (task,) = _eval(tmp_path, str(path), "--task", "math")["tasks"]
    assert (task["n_problems"], task["accuracy"]) == (10, 1.0)


# 4. Runs: one rule, asked by infer before it writes and by eval before it reads


@pytest.fixture
def small_input(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "aime24.jsonl", _data("aime24")[:4])


def test_a_forced_shard_and_a_fresh_one_are_one_run_for_infer_and_eval(
    tmp_path: Path, small_input: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Shard 0 continued with --force at another temperature, shard 1 started fresh at the new
    one: infer took it, eval refused it (exit 2, 'run specs differ in segments'). Both take it
    now, as one run drawn under mixed settings; a shard resumed at the old settings after the
    run moved on is refused by infer in one line."""
    out = tmp_path / "m" / "aime24.jsonl"
    with serve() as srv:
        assert infer(srv.url, small_input, out, "--n-samples", "2", "--shard", "0/2") == 0
        hot = ["--n-samples", "4", "--temperature", "1.0"]
        assert infer(srv.url, small_input, out, *hot, "--shard", "0/2") == 2
        assert infer(srv.url, small_input, out, *hot, "--shard", "0/2", "--force") == 0
        assert infer(srv.url, small_input, out, *hot, "--shard", "1/2") == 0
        capsys.readouterr()
        assert infer(srv.url, small_input, out, "--n-samples", "4", "--shard", "1/2") == 2
        err = capsys.readouterr().err
        assert "temperature" in err and "--force" in err
    (task,) = _eval(tmp_path, str(out.parent))["tasks"]
    assert task["complete"] and task["samples_scored"] == 16
    assert task["mixed_settings"].startswith("samples ") and "temperature 1.0" in task[
        "mixed_settings"]  # fmt: skip


def test_shards_at_other_settings_without_force_are_refused_by_both(
    tmp_path: Path, small_input: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "m" / "aime24.jsonl"
    with serve() as srv:
        assert infer(srv.url, small_input, out, "--n-samples", "2", "--shard", "0/2") == 0
        capsys.readouterr()
        hot = ["--n-samples", "2", "--temperature", "1.0", "--shard", "1/2"]
        assert infer(srv.url, small_input, out, *hot) == 2
        assert "temperature" in capsys.readouterr().err
        # written behind infer's back: eval refuses it in one line too
        assert infer(srv.url, small_input, tmp_path / "other" / "aime24.jsonl", *hot) == 0
    other = tmp_path / "other" / "aime24.shards" / "1-of-2.jsonl"
    for suffix in ("", ".spec.json"):
        shutil.copy(f"{other}{suffix}", f"{out.parent / 'aime24.shards' / '1-of-2.jsonl'}{suffix}")
    capsys.readouterr()
    assert main(["eval", str(out.parent), *FLAGS]) == 2
    assert "temperature" in capsys.readouterr().err


# 6. Rows against their spec; shard files wherever they lie


def test_a_stray_shard_of_another_model_is_refused_with_file_line_and_field(
    tmp_path: Path, small_input: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A shard file copied without its spec (rsync of *.jsonl) over another run's shard: its
    rows say another model; it was merged with exit 0."""
    out, alien = tmp_path / "m" / "aime24.jsonl", tmp_path / "o" / "aime24.jsonl"
    with serve(models=("Other-7B",)) as srv:
        assert infer(srv.url, small_input, alien, "--n-samples", "2", "--shard", "1/2") == 0
    with serve() as srv:
        for k in (0, 1):
            assert infer(srv.url, small_input, out, "--n-samples", "2", "--shard", f"{k}/2") == 0
    target = out.parent / "aime24.shards" / "1-of-2.jsonl"
    shutil.copy(alien.parent / "aime24.shards" / "1-of-2.jsonl", target)
    capsys.readouterr()
    assert main(["eval", str(out.parent), *FLAGS]) == 2
    err = capsys.readouterr().err
    assert f"{target}:1" in err and "model 'Other-7B'" in err and "'test-model'" in err
    with serve() as srv:
        assert infer(srv.url, small_input, out, "--n-samples", "2", "--shard", "0/2") == 2
    assert f"{target}:1" in capsys.readouterr().err


def test_shard_files_copied_flat_into_one_folder_are_one_run(
    tmp_path: Path, small_input: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three shard files and their specs copied flat into one folder were three separate
    incomplete runs; their specs say they are one: one complete run, with a hint."""
    out = tmp_path / "m" / "aime24.jsonl"
    with serve() as srv:
        for k in range(3):
            assert infer(srv.url, small_input, out, "--n-samples", "3", "--shard", f"{k}/3") == 0
    flat = tmp_path / "flat"
    shutil.copytree(out.parent / "aime24.shards", flat)
    (task,) = _eval(tmp_path, str(flat), "--task", "aime24")["tasks"]
    assert (task["samples_scored"], task["n_problems"]) == (12, 4)
    assert task["shards"] == ["0/3", "1/3", "2/3"]
    assert "keep them in <run>.shards/" in capsys.readouterr().err


# 5, 7. Names; finished is not in progress


def test_one_run_one_name_on_every_screen(
    tmp_path: Path, small_input: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two runs of one model at two temperatures, one of them incomplete and being written,
    the other continued with --force: the table, the runs-in-progress table, the notes and the
    report name each run alike; the forced one is named as mixed, not by its last settings."""
    cold, hot = tmp_path / "cold" / "aime24.jsonl", tmp_path / "hot" / "aime24.jsonl"
    with serve() as srv:
        assert infer(srv.url, small_input, cold, "--n-samples", "2") == 0
        assert infer(srv.url, small_input, hot, "--n-samples", "1") == 0
        assert infer(srv.url, small_input, hot, "--n-samples", "2", "--temperature", "1.0",
                     "--force") == 0  # fmt: skip
    kept = rows(cold)[:-1]
    write_jsonl(cold, kept)
    capsys.readouterr()
    with JsonlAppender(cold, exclusive=True):  # a writer holds it: in progress
        _eval(tmp_path, str(cold), str(hot))
    out = capsys.readouterr().out
    cold_name = "aime24 · test-model · temp=0.6"
    hot_name = "aime24 · test-model · temp=mixed (0.6, 1.0)"
    table, _, rest = out.partition("runs in progress")
    assert cold_name in table and hot_name in table
    progress, _, notes = rest.partition("rounds: k of n")
    assert cold_name in progress and hot_name not in progress
    assert f"incomplete: {cold_name}:" in notes
    assert f"mixed settings: {hot_name}:" in notes
    page = tmp_path / "r.html"
    assert main(["report", str(cold), str(hot), "--out", str(page), *FLAGS]) == 0
    html = page.read_text()
    assert cold_name in html and hot_name in html


def test_a_finished_run_that_misses_problems_is_incomplete_not_in_progress(
    tmp_path: Path, small_input: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "m" / "aime24.jsonl"
    with serve() as srv:
        assert infer(srv.url, small_input, out, "--n-samples", "2") == 0
    write_jsonl(out, [r for r in rows(out) if r["problem_id"] != "aime24/60"])
    capsys.readouterr()
    (task,) = _eval(tmp_path, str(out))["tasks"]  # no writer holds it: finished, incomplete
    assert not task["complete"] and task["being_written"] is False
    printed = capsys.readouterr().out
    assert "runs in progress" not in printed and "incomplete: aime24 · test-model:" in printed


@pytest.mark.parametrize(
    ("parts", "model"),
    [
        (("Qwen2.5-Math-7B-Instruct", "math_eval", "aime24"), "Qwen2.5-Math-7B-Instruct"),
        (("DeepSeek-R1-7B", "aime24_eval", "aime24"), "DeepSeek-R1-7B"),
    ],
)
def test_the_qwen_math_harness_folders_name_the_model_folder(
    tmp_path: Path, parts: tuple[str, ...], model: str
) -> None:
    folder = tmp_path.joinpath(*parts)
    folder.mkdir(parents=True)
    path = write_jsonl(folder / "test_qwen25-math-cot_-1_seed0_t0.0_s0_e-1.jsonl",
                       _harness_rows(_data("aime24")[:2]))  # fmt: skip
    (task,) = _eval(tmp_path, str(path))["tasks"]
    assert task["model"] == model


def test_the_one_run_rule_follows_each_files_settings_history(tmp_path: Path) -> None:
    """Pure: which files are one run, by their specs' histories (runs.spec.one_run)."""
    from llmeval.errors import UsageError
    from llmeval.records import RunSpec
    from llmeval.runs.pairs import Shard
    from llmeval.runs.spec import SpecFile, continued, one_run, settings_of

    cold = RunSpec(model="m", n_samples=2)
    hot = cold.model_copy(update={"temperature": 1.0})
    moved = continued(cold, hot.model_copy(update={"n_samples": 4}), force=True, where="x")
    back = continued(moved, cold.model_copy(update={"n_samples": 4}), force=True, where="x")
    other = continued(cold, cold.model_copy(update={"top_p": 0.5}), force=True, where="x")

    def files(*specs: RunSpec) -> list[SpecFile]:
        return [
            SpecFile(tmp_path / f"{k}-of-{len(specs)}.jsonl", s.model_copy(
                update={"shard": f"{k}/{len(specs)}"}), Shard(k, len(specs)))
            for k, s in enumerate(specs)
        ]  # fmt: skip

    ids = [settings_of(s).id for s in (cold, hot)]
    for pair in ((moved, hot), (moved, cold), (hot, moved)):  # forced + fresh; forced + lagging
        run = one_run(files(*pair))
        assert run is not None and [s.id for s in run.segments] == ids
        assert run.temperature == 1.0 and run.n_samples == 4
    run = one_run(files(back, moved))  # moved back to 0.6: the longer history leads
    assert run is not None and run.temperature == 0.6
    with pytest.raises(UsageError, match="not one run"):
        one_run(files(cold, hot))  # no --force: two runs
    with pytest.raises(
        UsageError, match=re.escape("differ in temperature (1.0 vs 0.6; also top_p")
    ):
        one_run(files(moved, other))  # each continued with --force elsewhere
    with pytest.raises(UsageError, match=re.escape("temperature: 1.0 -> 0.6")):
        continued(moved, cold, force=False, where="x")  # infer: a lagging shard draws no more
