"""`eval` and `report` on the layouts users have: several models' folders, interrupted runs,
baselines from other harnesses, other harnesses' files, a clone named llmeval in the current
folder, a reader that closes stdout early. Each through the command line."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from llmeval.cli.main import main
from llmeval.records import RunSpec
from llmeval.tasks import DATA_DIR
from tests.infer_helpers import infer
from tests.support.synthetic import generation, output, upstream, write_jsonl
from tests.support.threaded_server import serve

RNG = random.Random(21)
FLAGS = ["--workers", "1", "--no-progress"]
AIME = [json.loads(line) for line in (DATA_DIR / "aime24.jsonl").open()]


def _rows(problems: list[dict[str, Any]], n: int, right: int, **extra: Any) -> list[dict]:
    """n samples per problem, the first `right` of them answering the gold."""
    rows = []
    for p in problems:
        for i in range(n):
            final = p["answer"] if i < right else "1000"
            row = generation(p["id"], i, p["answer"], output(final, 200, RNG), **extra)
            row["prompt"] = p["problem"] + "\nPlease reason step by step."
            rows.append(row)
    return rows


def _verified_rows(problems: list[dict[str, Any]], n: int, right: int) -> list[dict]:
    """As `_rows`, with the answers written as decimals (`204.0`): verified by math-verify in
    the worker processes, not by the exact-integer shortcut."""
    rows = _rows(problems, n, right)
    for row in rows:
        row["gen"] = row["gen"].replace("}$$", ".0}$$")
    return rows


def _eval(tmp_path: Path, *args: str) -> dict[str, Any]:
    result = tmp_path / "result.json"
    assert main(["eval", *args, "--result-json", str(result), *FLAGS]) == 0
    return json.loads(result.read_text())


def _spec(path: Path, model: str, n: int, input_file: Path | None = None) -> None:
    spec = RunSpec(
        model=model, n_samples=n, temperature=0.6, top_p=0.95, max_tokens=128, seed=0,
        prompt_template="{problem}", task="aime24", input_file=str(input_file or "") or None,
    )  # fmt: skip
    path.with_name(path.name + ".spec.json").write_text(spec.model_dump_json())


def _page_data(page: str) -> dict[str, Any]:
    raw = re.search(r'<script type="application/json" id="llmeval-data">(.*?)</script>', page, re.S)
    assert raw is not None
    return json.loads(raw.group(1))


def test_a_clone_named_llmeval_in_the_current_folder_does_not_shadow_the_package(
    tmp_path: Path,
) -> None:
    path = write_jsonl(tmp_path / "aime24.jsonl", _verified_rows(AIME[:2], 2, 1))
    (tmp_path / "llmeval").mkdir()  # the folder a user cloned into
    (tmp_path / "llmeval.py").write_text("raise SystemExit('the wrong llmeval')\n")
    script = Path(sys.executable).with_name("llmeval")
    done = subprocess.run(
        [str(script), "eval", str(path), "--no-cache", "--workers", "1", "--no-progress"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "50.0 ± 0.0" in done.stdout


def test_two_models_folders_stay_two_runs_in_eval_and_report(tmp_path: Path) -> None:
    a = write_jsonl(_folder(tmp_path, "A") / "aime24.jsonl", _rows(AIME[:3], 2, 2, model="m-a"))
    b = write_jsonl(_folder(tmp_path, "B") / "aime24.jsonl", _rows(AIME[:3], 2, 1))
    _spec(b, "m-b", 2)
    result = _eval(tmp_path, str(a.parent), str(b.parent))
    got = {t["model"]: t["accuracy"] for t in result["tasks"]}
    assert got == {"m-a": 1.0, "m-b": 0.5}  # the rows' model; the spec's model
    out = tmp_path / "report.html"
    assert main(["report", str(a.parent), str(b.parent), "--out", str(out), *FLAGS]) == 0
    page = out.read_text()
    problems = _page_data(page)["problems"]
    by_run = {(p["task"], p["id"]): (p["n"], p["frac"]) for p in problems}
    pid = AIME[0]["id"]
    assert by_run[("aime24 · m-a", pid)] == (2, 1.0)  # never merged into n = 4
    assert by_run[("aime24 · m-b", pid)] == (2, 0.5)
    assert "<td>m-a</td>" in page and "<td>m-b</td>" in page  # both in the overview
    c = write_jsonl(_folder(tmp_path, "C") / "aime24.jsonl", _rows(AIME[:3], 1, 1))
    (task,) = _eval(tmp_path, str(c))["tasks"]
    assert task["model"] == "C"  # neither spec nor rows name it: the folder does


def _folder(tmp_path: Path, name: str) -> Path:
    (tmp_path / name).mkdir()
    return tmp_path / name


@pytest.mark.parametrize("columns", ["80", "40"])  # below 80: printed 80 wide (numbers were cut)
def test_the_table_keeps_model_and_numbers_whole_in_80_columns(
    tmp_path: Path, columns: str
) -> None:
    model = "DeepSeek-R1-Distill-Qwen-7B-a-long-checkpoint-name"
    path = write_jsonl(tmp_path / "aime24.jsonl", _rows(AIME[:3], 2, 1, model=model))
    code = (
        "import sys; from llmeval.cli.main import main; "
        f"sys.exit(main(['eval', {str(path)!r}, '--workers', '1', '--no-progress']))"
    )
    env = {"COLUMNS": columns, "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines[:-2]) <= 80  # (the verifier line is one long line)
    assert "50.0 ± 0.0" in done.stdout and "aime24.jsonl" in done.stdout
    folded = "".join(line.split("  ")[0].strip() for line in lines)
    assert model in folded


def test_an_interrupted_run_is_not_complete(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "aime24.jsonl", _rows(AIME[:10], 2, 1))
    (task,) = _eval(tmp_path, str(path))["tasks"]
    assert (task["n_problems"], task["n_problems_missing"], task["complete"]) == (10, 20, False)
    assert task["samples_missing"] == 40 and task["accuracy"] == 0.5
    # a run of a deliberate slice, its input beside the run spec: complete
    sliced = write_jsonl(tmp_path / "slice.jsonl", AIME[:10])
    _spec(path, "m", 2, sliced)
    (task,) = _eval(tmp_path, str(path))["tasks"]
    assert (task["n_problems_missing"], task["complete"]) == (0, True)
    # upstream rows without ids: matched to the data by their text
    rows = [upstream(r, with_ids=False) for r in _rows(AIME[:29], 1, 1)]
    up = write_jsonl(_folder(tmp_path, "up") / "aime24.jsonl", rows)
    (task,) = _eval(tmp_path, str(up))["tasks"]
    assert (task["n_problems"], task["n_problems_missing"], task["complete"]) == (29, 1, False)


def test_a_baseline_from_another_harness_is_matched_by_problem_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = write_jsonl(_folder(tmp_path, "new") / "aime24.jsonl", _rows(AIME[:4], 2, 2))
    rows = [upstream(r) for r in _rows(AIME[:4], 2, 1)]
    for i, row in enumerate(rows):
        row["doc_id"] = i // 2  # upstream's numbering: 0, 1, 2, 3
    base = write_jsonl(_folder(tmp_path, "old") / "aime24.jsonl", rows)
    out = tmp_path / "cmp.html"
    args = ["report", str(run), "--baseline", str(base), "--out", str(out), *FLAGS]
    assert main(args) == 0
    page = out.read_text()
    assert "<td>4</td><td>100.0</td><td>50.0</td><td>+50.0</td>" in page
    other = [dict(r, prompt=f"Another problem {r['problem_id']}") for r in _rows(AIME[:2], 1, 1)]
    for i, row in enumerate(other):
        row["problem_id"] = f"custom-{i}"
    unrelated = write_jsonl(_folder(tmp_path, "x") / "aime24.jsonl", other)
    args = ["report", str(run), "--baseline", str(unrelated), "--out", str(out), *FLAGS]
    assert main(args) == 2
    err = capsys.readouterr().err
    (error,) = [line for line in err.splitlines() if ": error: " in line]
    assert "no problem is in both runs" in error and "Traceback" not in err


def test_qwen_harness_files_score_as_written_and_with_flags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = []
    for i, p in enumerate(AIME[:3]):
        outs = [output(p["answer"] if k < i + 1 else "7", 200, RNG) for k in range(4)]
        rows.append({"idx": i, "question": p["problem"], "gt": p["answer"], "code": outs,
                     "pred": ["x"] * 4, "score": [True] * 4})  # fmt: skip
    path = write_jsonl(tmp_path / "aime24_qwen.jsonl", rows)
    flags = ["--response-key", "code", "--answer-key", "gt", "--id-key", "idx"]
    for given in ([], flags):
        (task,) = _eval(tmp_path, str(path), *given)["tasks"]
        assert (task["n_problems"], task["n_samples"], task["samples_scored"]) == (3, 4, 12)
        assert task["accuracy"] == pytest.approx((1 + 2 + 3) / 12)
        assert task["n_problems_missing"] == 27  # matched to the data by their text
    assert "read as Qwen2.5-Math harness" in capsys.readouterr().err


def test_outputs_without_a_finish_reason_that_look_cut_are_unfinished(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Other harnesses' files record no finish reason and their chat template opened the
    reasoning (issue 29.11): an output stopping mid-sentence after its answer, or never closing
    a reasoning other rows close, counts as truncated (`unfinished?`); the same texts with a
    finish reason recorded are scored as before."""
    problem, gold = AIME[0]["problem"], AIME[0]["answer"]
    think = "We add the distances of the legs one by one.\n" * 8  # the template wrote `<think>`
    texts = [
        f"{think}\n</think>\n\nSo the answer is $\\boxed{{{gold}}}$.",
        f"{think}\n</think>\n\nSo maybe \\boxed{{{gold}}} but...",
        f"{think}\nso the total distance is {gold}. But just to be thorough, let me",
        f"{think}\nso the total is $\\boxed{{{gold}}}$.",  # never left the reasoning
    ]
    rows = [{"prompt": problem, "answer": gold, "gen": [t], "doc_id": AIME[0]["id"]} for t in texts]
    (task,) = _eval(tmp_path, str(write_jsonl(tmp_path / "aime24.jsonl", rows)))["tasks"]
    assert (task["n_unfinished"], task["n_truncated"]) == (3, 3)
    assert task["policies"] == {"strict": 0.25, "lenient": 0.25}  # main: 0.75 and 1.0
    assert "unfinished?: aime24" in capsys.readouterr().out
    for row in rows:
        row["finish_reason"] = "stop"
    (task,) = _eval(tmp_path, str(write_jsonl(tmp_path / "aime24.jsonl", rows)))["tasks"]
    assert (task["n_unfinished"], task["n_truncated"]) == (0, 0)
    assert task["policies"] == {"strict": 0.75, "lenient": 1.0}


