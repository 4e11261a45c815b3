"""`llmeval eval` end to end on real files: the table, the JSON result checked by hand, the
verdict export, upstream rows scoring the same, several tasks, bad inputs."""

from __future__ import annotations

import json
import logging
import random
from pathlib import Path
from typing import Any

import pytest

from llmeval.cli.main import main
from llmeval.tasks import DATA_DIR
from tests.support.synthetic import generation, output, upstream, write_jsonl

RNG = random.Random(11)


def _out(final: str | None, closed: bool = True) -> str:
    return output(final, 1500, RNG, closed=closed)


def hand_rows() -> list[dict[str, Any]]:
    """Three problems x 4 samples whose figures are worked out by hand in the tests."""
    spec = [
        # p1 (gold 204): right, right, 205, no box -> 2/4
        ("aime24/1", "204", [("204", "stop"), ("204", "stop"), ("205", "stop"), (None, "stop")]),
        # p2 (gold 25): 025, 50/2, a right answer cut off (wrong), think-only cut off -> 2/4
        (
            "aime24/2",
            "25",
            [("025", "stop"), ("\\frac{50}{2}", "stop"), ("25", "length"), ("", "cut")],
        ),
        # p3 (gold x+1): right, then x+2 twice (two spellings) and 2+x -> 1/4
        ("aime24/3", "x+1", [("1+x", "stop"), ("x+2", "stop"), ("x + 2", "stop"), ("2+x", "stop")]),
    ]
    rows = []
    for pid, gold, samples in spec:
        for idx, (final, finish) in enumerate(samples):
            if finish == "cut":
                rows.append(generation(pid, idx, gold, _out("25", closed=False), finish="length"))
            else:
                rows.append(generation(pid, idx, gold, _out(final), finish=finish))
    return rows


def run_eval(tmp_path: Path, *args: str) -> tuple[int, dict[str, Any]]:
    result = tmp_path / "result.json"
    code = main(["eval", *args, "--result-json", str(result), "--workers", "2", "--no-progress"])
    return code, json.loads(result.read_text()) if code == 0 else {}


def test_figures_match_the_hand_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_jsonl(tmp_path / "aime24_r1.jsonl", hand_rows())
    exported = tmp_path / "verdicts.jsonl"
    code, result = run_eval(tmp_path, str(path), "--export-verdicts", str(exported))
    assert code == 0
    printed = capsys.readouterr().out
    assert "aime24" in printed and "41.7 ± 8.3" in printed
    (task,) = result["tasks"]
    assert (task["task"], task["n_problems"], task["n_samples"]) == ("aime24", 3, 4)
    assert task["accuracy"] == pytest.approx(1.25 / 3)  # (0.5 + 0.5 + 0.25) / 3
    assert task["stderr"] == pytest.approx(1 / 12)  # sd(.5,.5,.25) = .144338; / sqrt 3
    # sqrt((.25/3 + .25/3 + .1875/3)) / 3
    assert task["sample_stderr"] == pytest.approx((0.6875 / 3) ** 0.5 / 3)
    # pass@2: 1 - 1/6, 1 - 1/6, 1 - 3/6
    assert task["pass_at_k"] == pytest.approx(
        {"1": 1.25 / 3, "2": (5 / 6 + 5 / 6 + 0.5) / 3, "4": 1}
    )
    # maj@2: p1 [r,r] [205,-] .5; p2 [r,r] [cut,-] .5; p3 [r,x+2] tie -> r, [x+2,2+x] -> wrong .5
    # maj@4: p1 right 2:1; p2 right 2 (cut-off ones abstain); p3 "x+2" twice beats right once
    assert task["maj_at_k"] == pytest.approx({"1": 1.25 / 3, "2": 0.5, "4": 2 / 3})
    # pass^2 (all right): C(2,2)/C(4,2) = 1/6, 1/6, and 0 (one right); pass^4: none
    assert task["pass_hat_k"] == pytest.approx({"1": 1.25 / 3, "2": 1 / 9, "4": 0})
    head = next(line for line in printed.splitlines() if "acc ± se" in line).split()
    assert head[head.index("pass@k") + 1] == "pass^k"
    assert (task["n_correct"], task["n_incorrect"], task["n_no_answer"]) == (5, 5, 2)
    assert (task["n_truncated"], task["n_timeout"], task["complete"]) == (2, 0, True)
    assert task["problems"][2]["majority_answer"] == "x+2"
    assert result["cache"]["new"] > 0 and result["verifier"].startswith("math-verify==0.9.0")
    lines = [json.loads(line) for line in exported.read_text().splitlines()]
    assert len(lines) == 12
    assert lines[6] == lines[6] | {"problem_id": "aime24/2", "sample_idx": 2, "status": "correct"}
    assert lines[6]["correct"] is False and lines[6]["truncated"] is True
    assert {k for k in lines[0]} >= {
        "problem_id",
        "sample_idx",
        "status",
        "correct",
        "pred",
        "gold",
    }


