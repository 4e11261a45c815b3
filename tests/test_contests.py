"""Contests as tasks (issue 41.1, 41.3): `llmeval tasks` lists every task with its date, source
and checksum; `llmeval task add` turns a MathArena folder, a CSV, a JSONL of problems or another
harness's generation file into a task (golds checked by the verifier, checksum kept), which
infer, eval and report then run like a shipped one."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from llmeval.cli.main import main
from llmeval.tasks import TASKS, get_task, user_tasks_dir
from tests.infer_helpers import FAST, rows, write_jsonl
from tests.support.threaded_server import serve

INSTRUCTION = "Please reason step by step, and put your final answer within \\boxed{}."
PROBLEMS = {  # number -> (statement, gold as answers.csv writes it)
    1: ("Compute $1+2+3$.", "6"),
    2: ("Compute the probability that a fair coin shows heads twice in a row.", '"\\dfrac{1}{4}"'),
    3: ("Let $x^2 = 2$ with $x > 0$. Compute $x^3$.", "2\\sqrt{2}"),
    4: ("Compute all real $x$ with $x^2 = 9$.", '"-3, 3"'),
}


def matharena(folder: Path, date: str | None = "2026-02-14", drop: int | None = None) -> Path:
    """A contest in MathArena's layout: problems/<i>.tex, answers.csv, config.yaml."""
    (folder / "problems").mkdir(parents=True)
    for number, (text, _) in PROBLEMS.items():
        (folder / "problems" / f"{number}.tex").write_text(text + "\n")
    lines = [f"{n},{gold}" for n, (_, gold) in PROBLEMS.items() if n != drop]
    (folder / "answers.csv").write_text("id,answer\n" + "\n".join(lines) + "\n")
    config = [
        "# the contest's own settings",
        'instruction: "' + INSTRUCTION.replace("\\", "\\\\").replace("{}", "{{}}") + '"',
        "default_temperature: 0.6",
        "n_problems: 4",
        *([f'date: "{date}"'] if date else []),
    ]
    (folder / "config.yaml").write_text("\n".join(config) + "\n")
    return folder


def _task_rows(name: str) -> list[dict]:
    return rows(user_tasks_dir() / f"{name}.jsonl")


