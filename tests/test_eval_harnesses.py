"""Files other harnesses write, scored as they are written (issue 30.7-9): each built from the
harness's documented format (lm-evaluation-harness `evaluator.py` and `evaluation_tracker.py`,
SkyThought `evals/inference_and_check.py`, NeMo-Skills' datasets and `output-rs<seed>.jsonl`,
LIMO `eval/eval.py`), with docs/harnesses.md's command for it."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from llmeval.cli.main import main
from llmeval.tasks import DATA_DIR
from tests.support.synthetic import output, write_jsonl

RNG = random.Random(7)
FLAGS = ["--workers", "1", "--no-progress"]
AIME = [json.loads(line) for line in (DATA_DIR / "aime24.jsonl").open()]
MATH500 = [json.loads(line) for line in (DATA_DIR / "math500.jsonl").open()]


def _outputs(gold: str, n: int, right: int) -> list[str]:
    return [output(gold if k < right else "1000", 120, RNG) for k in range(n)]


def _eval(tmp_path: Path, *args: str) -> dict[str, Any]:
    result = tmp_path / "result.json"
    assert main(["eval", *args, "--result-json", str(result), *FLAGS]) == 0
    return json.loads(result.read_text())


def _folder(path: Path) -> Path:
    path.mkdir(parents=True)
    return path


def _lm_eval_rows(problems: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """`--log_samples` rows of a generate_until task with `repeats: n`: one row per (document,
    filter), `resps` one list of n outputs per request, `arguments` as the tracker writes it."""
    rows = []
    for doc_id, p in enumerate(problems):
        resps = [_outputs(p["answer"], n, right=doc_id % (n + 1))]
        prompt = f"Question: {p['problem']}\nAnswer:"
        doc = {"id": p["id"], "problem": p["problem"], "answer": p["answer"]}
        kwargs = {"until": ["Question:"], "do_sample": True}
        for name in ("none", "strict-match"):
            rows.append({
                "doc_id": doc_id, "doc": doc, "target": p["answer"],
                "arguments": {"gen_args_0": {"arg_0": prompt, "arg_1": kwargs}},
                "resps": resps, "filtered_resps": [resps[0][0][-12:]], "filter": name,
                "metrics": ["exact_match"], "doc_hash": "h", "prompt_hash": "p", "target_hash": "t",
                "exact_match": 0.0,
            })  # fmt: skip
    return rows


def test_lm_evaluation_harness_samples(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`llmeval eval output/<model>/samples_aime24_<date>.jsonl --id-key doc.id`: repeats as
    samples, one filter's rows (the other holds the same outputs), ids from the nested doc."""
    folder = _folder(tmp_path / "lm-eval-out" / "org__Model-7B")
    path = write_jsonl(folder / "samples_aime24_2026-11-26T10-00-00.jsonl", _lm_eval_rows(AIME, 4))
    (task,) = _eval(tmp_path, str(path), "--id-key", "doc.id")["tasks"]
    assert (task["task"], task["model"], task["n_problems"]) == ("aime24", "org__Model-7B", 30)
    assert (task["n_samples"], task["samples_scored"], task["n_copies"]) == (4, 120, 0)
    assert task["complete"] and task["problems"][0]["problem_id"] == AIME[0]["id"]
    assert task["accuracy"] == pytest.approx(sum(i % 5 for i in range(30)) / 120)
    err = capsys.readouterr().err
    assert "read as lm-evaluation-harness samples" in err and "filter 'none' scored" in err
    (other,) = _eval(tmp_path, str(path), "--filter", "strict-match")["tasks"]
    assert other["accuracy"] == task["accuracy"] and other["complete"]  # matched by text
    assert main(["eval", str(path), "--filter", "flexible", *FLAGS]) == 2
    assert "has the filters none, strict-match" in capsys.readouterr().err