def _figures(result: dict[str, Any]) -> list[tuple[Any, ...]]:
    keys = ("n_problems", "n_samples", "accuracy", "stderr", "sample_stderr", "pass_at_k")
    return [tuple(t[k] for k in (*keys, "maj_at_k", "n_no_answer")) for t in result["tasks"]]


def test_upstream_rows_score_the_same(tmp_path: Path) -> None:
    rows = hand_rows()
    ours = write_jsonl(tmp_path / "aime24_ours.jsonl", rows)
    theirs = []
    for row in rows:
        up = upstream(row)
        up["finish_reason"] = row["finish_reason"]
        theirs.append(up)
    with_ids = write_jsonl(tmp_path / "aime24_up.jsonl", theirs)
    bare = [{k: v for k, v in r.items() if k not in ("doc_id", "sample_index")} for r in theirs]
    no_ids = write_jsonl(tmp_path / "aime24_bare.jsonl", bare)
    figures = [_figures(run_eval(tmp_path, str(p))[1]) for p in (ours, with_ids, no_ids)]
    assert figures[0] == figures[1] == figures[2]
    string_gen = write_jsonl(
        tmp_path / "aime24_str.jsonl", [r | {"gen": r["gen"][0]} for r in bare]
    )
    assert _figures(run_eval(tmp_path, str(string_gen))[1]) == figures[0]


def test_several_tasks_folder_and_glob_give_one_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    write_jsonl(runs / "aime24_bz4.jsonl", hand_rows())
    gpqa = [
        generation("gpqa_diamond/0", 0, "C", _out("C")),
        generation("gpqa_diamond/0", 1, "C", _out("\\text{B}")),
        generation("gpqa_diamond/1", 0, "A", _out("(A)")),
        generation("gpqa_diamond/1", 1, "A", _out("A, B")),
    ]
    write_jsonl(runs / "gpqa_diamond_bz2.jsonl", gpqa)
    code, result = run_eval(tmp_path, str(runs))
    assert code == 0
    assert [t["task"] for t in result["tasks"]] == ["aime24", "gpqa_diamond"]
    assert result["tasks"][1]["accuracy"] == pytest.approx(0.5)
    assert result["tasks"][1]["pass_at_k"]["2"] == pytest.approx(1.0)
    main(["eval", str(runs), "--no-progress", "--export-verdicts", str(runs / "v.jsonl")])
    code, again = run_eval(tmp_path, str(runs / "*.jsonl"))  # caches, exports are not inputs
    assert code == 0 and _figures(again) == _figures(result)
    assert "gpqa_diamond" in capsys.readouterr().out


def test_spec_beside_the_file_gives_task_and_n(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "run.jsonl", hand_rows()[:6])  # p1 complete, p2 half
    spec = {"model": "m", "task": "aime24", "n_samples": 8, "temperature": 0.6, "top_p": 0.95}
    spec |= {"max_tokens": 100, "seed": 0, "prompt_template": "{problem}"}
    (tmp_path / "run.jsonl.spec.json").write_text(json.dumps(spec))
    code, result = run_eval(tmp_path, str(path))
    assert code == 0
    (task,) = result["tasks"]
    assert (task["task"], task["n_samples"], task["samples_expected"]) == ("aime24", 8, 16)
    assert (task["samples_missing"], task["complete"]) == (10, False)
    assert task["problems"][1]["n_missing"] == 6


def test_unknown_task_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_jsonl(tmp_path / "results.jsonl", hand_rows())
    assert main(["eval", str(path), "--no-progress"]) == 2
    assert "results.jsonl: cannot tell the task" in capsys.readouterr().err
    assert main(["eval", str(path), "--task_name", "math_opensource/aime24", "--no-progress"]) == 0


def test_broken_line_names_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "aime24_x.jsonl"
    lines = [json.dumps(r) for r in hand_rows()]
    path.write_text("\n".join([lines[0], '{"problem_id": "aime24/1", broken', *lines[1:]]) + "\n")
    assert main(["eval", str(path), "--no-progress"]) == 2
    assert "aime24_x.jsonl:2: not valid JSON" in capsys.readouterr().err
    path.write_text(json.dumps({"prompt": "p", "gen": "x"}) + "\n")
    assert main(["eval", str(path), "--no-progress"]) == 2
    assert "aime24_x.jsonl: no row has a gold answer under 'answer'" in capsys.readouterr().err


