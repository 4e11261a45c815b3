"""What a server sends is hostile input: `infer` through the CLI against the loopback server
sending garbage token counts, replies that ignore max_tokens, choices out of order, text after
[DONE] and context-length rejections; and `eval`/`report` on the files that result."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from llmeval.cli.main import main
from tests.infer_helpers import counts, err_line, infer, rows, write_jsonl
from tests.support.bad_replies import AFTER_DONE, AFTER_STOP, ERROR_200, GARBAGE, WRONG
from tests.support.threaded_server import serve

SMALL = [
    {"id": f"s{i}", "problem": f"Compute {i} plus {i}.", "answer": str(2 * i)} for i in range(5)
]
LONG = {"id": "long", "problem": "word " * 400, "answer": "1"}
MODES = ["--stream", "--no-stream"]


def _eval(path: Path, tmp_path: Path, *extra: str) -> dict[str, Any]:
    """`llmeval eval` on `path` (task aime24); its one task's figures."""
    result = tmp_path / "result.json"
    argv = ["eval", str(path), "--task", "aime24", "--no-progress", "--result-json", str(result)]
    assert main([*argv, *extra]) == 0
    return json.loads(result.read_text())["tasks"][0]


def test_context_rejections_are_not_written_exit_3_and_a_rerun_asks_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inp, out = write_jsonl(tmp_path / "in.jsonl", [*SMALL, LONG]), tmp_path / "o.jsonl"
    args = ["--n-samples", "2", "--max-tokens", "100"]
    with serve(max_context=300) as srv:
        assert infer(srv.url, inp, out, *args) == 3
        line = err_line(capsys.readouterr().err)
        assert "2 samples were not written: the server refused them for context length" in line
        assert "--max-tokens 100" in line and "maximum context length is 300 tokens" in line
        assert infer(srv.url, inp, out, *args) == 3  # asked again, refused again
        assert srv.stats["POST /v1/chat/completions"] == 14
    assert "long" not in counts(out)
    with serve(max_context=600) as srv:  # the server's context fixed: the rest is asked for
        assert infer(srv.url, inp, out, *args) == 0
        assert srv.stats["completions"] == 2
    with serve(max_context=550) as srv:  # or a smaller --max-tokens, with --force
        more = ["--n-samples", "3", "--max-tokens", "50"]
        assert infer(srv.url, inp, out, *more) == 2  # the spec changed
        assert infer(srv.url, inp, out, *more, "--force") == 0
    assert set(counts(out).values()) == {3} and len(counts(out)) == 6


def test_context_rows_of_an_older_infer_are_asked_again_and_eval_counts_them_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inp, out = write_jsonl(tmp_path / "in.jsonl", [*SMALL, LONG]), tmp_path / "aime24.jsonl"
    with serve() as srv:
        assert infer(srv.url, inp, out, "--n-samples", "2") == 0
    old = [  # what infer wrote before: an empty row per rejected sample
        r if r["problem_id"] != "long" else {**r, "gen": "", "finish_reason": "context_length"}
        for r in rows(out)
    ]
    write_jsonl(out, [{k: v for k, v in r.items() if k != "usage"} for r in old])
    figures = _eval(out, tmp_path)
    assert "2 rows are empty samples an older infer wrote" in capsys.readouterr().err
    assert figures["n_problems"] == 5 and figures["samples_scored"] == 10
    assert figures["n_truncated"] == 0  # not scored as wrong
    with serve() as srv:
        assert infer(srv.url, inp, out, "--n-samples", "2") == 0
        assert srv.stats["completions"] == 2  # exactly the two rejected samples
    capsys.readouterr()
    figures = _eval(out, tmp_path)
    assert figures["n_problems"] == 6 and figures["samples_scored"] == 12
    assert figures["n_duplicates"] == 0 and "older infer" in capsys.readouterr().err
    report = [
        "report",
        str(out),
        "--task",
        "aime24",
        "--no-progress",
        "--out",
        str(tmp_path / "r.html"),
    ]
    assert main(report) == 0
    assert "do not line up" not in capsys.readouterr().err