def test_skythought_results_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`llmeval eval result-dir/<model>_aime24_<hash>/`: one JSON document, problem -> its
    responses and token usages (not 'not valid JSON')."""
    folder = _folder(tmp_path / "result-dir" / "Qwen_QwQ-32B-Preview_aime24_6f1a2b")
    doc = {}
    for i, p in enumerate(AIME[:5]):
        texts = _outputs(p["answer"], 3, right=i % 4)
        doc[str(i)] = {
            "id": 60 + i, "problem": p["problem"], "answer": p["answer"], "url": "u", "_index": i,
            "prompt": "Return your final response within \\boxed{}. " + p["problem"],
            "input_conversation": [{"role": "user", "content": "..."}],
            "responses": [{"content": t, "correctness": None, "reason": None} for t in texts],
            "token_usages": [{"completion_tokens": 100 + k, "prompt_tokens": 90} for k in range(3)],
        }  # fmt: skip
    (folder / "results.json").write_text(json.dumps(doc, indent=4))
    (folder / "summary.json").write_text(json.dumps({"configuration": {}, "accuracy": 0.5}))
    (task,) = _eval(tmp_path, str(folder), "--model", "QwQ-32B-Preview")["tasks"]
    assert (task["task"], task["model"], task["n_samples"]) == ("aime24", "QwQ-32B-Preview", 3)
    assert task["accuracy"] == pytest.approx((0 + 1 + 2 + 3 + 0) / 15)
    assert task["mean_completion_tokens"] == 101.0 and task["n_problems_missing"] == 25
    assert "a SkyThought result file (one JSON document, not JSON Lines)" in capsys.readouterr().err


def test_nemo_skills_output_file(tmp_path: Path) -> None:
    """`llmeval eval <model>/eval-results/math-500/output-rs0.jsonl`: the benchmark from its
    folder, the model from the one above eval-results (not 'math-500'); one seed: n = 1."""
    folder = _folder(tmp_path / "Qwen2.5-Math-7B" / "eval-results" / "math-500")
    rows = [
        {"problem": p["problem"], "expected_answer": p["answer"], "subject": p["subject"],
         "level": p["level"], "unique_id": p["id"],
         "generation": _outputs(p["answer"], 1, right=i % 2)[0], "num_generated_tokens": 321,
         "predicted_answer": "x", "symbolic_correct": False}
        for i, p in enumerate(MATH500[:6])
    ]  # fmt: skip
    path = write_jsonl(folder / "output-rs0.jsonl", rows)
    (task,) = _eval(tmp_path, str(path))["tasks"]
    assert (task["task"], task["model"], task["n_samples"]) == ("math500", "Qwen2.5-Math-7B", 1)
    assert (task["n_problems"], task["accuracy"]) == (6, 0.5)
    assert task["mean_completion_tokens"] == 321 and task["by_subject"]
    page = tmp_path / "r.html"
    assert main(["report", str(path), "--model", "Qwen2.5-Math-7B-step500", "--out", str(page),
                 *FLAGS]) == 0  # fmt: skip
    assert "<td>Qwen2.5-Math-7B-step500</td>" in page.read_text()
    args = ["report", str(path), "--baseline", str(path), "--model", "step500", "--out", str(page)]
    assert main([*args, *FLAGS]) == 0  # --model names the run, not its baseline
    assert "Comparison with Qwen2.5-Math-7B</h2>" in page.read_text()


def test_nemo_skills_seed_files_are_one_run(tmp_path: Path) -> None:
    """`output-rs0.jsonl` .. `output-rs3.jsonl` (four seeds, each every problem once): one run
    of n = 4, whichever file or the folder is named; a seed file that lacks a problem leaves
    the run incomplete by one sample."""
    folder = _folder(tmp_path / "QwQ-32B" / "eval-results" / "aime24")
    right = [3, 0, 4, 1, 2]  # seeds right per problem
    for seed in range(4):
        rows = [
            {"id": p["id"], "problem": p["problem"], "expected_answer": p["answer"],
             "generation": output(p["answer"] if seed < right[i] else "1000", 120, RNG)}
            for i, p in enumerate(AIME[:5])
            if (seed, i) != (3, 4)
        ]  # fmt: skip
        write_jsonl(folder / f"output-rs{seed}.jsonl", rows)
    for named in (folder, folder / "output-rs2.jsonl"):
        (task,) = _eval(tmp_path, str(named))["tasks"]
        assert (task["model"], task["n_samples"], task["n_problems"]) == ("QwQ-32B", 4, 5)
        assert task["files"] == [str(folder / f"output-rs{k}.jsonl") for k in range(4)]
        assert (task["samples_scored"], task["samples_missing"]) == (19, 1 + 25 * 4)
        assert task["accuracy"] == pytest.approx((3 / 4 + 0 + 1 + 1 / 4 + 2 / 3) / 5)
        assert task["pass_at_k"]["1"] == pytest.approx(task["accuracy"])


def test_limo_outputs(tmp_path: Path) -> None:
    """`llmeval eval outputs/<model>/aime/<file>.jsonl --task aime24`: `generated_responses` are
    a problem's samples; the model is not LIMO's benchmark folder."""
    folder = _folder(tmp_path / "outputs" / "Qwen" / "Qwen2.5-32B-Instruct" / "aime")
    rows = []
    for i, p in enumerate(AIME):
        texts = _outputs(p["answer"], 4, right=i % 5)
        rows.append({"question": p["problem"], "generated_responses": texts, "id": 60 + i,
                     "generated_answers": ["x"] * 4, "gold_answer": p["answer"],
                     "is_correct": True, "answers_correctness": [True] * 4})  # fmt: skip
    path = write_jsonl(folder / "test_qwen-instruct_t0.7_k4_s0_e30.jsonl", rows)
    (task,) = _eval(tmp_path, str(path), "--task", "aime24")["tasks"]
    assert (task["model"], task["n_samples"], task["samples_scored"]) == (
        "Qwen2.5-32B-Instruct",
        4,
        120,
    )
    assert task["complete"] and task["accuracy"] == pytest.approx(
        sum(i % 5 for i in range(30)) / 120
    )


def test_missing_fields_are_named_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One run names every missing field and its flag (it took one run per field)."""
    rows = [
        {"question": p["problem"], "output": "\\boxed{1}", "label": p["answer"]} for p in AIME[:2]
    ]
    path = write_jsonl(tmp_path / "aime24_mine.jsonl", rows)
    assert main(["eval", str(path), "--id-key", "qid", *FLAGS]) == 2
    err = capsys.readouterr().err
    named = "no field 'gen' (--response-key), no field 'answer' (--answer-key), no field 'qid'"
    assert named + " (--id-key)" in err
    assert "the row has: question, output, label);" in err
    (task,) = _eval(tmp_path, str(path), "--response-key", "output", "--answer-key", "label")[
        "tasks"
    ]
    assert task["samples_scored"] == 2


