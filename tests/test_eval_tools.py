"""eval and report of runs drawn with tools, through the CLI: the answer is read after the
last tool output (one only a program printed is counted, never scored), each run's figures of
its calls, runs with and without tools labelled apart, transcripts shown as text."""

from __future__ import annotations

import json

from llmeval.cli.main import main
from tests.infer_helpers import infer, write_jsonl
from tests.support.threaded_server import serve

TOOLS = ["--tools", "python", "--model", "test-model", "--task", "math"]
PROBLEMS = [
    {"id": "sum", "problem": "What is the secret sum?", "answer": "642"},
    {"id": "loop", "problem": "Spin. <<<code\nwhile True:\n    pass\ncode>>>", "answer": "3"},
    {"id": "crash", "problem": "Crash. <<<code\nprint(1 / 0)\ncode>>>", "answer": "4"},
    {"id": "capped", "problem": "Keep checking. calls=99", "answer": "5"},
    {
        "id": "printed",
        "problem": "Say it, nobox. <<<code\nprint('\\\\boxed{6}')\ncode>>>",
        "answer": "6",
    },
    {
        "id": "html",
        "problem": "Show. <<<code\nprint('</script><b>bold</b>' + str(7))\ncode>>>",
        "answer": "7",
    },
]


def _runs(tmp_path):
    inp = write_jsonl(tmp_path / "in.jsonl", PROBLEMS)
    answers = {p["problem"]: p["answer"] for p in PROBLEMS}
    with serve(tools=True, answers=answers, accuracy=1.0) as srv:
        assert infer(srv.url, inp, tmp_path / "m" / "tools.jsonl", *TOOLS, "--tool-timeout", "1",
                     "--max-tool-calls", "2") == 0  # fmt: skip
        assert infer(srv.url, inp, tmp_path / "m" / "plain.jsonl", "--model", "test-model",
                     "--task", "math") == 0  # fmt: skip


def test_eval_reads_the_answer_after_the_last_output_and_shows_the_figures(tmp_path, capsys):
    _runs(tmp_path)
    scores = tmp_path / "scores.json"
    assert main(["eval", str(tmp_path / "m"), "--result-json", str(scores)]) == 0
    tasks = json.loads(scores.read_text())["tasks"]
    by_file = {t["file"].rsplit("/", 1)[1]: t for t in tasks}
    assert by_file["plain.jsonl"].get("tools") is None
    with_tools = by_file["tools.jsonl"]
    figures = with_tools["tools"]
    assert figures == {
        "samples": 6, "with_calls": 6, "calls": 7, "calls_per_sample": 7 / 6,
        "error_rate": 1 / 7, "timeout_rate": 1 / 7, "out_of_calls": 1, "answer_in_output": 1,
    }  # fmt: skip
    problems = {p["problem_id"]: p for p in with_tools["problems"]}
    assert problems["sum"]["n_correct"] == 1  # 642: only the program computed it
    assert problems["capped"]["n_correct"] == 1
    assert problems["printed"]["n_correct"] == 0 and problems["printed"]["n_no_answer"] == 1
    assert {t["settings"].get("tools") for t in tasks} == {None, "python/native/2"}
    out = capsys.readouterr().out
    assert "tools=python/native/2" in out


def test_report_shows_transcripts_as_text_and_the_figures(tmp_path):
    _runs(tmp_path)
    page = tmp_path / "r.html"
    assert main(["report", str(tmp_path / "m" / "tools.jsonl"), "-o", str(page),
                 "--no-compress"]) == 0  # fmt: skip
    html = page.read_text()
    assert "answer only in a tool output" in html and "ran out of calls" in html
    assert "<b>bold</b>" not in html  # the tool output is data, never markup
    # the transcript, code and output inline, embedded as inert JSON text
    assert "```python\\nprint('\\u003c/script\\u003e\\u003cb\\u003ebold" in html
    assert "```output\\n\\u003c/script\\u003e\\u003cb\\u003ebold\\u003c/b\\u003e7" in html