def test_report_pictures_need_their_data(tmp_path: Path) -> None:
    rows = _rows(AIME[:3], 1, 1)
    for row in rows:
        del row["usage"]
    path = write_jsonl(tmp_path / "aime24.jsonl", rows)
    out = tmp_path / "r.html"
    assert main(["report", str(path), "--out", str(out), *FLAGS]) == 0
    page = out.read_text()
    assert "need more than one sample per problem: not drawn" in page
    assert "report no token counts" in page and "accuracy under a length cap" not in page
    assert "pass@k and maj@k</" not in page and "record no timings" in page
    _spec(path, "m", 2)
    write_jsonl(path, _rows(AIME[:3], 2, 1))  # token counts, n = 2, max_tokens 128
    assert main(["report", str(path), "--out", str(out), *FLAGS]) == 0
    page = out.read_text()
    assert "accuracy under a length cap" in page and "pass@k and maj@k" in page
    assert ">128<" in page and ">2048<" not in page  # the cap axis ends at max_tokens


def test_a_reader_closing_stdout_loses_nothing(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "aime24.jsonl", _rows(AIME[:2], 2, 1))
    result, export = tmp_path / "r.json", tmp_path / "v.jsonl"
    code = (
        "import sys; from llmeval.cli.main import entry; sys.argv = ['llmeval', 'eval', "
        f"{str(path)!r}, '--result-json', {str(result)!r}, '--export-verdicts', {str(export)!r}, "
        "'--workers', '1', '--no-progress']; entry()"
    )
    pipe = subprocess.PIPE
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=pipe, stderr=pipe)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # `| head` that already quit
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0, err
    assert "Traceback" not in err and "BrokenPipe" not in err
    assert json.loads(result.read_text())["tasks"][0]["samples_scored"] == 4
    assert len(export.read_text().splitlines()) == 4