def test_nested_lists_and_json_documents_say_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_jsonl(tmp_path / "samples_aime24_x.jsonl", _lm_eval_rows(AIME[:2], 2))
    assert main(["eval", str(path), "--response-key", "resps", *FLAGS]) == 2
    err = capsys.readouterr().err
    assert "resps: a list of 2 where a text should be (a list of lists?" in err
    assert "read as written, without --response-key" in err
    rows = [{"problem_id": "1", "gen": "\\boxed{1}", "answer": "1"}]
    for name, text in (("aime24_doc.json", json.dumps(rows, indent=2)),
                       ("aime24_doc.jsonl", json.dumps(rows, indent=2)),
                       ("aime24_line.jsonl", json.dumps(rows))):  # fmt: skip
        (tmp_path / name).write_text(text)
        assert main(["eval", str(tmp_path / name), *FLAGS]) == 2
        err = capsys.readouterr().err
        assert "one JSON document (a list of 1 items), not JSON Lines" in err, err
        assert f"jq -c '.[]' {tmp_path / name} > rows.jsonl" in err and "Traceback" not in err


AIME25 = [json.loads(line) for line in (DATA_DIR / "aime25.jsonl").open()]
# lm-eval's own tasks, as their yamls define them (lm_eval/tasks/aime/aime24.yaml,
# aime25.yaml, math500/): the document each row logs (its dataset's row; math500's as
# process_docs leaves it), its prompt (doc_to_text) and its repeats
LM_EVAL_TASKS = {
    "aime24": (
        AIME,
        lambda p, i: {"ID": f"2024-{'I' if i < 15 else 'II'}-{i % 15 + 1}",
                      "Problem": p["problem"], "Solution": "...", "Answer": int(p["answer"])},
        lambda p: f"Solve the following AIME problem.\n\n{p['problem']}\n\nAnswer:",
        1,
    ),
    "aime25": (
        AIME25,
        lambda p, i: {"problem": p["problem"], "answer": p["answer"], "id": str(i)},
        lambda p: f"Question: {p['problem']}\nAnswer:",
        10,
    ),
    "math500": (
        MATH500[:40],
        lambda p, i: {"problem": p["problem"], "solution": "...", "answer": p["answer"]},
        lambda p: f"Solve the following math problem efficiently and clearly: ...\n\nProblem: "
        f"{p['problem']}",
        1,
    ),
}  # fmt: skip