def test_problems_without_a_gold_are_ungraded_and_the_rest_scored(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    rows = hand_rows()
    for row in rows[:4]:  # aime24/1: an empty gold on some rows, none on the others
        row["answer"] = ""
    del rows[0]["answer"]
    path = write_jsonl(tmp_path / "aime24_u.jsonl", rows)
    with caplog.at_level(logging.WARNING, logger="llmeval"):
        code, result = run_eval(tmp_path, str(path))
    (task,) = result["tasks"]
    assert code == 0 and (task["n_ungraded"], task["n_problems"]) == (1, 2)
    assert task["accuracy"] == pytest.approx(0.75 / 2)  # p2 0.5, p3 0.25
    assert "1 problems have no gold answer and are not graded: aime24/1" in caplog.text


def test_torn_last_line_is_skipped(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "aime24_torn.jsonl"
    lines = [json.dumps(r) for r in hand_rows()]
    path.write_text("\n".join(lines) + "\n" + lines[0][:50])
    with caplog.at_level(logging.WARNING, logger="llmeval"):
        code, result = run_eval(tmp_path, str(path))
    assert code == 0 and result["tasks"][0]["samples_scored"] == 12
    assert "aime24_torn.jsonl:13: torn last line" in caplog.text


def test_custom_keys_and_upstream_flags(tmp_path: Path) -> None:
    rows = [{"question": "q", "gold": r["answer"], "output": r["gen"]} | r for r in hand_rows()]
    rows = [{k: v for k, v in r.items() if k not in ("answer", "gen")} for r in rows]
    path = write_jsonl(tmp_path / "aime24_keys.jsonl", rows)
    result = tmp_path / "r.json"
    argv = ["eval", "--input_path", str(path), "--answer-key", "gold", "--response-key", "output"]
    argv += ["--cache_path", str(tmp_path / "c.jsonl"), "--max_workers", "1", "--no-progress"]
    assert main([*argv, "--result_path", str(result)]) == 0
    assert json.loads(result.read_text())["tasks"][0]["accuracy"] == pytest.approx(1.25 / 3)
    assert (tmp_path / "c.jsonl").exists()


def test_upstream_math500_rows_get_subject_and_level_from_the_data_file(tmp_path: Path) -> None:
    data = [
        json.loads(line) for line in DATA_DIR.joinpath("math500.jsonl").read_text().splitlines()
    ]
    data = data[:2]
    rows = []
    for prob in data:
        prompt = prob["problem"] + "\nPlease reason step by step."
        for final in (prob["answer"], "\\text{no}"):
            rows.append({"prompt": prompt, "answer": prob["answer"], "gen": [_out(final)]})
    path = write_jsonl(tmp_path / "results.jsonl", rows)
    path.with_name("results.jsonl.spec.json").write_text(
        json.dumps(
            {"model": "m", "task": "math500", "n_samples": 2, "temperature": 0.6}
            | {"top_p": 0.95, "max_tokens": 9, "seed": 0, "prompt_template": "{problem}"}
        )
    )
    code, result = run_eval(tmp_path, str(path))
    assert code == 0
    task = result["tasks"][0]
    assert task["task"] == "math500" and task["accuracy"] == pytest.approx(0.5)
    subjects = {data[0]["subject"], data[1]["subject"]}
    assert set(task["by_subject"]) == subjects
    assert set(task["by_level"]) == {str(data[0]["level"]), str(data[1]["level"])}


def test_task_from_the_rows_own_task_field(tmp_path: Path) -> None:
    rows = [r | {"task": "aime24"} for r in hand_rows()]
    code, result = run_eval(tmp_path, str(write_jsonl(tmp_path / "run_0001.jsonl", rows)))
    assert code == 0 and result["tasks"][0]["task"] == "aime24"


def test_every_figure_of_the_lenient_policy_uses_its_answers(tmp_path: Path) -> None:
    """maj@k and the majority answer read the lenient answer (an anchored one, no box); the
    export carries both policies' status and answer."""
    rows = [
        generation("aime24/1", i, "204", text)
        for i, text in enumerate(["The answer is 204.", "The answer is 204.", "\\boxed{7}"])
    ]
    path = write_jsonl(tmp_path / "aime24_lenient.jsonl", rows)
    exported = tmp_path / "v.jsonl"
    code, result = run_eval(tmp_path, str(path), "--policy", "lenient", "--export-verdicts",
                            str(exported))  # fmt: skip
    assert code == 0
    (task,) = result["tasks"]
    assert task["accuracy"] == pytest.approx(2 / 3) and task["policies"]["strict"] == 0.0
    assert task["maj_at_k"]["1"] == pytest.approx(task["pass_at_k"]["1"])
    assert task["maj_at_k"]["3"] == 1.0 and task["problems"][0]["majority_answer"] == "204"
    first = json.loads(exported.read_text().splitlines()[0])
    assert (first["status"], first["pred"]) == ("correct", "204")
    assert first["strict"] == {"status": "no_answer", "pred": None}
    assert first["lenient"] == {"status": "correct", "pred": "204"}


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--timeout", "nan"], "--timeout must be positive"),  # NaN passed `<= 0`: no deadline
        (["--timeout", "0"], "--timeout must be positive"),
        (["--timeout", "inf"], "--timeout must be positive and at most 86400 s"),  # overflowed
        (["--timeout", "1e308"], "--timeout must be positive and at most 86400 s"),
        (["--judge-url", "http://127.0.0.1:9/v1", "--judge-model", "m", "--judge-timeout", "inf"],
         "--judge-timeout must be positive and finite"),
        (["--judge-url", "http://127.0.0.1:9/v1", "--judge-model", "m", "--judge-max-tokens", "0"],
         "--judge-max-tokens must be at least 1"),
    ],
)  # fmt: skip
def test_bad_flags_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    path = write_jsonl(tmp_path / "aime24_f.jsonl", hand_rows())
    assert main(["eval", str(path), "--no-progress", *flags]) == 2
    err = capsys.readouterr().err
    assert f"llmeval eval: error: {message}" in err and "Traceback" not in err