def test_llmeval_tasks_lists_name_problems_kind_date_source_and_checksum(capsys) -> None:
    assert main(["tasks"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["task", "problems", "answer", "date", "SHA-256", "source"]
    hmmt24 = next(line for line in lines if line.startswith("hmmt24 "))
    assert hmmt24.split()[:5] == ["hmmt24", "30", "math", "2024-02-17", TASKS["hmmt24"].sha256[:12]]
    assert hmmt24.endswith("eth-sri/matharena, data/hmmt/hmmt_feb_2024, 96440b2 (MIT)")
    math500 = next(line for line in lines if line.startswith("math500 "))
    assert "2021-03-05 (published)" in math500
    assert sum(line.split()[0] in TASKS for line in lines if line.strip()) == len(TASKS)
    assert f"your tasks: 0 in {user_tasks_dir()} ($LLMEVAL_TASKS)" in "\n".join(lines)
    assert main(["tasks", "--json"]) == 0
    listed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {row["task"]: row["SHA-256"] for row in listed} == {
        name: task.sha256 for name, task in TASKS.items()
    }


def test_a_matharena_folder_becomes_a_task_that_infer_eval_and_report_run(
    tmp_path: Path, capsys
) -> None:
    """The morning after a contest: its folder becomes a task and a model is scored on it
    through the CLI, like on a shipped task."""
    folder = matharena(tmp_path / "hmmt_feb_2026")
    assert main(["task", "add", "hmmt26", "--from", str(folder)]) == 0  # its date: config's
    said = capsys.readouterr().out.splitlines()
    data = user_tasks_dir() / "hmmt26.jsonl"
    digest = hashlib.sha256(data.read_bytes()).hexdigest()
    assert said[0] == (f"task hmmt26: 4 problems from {folder} (MathArena folder), held "
                       f"2026-02-14, SHA-256 {digest}")  # fmt: skip
    problems = _task_rows("hmmt26")
    assert [p["id"] for p in problems] == ["hmmt26/1", "hmmt26/2", "hmmt26/3", "hmmt26/4"]
    assert [p["answer"] for p in problems] == ["6", "\\dfrac{1}{4}", "2\\sqrt{2}", "-3, 3"]
    task = get_task("hmmt26")
    assert task is not None and task.data_file == data
    assert (task.date, task.sha256) == ("2026-02-14", digest)
    run = tmp_path / "out" / "m" / "hmmt26.jsonl"
    with serve(answers={p["problem"]: p["answer"] for p in problems}, accuracy=1.0) as srv:
        argv = ["infer", "--task", "hmmt26", "--output", str(run), "--base-url", srv.url]
        assert main([*argv, "--n-samples", "2", *FAST]) == 0
    samples = rows(run)
    assert len(samples) == 8 and {s["task"] for s in samples} == {"hmmt26"}
    assert main(["infer", "--output", str(tmp_path / "o.jsonl")]) == 2  # no problems named
    assert "error: give the problems: --input FILE, or --task NAME" in capsys.readouterr().err
    # MathArena's prompt: its own instruction, then the problem
    assert samples[0]["prompt"] == f"{INSTRUCTION}\n\n{PROBLEMS[1][0]}"
    spec = json.loads(Path(f"{run}.spec.json").read_text())
    assert (spec["task"], spec["input_file"], spec["input_sha256"]) == ("hmmt26", str(data), digest)
    result = tmp_path / "result.json"
    assert main(["eval", str(run.parent), "--result-json", str(result), "--no-progress"]) == 0
    (score,) = json.loads(result.read_text())["tasks"]
    assert (score["task"], score["n_problems"], score["n_samples"]) == ("hmmt26", 4, 2)
    assert score["accuracy"] == 1.0 and score["complete"]
    assert (score["problems_file"], score["problems_sha256"]) == (str(data), digest)
    page = tmp_path / "report.html"
    assert main(["report", str(run.parent), "--out", str(page), "--no-progress"]) == 0
    assert f"{data} (SHA-256 {digest})" in page.read_text()


def test_adding_a_name_again_is_refused_unless_the_checksums_match(tmp_path: Path, capsys) -> None:
    folder = matharena(tmp_path / "contest")
    assert main(["task", "add", "mycontest", "--from", str(folder)]) == 0
    entry = (user_tasks_dir() / "mycontest.task.json").read_bytes()
    capsys.readouterr()
    assert main(["task", "add", "mycontest", "--from", str(folder)]) == 0
    assert "task mycontest: already there with the same 4 problems" in capsys.readouterr().out
    other = tmp_path / "other.csv"
    other.write_text("problem,answer\nCompute $2+2$.,4\n")
    assert main(["task", "add", "mycontest", "--from", str(other), "--date", "2026-03-01"]) == 2
    err = capsys.readouterr().err
    assert "error: task 'mycontest' exists with other problems (SHA-256 " in err
    assert (user_tasks_dir() / "mycontest.task.json").read_bytes() == entry  # untouched
    assert main(["task", "add", "aime24", "--from", str(other), "--date", "2026-03-01"]) == 2
    assert "'aime24' is a shipped task's name" in capsys.readouterr().err


def test_golds_the_verifier_cannot_read_are_listed_and_refused(tmp_path: Path, capsys) -> None:
    contest = write_jsonl(tmp_path / "contest.jsonl", [
        {"id": "a", "problem": "Compute $1+1$.", "answer": "2"},
        {"id": "b", "problem": "Compute half of one.", "answer": "\\frac{1}{"},
        {"id": "c", "problem": "Name the answer.", "answer": "?"},
    ])  # fmt: skip
    argv = ["task", "add", "broken", "--from", str(contest), "--date", "2026-03-01"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "2 golds would not be graded as maths: b: '\\\\frac{1}{': the verifier cannot " in err
    assert "c: '?': the verifier cannot read it" in err
    assert not (user_tasks_dir() / "broken.task.json").exists()
    assert main([*argv, "--accept-unreadable"]) == 0
    assert "b: gold '\\\\frac{1}{': the verifier cannot read it" in capsys.readouterr().err
    assert [p["id"] for p in _task_rows("broken")] == ["a", "b", "c"]


@pytest.mark.parametrize(
    ("name", "text", "form"),
    [
        ("contest.csv",
         'id,problem,answer\nq1,"Compute $1+2$, please.",3\nq2,Compute $2^{10}$.,1024\n', "CSV"),
        ("contest.jsonl",
         '{"problem": "Compute $1+2$, please.", "answer": 3}\n'
         '{"problem": "Compute $2^{10}$.", "answer": "1024"}\n', "JSONL"),
        ("hf.jsonl",
         '{"question": "Compute $1+2$, please.", "answer": "3"}\n'
         '{"question": "Compute $2^{10}$.", "answer": "1024"}\n', "JSONL"),
        # NeMo-Skills' generations (two seeds' rows of each problem): each problem once
        ("output-rs0.jsonl",
         '{"problem": "Compute $1+2$, please.", "expected_answer": "3", "generation": "3"}\n'
         '{"problem": "Compute $2^{10}$.", "expected_answer": "1024", "generation": "x"}\n'
         '{"problem": "Compute $1+2$, please.", "expected_answer": "3", "generation": "4"}\n',
         "JSONL (NeMo-Skills)"),
        # SkyThought's results.json: one JSON document, problem -> its responses
        ("results.json", json.dumps({
            "0": {"problem": "Compute $1+2$, please.", "answer": "3", "responses": ["3"]},
            "1": {"problem": "Compute $2^{10}$.", "answer": "1024", "responses": ["x", "y"]},
        }, indent=2), "JSON (SkyThought results)"),
    ],
)  # fmt: skip
def test_csv_jsonl_and_generation_files_become_tasks(
    tmp_path: Path, capsys, name: str, text: str, form: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    assert main(["task", "add", "two", "--from", str(path), "--date", "2026-03-01"]) == 0
    assert f"({form}), held 2026-03-01" in capsys.readouterr().out
    problems = _task_rows("two")
    assert [(p["problem"], p["answer"]) for p in problems] == [
        ("Compute $1+2$, please.", "3"), ("Compute $2^{10}$.", "1024")
    ]  # fmt: skip
    ids = {"CSV": ["q1", "q2"], "JSON (SkyThought results)": ["0", "1"]}
    assert [p["id"] for p in problems] == ids.get(form, ["two/1", "two/2"])


@pytest.mark.parametrize(
    ("date", "drop", "message"),
    [
        (None, None, "gives no date: say when the contest was held (--date YYYY-MM-DD)"),
        ("2026-02-30", None, "--date: '2026-02-30' is not a date written YYYY-MM-DD"),
        ("2026-02-14", 3, "problems without an answer: [3]; answers without a problem: none"),
    ],
)
def test_a_contest_without_a_date_or_an_answer_is_refused_in_one_line(
    tmp_path: Path, capsys, date: str | None, drop: int | None, message: str
) -> None:
    folder = matharena(tmp_path / "contest", date=None, drop=drop)
    flags = ["--date", date] if date else []
    assert main(["task", "add", "c26", "--from", str(folder), *flags]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err
    assert os.listdir(user_tasks_dir()) == []