def _lm_eval_task_rows(task: str) -> list[dict[str, Any]]:
    """`--log_samples` rows of lm-eval's own task: its documents' keys, its prompt, its target
    (`{{Answer}}` / `{{answer}}` rendered), one row per document and filter."""
    problems, doc_of, prompt_of, repeats = LM_EVAL_TASKS[task]
    rows = []
    for i, p in enumerate(problems):
        resps = [_outputs(p["answer"], repeats, right=i % (repeats + 1))]
        args = {"gen_args_0": {"arg_0": prompt_of(p), "arg_1": {"until": ["Question:"]}}}
        rows.append({"doc_id": i, "doc": doc_of(p, i), "target": str(p["answer"]),
                     "arguments": args, "resps": resps, "filtered_resps": [resps[0][0][-9:]],
                     "filter": "none", "metrics": ["exact_match"], "doc_hash": "h",
                     "prompt_hash": "p", "target_hash": "t", "exact_match": 0.0})  # fmt: skip
    return rows


@pytest.mark.parametrize("task", LM_EVAL_TASKS)
def test_lm_evals_own_task_files_are_read_with_the_keys_their_documents_hold(
    task: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 42.2: lm-eval's aime24 documents hold `ID`, `Problem`, `Answer` (its aime25 ones
    `id`, `problem`, `answer`; math500's `problem`, `solution`, `answer`). `--id-key doc.id`
    finds `ID` (a key that differs only in case); a key no document holds is an error listing
    the keys the row has, nested ones included, and none it lacks (not the `gen`, `answer`
    and `prompt` eval gives its rows)."""
    problems, _, _, repeats = LM_EVAL_TASKS[task]
    folder = _folder(tmp_path / "lm-eval-out" / "org__Model-7B")
    path = write_jsonl(folder / f"samples_{task}_2026-11-26T10-00-00.jsonl",
                       _lm_eval_task_rows(task))  # fmt: skip
    right = sum(i % (repeats + 1) for i in range(len(problems))) / (len(problems) * repeats)
    ids = [[], ["--id-key", "doc.id"]] if task != "math500" else [[]]
    for flags in ids:
        (score,) = _eval(tmp_path, str(path), "--task", task, *flags)["tasks"]
        assert (score["n_samples"], score["n_problems"]) == (repeats, len(problems))
        assert score["accuracy"] == pytest.approx(right) and score["n_problems_foreign"] == 0
    if task == "aime24":
        assert score["problems"][0]["problem_id"] == "2024-I-1"  # doc.ID under doc.id
    if task == "math500":
        assert main(["eval", str(path), "--id-key", "doc.id", *FLAGS]) == 2
        err = capsys.readouterr().err
        has = err[err.index("(the row has: ") :]
        assert has.startswith("(the row has: doc_id, doc.problem, doc.solution, doc.answer, "
                              "target, arguments.gen_args_0.arg_0, ")  # fmt: skip
        for lacking in ("gen", "answer", "prompt", "problem_id"):
            assert f" {lacking}," not in has and f" {lacking})" not in has


def _skythought_old(problems: list[dict[str, Any]], temps: dict[str, int]) -> dict[str, Any]:
    """SkyThought's older result file (its `inference_and_check.py` of 2025-01, as committed
    in its repository: skythought/tools/*_AIME_train_*.json): problem text -> the problem's
    fields, `responses` keyed by temperature (one response, or n), `token_usages` alike, each
    response with SkyThought's own `correctness`. At temperature 0.0 problem 0 is boxed right
    but SkyThought called it wrong, problem 1 answered wrong and SkyThought called it right."""
    doc = {}
    for i, p in enumerate(problems):
        responses: dict[str, Any] = {}
        usages: dict[str, Any] = {}
        for temp, n in temps.items():
            finals = [p["answer"] if (i + k) % 2 == 0 else "1000" for k in range(n)]
            said = [final == p["answer"] for final in finals]
            if temp == "0.0" and i < 2:
                said[0] = not said[0]
            entries = [{"content": output(f, 120, RNG), "correctness": c, "reason": "..."}
                       for f, c in zip(finals, said, strict=True)]  # fmt: skip
            counts = [{"completion_tokens": 1000 + k, "prompt_tokens": 700} for k in range(n)]
            responses[temp] = entries if n > 1 else entries[0]
            usages[temp] = counts if n > 1 else counts[0]
        doc[p["problem"]] = {
            "id": 60 + i,
            "problem": p["problem"],
            "solution": "...",
            "answer": p["answer"],
            "url": "https://...",
            "responses": responses,
            "token_usages": usages,
            "prompt": "Return ... " + p["problem"],
        }
    return doc  # fmt: skip


def test_skythoughts_older_result_files_are_read_and_their_verdicts_compared(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 42.3: `responses` keyed by temperature (`{"0.0": {"content": ...,
    "correctness": ...}}`) could not be read at all, nor named by a flag (the key holds a dot).
    Each response is a sample; of several temperatures one is read (--filter picks it); where
    SkyThought's `correctness` and eval's verdicts differ, eval names the samples."""
    folder = _folder(tmp_path / "Qwen2.5-32B-Instruct")
    path = folder / "Qwen2.5-32B-Instruct_AIME_train_None_0_-1_still2-sys_one_short.json"
    path.write_text(json.dumps(_skythought_old(AIME, {"0.0": 1, "0.7": 4}), indent=4))
    (task,) = _eval(tmp_path, str(path), "--task", "aime24")["tasks"]
    assert (task["model"], task["n_samples"], task["n_problems"]) == ("Qwen2.5-32B-Instruct", 1, 30)
    assert task["complete"] and task["accuracy"] == pytest.approx(15 / 30)
    assert task["mean_completion_tokens"] == 1000 and task["mean_prompt_tokens"] == 700
    log = caplog.text
    assert "the samples of temperature '0.0' scored; those of '0.7' are left out" in log
    assert (
        "SkyThought's own correctness differs from the strict verdicts on 2 of the 30 samples "
        "it judged: 60 #0: SkyThought incorrect, strict correct, answer '204'; 61 #0: "
        "SkyThought correct, strict incorrect, answer '1000'"
    ) in log
    caplog.clear()
    (hot,) = _eval(tmp_path, str(path), "--task", "aime24", "--filter", "0.7")["tasks"]
    assert hot["n_samples"] == 4 and hot["accuracy"] == pytest.approx(0.5)
    assert hot["mean_completion_tokens"] == 1001.5
    assert "agrees with the strict verdicts on all 120 samples it judged" in caplog.text
    assert main(["eval", str(path), "--task", "aime24", "--filter", "1.0", *FLAGS]) == 2
    assert "has the temperatures 0.0, 0.7" in capsys.readouterr().err