def test_a_run_spec_with_input_keys_of_another_version_is_read(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "aime24_k.jsonl", hand_rows())
    spec = {"model": "m", "n_samples": 4, "input_file": str(DATA_DIR / "aime24.jsonl"),
            "input_keys": {"question": None, "answer": "answer", "foo": "bar"}}  # fmt: skip
    Path(f"{path}.spec.json").write_text(json.dumps(spec))
    code, result = run_eval(tmp_path, str(path))
    assert code == 0 and result["tasks"][0]["model"] == "m"


LINK = "[link=http://x]y[/link]"


def test_names_subjects_and_paths_are_shown_as_text_never_as_markup(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A model name is whatever a server or a file says (`/v1/models` may list `[/]`), and so
    are subjects and folder names: rich markup in them is printed as it is written."""
    paths = []
    for model, folder in (("[/]", "[red]A"), ("[/]", "[bold]B"), (LINK, "C")):
        rows = [
            generation(
                f"q{i}", j, "7", _out(str(7 + j)), model=model, subject=f"[/]{i}", level=LINK
            )
            for i in range(2)
            for j in range(2)
        ]
        (tmp_path / folder).mkdir()
        paths.append(str(write_jsonl(tmp_path / folder / "math500.jsonl", rows[:-1])))
    code, result = run_eval(tmp_path, *paths)
    printed = capsys.readouterr().out
    assert code == 0 and [t["model"] for t in result["tasks"]] == ["[/]", "[/]", LINK]
    shown = ("[/]", LINK, "[red]A/math500.jsonl", "[bold]B/math500.jsonl", "[/]0")
    for text in (*shown, "incomplete: math500 · [/]"):
        assert text in printed, text
    assert "\x1b]8;" not in printed  # no terminal hyperlink


def test_an_output_flag_never_replaces_another_runs_rows_spec_or_verdicts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--result-json`, `--export-verdicts` and report's `--out` pointed at another run's
    generation file, run spec or verdict cache (by any name) replaced it silently, exit 0; the
    problems file too. Told by content: an output's own earlier copy is replaced as before."""
    (tmp_path / "B").mkdir()
    other = write_jsonl(tmp_path / "B" / "rows.txt", hand_rows())
    argv = ["eval", str(other), "--task", "aime24", "--cache", str(tmp_path / "B" / "cache")]
    assert main([*argv, "--no-progress"]) == 0
    spec = tmp_path / "B" / "settings"
    spec.write_text(json.dumps({"model": "m", "n_samples": 4}, indent=2))
    problems = tmp_path / "B" / "problems"
    problems.write_bytes((DATA_DIR / "aime24.jsonl").read_bytes())
    targets = {other: "JSON rows", tmp_path / "B" / "cache": "verdicts", spec: "a run spec",
               problems: "JSON rows"}  # fmt: skip
    kept = {p: p.read_bytes() for p in targets}
    path = write_jsonl(tmp_path / "aime24.jsonl", hand_rows())
    capsys.readouterr()
    for target, kind in targets.items():
        for flags in (["--result-json", str(target)], ["--export-verdicts", str(target)]):
            assert main(["eval", str(path), "--no-progress", *flags]) == 2
            said = capsys.readouterr().err
            assert f"{flags[0]} {target}: holds {kind}, which an output never" in said
        assert main(["report", str(path), "--out", str(target), "--no-progress"]) == 2
        assert f"--out {target}: holds {kind}" in capsys.readouterr().err
    assert {p: p.read_bytes() for p in targets} == kept
    outputs = ["--result-json", str(tmp_path / "r"), "--export-verdicts", str(tmp_path / "e")]
    for _ in range(2):  # its own outputs, written again
        assert main(["eval", str(path), "--no-progress", *outputs]) == 0
        assert main(["report", str(path), "--out", str(tmp_path / "r.html"), "--no-progress"]) == 0