@pytest.mark.parametrize("mode", MODES)
def test_garbage_token_counts_are_written_absent_with_a_warning(
    mode: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inp, out = write_jsonl(tmp_path / "in.jsonl", SMALL), tmp_path / "o.jsonl"
    n = len(GARBAGE) * 2 // len(SMALL) + 1  # every kind of garbage at least twice
    with serve(faults={"bad_usage": 1.0}) as srv:
        assert infer(srv.url, inp, out, "--n-samples", str(n), mode) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f"{5 * n} replies carried token counts that are not whole numbers" in err
    assert len(rows(out)) == 5 * n and all("usage" not in r for r in rows(out))
    assert _eval(out, tmp_path)["mean_completion_tokens"] is None


def test_eval_and_report_read_garbage_counts_that_older_files_hold(tmp_path: Path) -> None:
    base = {"prompt": "q", "answer": "1", "gen": "\\boxed{1}", "finish_reason": "stop"}
    counts_ = ["9" * 400, "-5", "12.5", "1e400", "NaN", '"7"', "true", "40", "20.0"]
    lines = [
        json.dumps({**base, "problem_id": f"p{i}", "sample_idx": 0})[:-1]
        + f', "usage": {{"prompt_tokens": {c}, "completion_tokens": {c}}}}}'
        for i, c in enumerate(counts_)
    ]
    path = tmp_path / "aime24.jsonl"
    path.write_text("\n".join(lines) + "\n")
    figures = _eval(path, tmp_path)
    assert figures["mean_completion_tokens"] == 30  # (40 + 20) / 2: the rest read as absent
    out = tmp_path / "r.html"
    assert main(["report", str(path), "--no-progress", "--out", str(out)]) == 0


@pytest.mark.parametrize("mode", MODES)
def test_a_reply_that_ignores_max_tokens_is_cut_at_the_cap_and_marked(
    mode: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inp, out = write_jsonl(tmp_path / "in.jsonl", SMALL[:2]), tmp_path / "o.jsonl"
    with serve(faults={"huge": 1.0}, huge_bytes=40 << 20) as srv:
        cap = ["--max-reply-bytes", "300000"]
        assert infer(srv.url, inp, out, "--max-tokens", "100", mode, *cap) == 0
        assert infer(srv.url, inp, tmp_path / "d.jsonl", "--max-tokens", "100", mode) == 0
    assert "2 replies were longer than --max-reply-bytes" in capsys.readouterr().err
    for path, limit in ((out, 300_000), (tmp_path / "d.jsonl", 1 << 20)):  # default: 1 MiB
        for r in rows(path):
            assert r["finish_reason"] == "length" and r["cut_by"] == "max_reply_bytes"
            assert limit - 70_000 < len(r["gen"]) <= limit + 70_000  # (cut at a 65 KB event)
    assert _eval(out, tmp_path)["n_truncated"] == 2


@pytest.mark.parametrize(
    ("mode", "fault"),
    [(m, "disorder") for m in MODES] + [(MODES[0], "after_done"), (MODES[0], "after_stop")],
)
def test_choice_0_is_taken_and_nothing_after_done_counts(
    mode: str, fault: str, tmp_path: Path
) -> None:
    inp = write_jsonl(tmp_path / "in.jsonl", SMALL)
    clean, faulty = tmp_path / "clean.jsonl", tmp_path / "faulty.jsonl"
    with serve() as srv:
        assert infer(srv.url, inp, clean, "--n-samples", "2", mode) == 0
    with serve(faults={fault: 1.0}) as srv:
        assert infer(srv.url, inp, faulty, "--n-samples", "2", mode) == 0
    gens = [r["gen"] for r in rows(faulty)]
    assert gens == [r["gen"] for r in rows(clean)]
    assert not any(WRONG in g or AFTER_DONE in g or AFTER_STOP in g for g in gens)


@pytest.mark.parametrize("mode", MODES)
def test_an_error_in_a_200_reply_shows_the_server_s_message_and_is_retried(
    mode: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """HTTP 200 whose body is `{"error": ...}`: the server's message, not "stream ended
    without any choice" or "malformed completion (KeyError)"; retried like a 500."""
    inp, out = write_jsonl(tmp_path / "in.jsonl", SMALL), tmp_path / "o.jsonl"
    with serve(faults={"error_200": 1.0}) as srv:
        assert infer(srv.url, inp, out, mode, "--max-retries", "1") == 3
    failed = [ln for ln in capsys.readouterr().err.splitlines() if "failed: " in ln]
    assert failed and all(f"the server replied with an error: {ERROR_200}" in ln for ln in failed)
    with serve(faults={"error_200": 0.3}) as srv:
        assert infer(srv.url, inp, out, mode, "--n-samples", "2") == 0
    assert set(counts(out).values()) == {2}