def test_a_verdict_cache_that_cannot_be_written_is_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_jsonl(tmp_path / "aime24.jsonl", _verified_rows(AIME[:2], 2, 1))
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    (task,) = _eval(tmp_path, str(path), "--cache", str(blocker / "verdicts.jsonl"))["tasks"]
    assert task["accuracy"] == 0.5
    assert "verdicts.jsonl cannot be written (Not a directory)" in capsys.readouterr().err


def test_garbage_timings_in_a_file_do_not_stop_the_report(tmp_path: Path) -> None:
    rows = _rows(AIME[:2], 2, 1)
    text = "\n".join(json.dumps(r) for r in rows).replace(
        '"finish_reason"', '"latency_s": ' + "9" * 400 + ', "ttft_s": NaN, "finish_reason"'
    )
    path = tmp_path / "aime24.jsonl"
    path.write_text(text + "\n")
    out = tmp_path / "r.html"
    assert main(["report", str(path), "--out", str(out), *FLAGS]) == 0
    assert "record no timings" in out.read_text()


def test_an_output_flag_never_replaces_an_input_its_cache_or_a_device(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_jsonl(_folder(tmp_path, "A") / "aime24.jsonl", _rows(AIME[:2], 2, 1))
    assert main(["eval", str(path), *FLAGS]) == 0  # its verdict cache written
    kept = {p: p.read_bytes() for p in path.parent.iterdir()}
    for args in (
        ["eval", str(path), "--export-verdicts", str(path)],  # a typo: the samples were gone
        ["eval", str(path), "--result-json", f"{path}.verdicts.jsonl"],
        ["report", str(path.parent), "--out", str(path)],
    ):
        assert main([*args, *FLAGS]) == 2
        assert "a file this run reads or keeps" in capsys.readouterr().err
    assert {p: p.read_bytes() for p in path.parent.iterdir()} == kept
    fifo, link, real = tmp_path / "fifo", tmp_path / "out.json", tmp_path / "real.json"
    os.mkfifo(fifo)
    link.symlink_to(fifo)  # like /dev/stdout: replaced by a regular file before
    for target in (fifo, link):
        assert main(["eval", str(path), "--result-json", str(target), *FLAGS]) == 5
        assert "not a regular file" in capsys.readouterr().err
    assert fifo.is_fifo() and link.is_symlink()
    link.unlink()
    link.symlink_to(real)  # a link to a file: the file is written, the link stays
    assert main(["eval", str(path), "--result-json", str(link), *FLAGS]) == 0
    assert link.is_symlink() and json.loads(real.read_text())["tasks"]


def test_a_run_spec_input_is_the_file_the_run_was_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    inp = write_jsonl(_folder(tmp_path, "in") / "aime24_6.jsonl", AIME[:6])
    out = _folder(tmp_path, "out") / "aime24.jsonl"
    monkeypatch.chdir(tmp_path)
    with serve() as srv:  # paths relative to infer's folder, as a user types them
        assert infer(srv.url, "in/aime24_6.jsonl", "out/aime24.jsonl") == 0
    assert json.loads(Path(f"{out}.spec.json").read_text())["input_file"] == str(inp)
    monkeypatch.chdir(out.parent)  # eval from another folder found no input: 24 missing
    (task,) = _eval(tmp_path, "aime24.jsonl")["tasks"]
    assert (task["n_problems_missing"], task["complete"]) == (0, True)
    write_jsonl(inp, AIME[:12])  # another file where the run's input was
    (task,) = _eval(tmp_path, "aime24.jsonl")["tasks"]
    assert "not the file the run was given (its SHA-256 differs)" in capsys.readouterr().err
    assert task["n_problems_missing"] == 24  # against the task's data, not the other file


def test_two_runs_alike_but_for_their_folders_are_told_apart_in_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = write_jsonl(_folder(tmp_path, "x") / "aime24.jsonl", _rows(AIME[:2], 2, 1, model="M"))
    b = write_jsonl(_folder(tmp_path, "y") / "aime24.jsonl", _rows(AIME[:2], 2, 2, model="M"))
    assert main(["eval", str(a), str(b), *FLAGS]) == 0
    out = capsys.readouterr().out
    assert "aime24 · M (x/aime24.jsonl)" in out and "aime24 · M (y/aime24.jsonl)" in out


def test_a_run_whose_spec_set_llmevals_own_fields_in_extra_body_is_scored_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = write_jsonl(tmp_path / "aime24.jsonl", _rows(AIME[:2], 2, 1))
    _spec(path, "m", 2)
    spec = Path(f"{path}.spec.json")
    spec.write_text(json.dumps({**json.loads(spec.read_text()), "extra_body": {"seed": 1}}))
    (task,) = _eval(tmp_path, str(path))["tasks"]  # refused as "not a run spec" (exit 2) before
    assert task["accuracy"] == 0.5
    assert "--extra-body replaced llmeval's own seed in every request" in caplog.text


def test_a_folder_of_model_folders_names_the_layout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_jsonl(_folder(tmp_path, "A") / "aime24.jsonl", _rows(AIME[:1], 1, 1))
    assert main(["eval", str(tmp_path), *FLAGS]) == 2
    assert "subfolders are not searched: name output/<model>" in capsys.readouterr().err


def test_a_path_that_exists_is_a_path_not_a_pattern(tmp_path: Path) -> None:
    """`aime24[1].jsonl` names that file (as a pattern it matched `aime241.jsonl`, another
    run, or nothing); a pattern still matches when no such path exists."""
    named = write_jsonl(tmp_path / "aime24[1].jsonl", _rows(AIME[:3], 1, 1))
    write_jsonl(tmp_path / "aime241.jsonl", _rows(AIME[:3], 1, 0))
    folder = tmp_path / "[x]"
    folder.mkdir()
    write_jsonl(folder / "aime24.jsonl", _rows(AIME[:3], 1, 1))
    for paths, files in [
        ([str(named)], ["aime24[1].jsonl"]),
        ([str(folder)], ["aime24.jsonl"]),
        ([str(tmp_path / "aime24[0-9].jsonl")], ["aime241.jsonl"]),
    ]:
        result = tmp_path / "r.json"
        argv = ["eval", *paths, "--task", "aime24", "--result-json", str(result), *FLAGS]
        assert main(argv) == 0
        tasks = json.loads(result.read_text())["tasks"]
        assert [Path(t["file"]).name for t in tasks] == files
        assert tasks[0]["accuracy"] == (0.0 if files == ["aime241.jsonl"] else 1.0)


def test_problems_not_in_the_task_are_named_and_left_out_of_its_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An aime25 file with aime24 rows in it scored as 35 problems, complete; now its 30
    problems, and the 5 others named (the export holds the 30 too)."""
    aime25 = [json.loads(line) for line in (DATA_DIR / "aime25.jsonl").open()]
    path = write_jsonl(tmp_path / "aime25.jsonl", _rows(AIME[:5], 1, 0) + _rows(aime25, 1, 1))
    result, export = tmp_path / "r.json", tmp_path / "v.jsonl"
    argv = ["eval", str(path), "--result-json", str(result), "--export-verdicts", str(export)]
    assert main([*argv, *FLAGS]) == 0
    exported = [json.loads(line) for line in export.read_text().splitlines()]
    assert sorted(r["problem_id"] for r in exported) == sorted(p["id"] for p in aime25)
    (task,) = json.loads(result.read_text())["tasks"]
    assert (task["n_problems"], task["accuracy"], task["complete"]) == (30, 1.0, True)
    assert task["n_problems_foreign"] == 5
    out = capsys.readouterr()
    (warning,) = [ln for ln in out.err.splitlines() if "left out" in ln]
    assert "5 problems are not in" in warning and AIME[0]["id"] in warning
    assert "left out: aime25 · " in out.out
