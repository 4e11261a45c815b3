"""`infer --tools python` through the CLI against the loopback server playing a model that runs
Python: both protocols, the call cap, one token budget, the requests each turn sends, hostile
programs contained and recorded, resume refusing other tool settings."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.infer_helpers import ROOT, infer, rows, write_jsonl
from tests.support.threaded_server import serve

NAMESPACES = shutil.which("bwrap") is not None
TOOLS = ["--tools", "python", "--model", "test-model", "--task", "math"]
PROBLEMS = [
    {"id": "sum", "problem": "What is the secret sum?", "answer": "642"},
    {"id": "twice", "problem": "Check it twice. calls=2", "answer": "77"},
    {"id": "forever", "problem": "Keep checking. calls=99", "answer": "5"},
]


def _answers(problems: list[dict]) -> dict[str, str]:
    return {p["problem"]: p["answer"] for p in problems}


def _run(tmp_path: Path, problems: list[dict], *flags: str, out: str = "out.jsonl"):
    inp = write_jsonl(tmp_path / "in.jsonl", problems)
    with serve(tools=True, answers=_answers(problems)) as srv:
        code = infer(srv.url, inp, tmp_path / out, *TOOLS, *flags)
        bodies = list(srv.server.bodies)
    return code, {r["problem_id"]: r for r in rows(tmp_path / out)}, bodies


@pytest.mark.parametrize("protocol", ["native", "inline"])
@pytest.mark.parametrize("stream", ["--stream", "--no-stream"])
def test_the_answer_exists_only_because_the_program_ran(tmp_path, protocol, stream):
    code, by_id, bodies = _run(
        tmp_path, PROBLEMS, "--tool-protocol", protocol, stream, "--max-tool-calls", "3"
    )
    assert code == 0 and set(by_id) == {"sum", "twice", "forever"}
    one = by_id["sum"]
    assert "a = 625\nb = 17\nprint(a + b)" in one["gen"]  # the code, inline
    assert "```output\n642\n```" in one["gen"]  # its output, inline
    assert one["gen"].rstrip().endswith("So the answer is $\\boxed{642}$.")
    assert [c["status"] for c in one["tool_calls"]] == ["ok"]
    assert one["tool_calls"][0]["stdout"] == "642\n" and len(one["turns"]) == 2
    assert one["out_of_calls"] is False
    assert len(by_id["twice"]["tool_calls"]) == 2 and len(by_id["twice"]["turns"]) == 3
    capped = by_id["forever"]  # the cap: 3 calls, then one turn without tools, in text
    assert len(capped["tool_calls"]) == 3 and capped["out_of_calls"] is True
    assert capped["gen"].rstrip().endswith("$\\boxed{5}$.")
    turns = [b for b in bodies if "calls=99" in json.dumps(b["messages"])]
    assert len(turns) == 4
    offered = "tools" if protocol == "native" else "stop"
    assert [offered in b for b in turns] == [True, True, True, False]
    budgets = [b["max_tokens"] for b in turns]  # one budget across the turns
    assert budgets[0] == 32768 and budgets == sorted(budgets, reverse=True)
    assert len({b["seed"] for b in turns}) == 4 and turns[0]["seed"] == capped["seed"]
    if protocol == "native":
        assert turns[0]["tools"][0]["function"]["name"] == "python"
        tool_msgs = [m for m in turns[1]["messages"] if m["role"] == "tool"]
        call_ids = [c["id"] for c in turns[1]["messages"][-2]["tool_calls"]]
        assert [m["tool_call_id"] for m in tool_msgs] == call_ids == ["call_0"]
        assert capped["tool_calls"][0]["call_id"] == "call_0"
    else:
        assert turns[0]["stop"] == ["```output"] and "continue_final_message" not in turns[0]
        later = turns[1]
        assert later["continue_final_message"] is True and later["add_generation_prompt"] is False
        assert later["messages"][-1]["role"] == "assistant"
        assert later["messages"][-1]["content"].endswith("```output\n5\n```\n")


def test_a_rerun_sends_the_same_requests_and_reads_the_same_outputs(tmp_path):
    _, first, bodies = _run(tmp_path, PROBLEMS[:2])
    (tmp_path / "out.jsonl").rename(tmp_path / "first.jsonl")
    _, again, bodies_again = _run(tmp_path, PROBLEMS[:2])
    key = lambda b: json.dumps(b, sort_keys=True)  # noqa: E731
    assert sorted(map(key, bodies)) == sorted(map(key, bodies_again))
    for pid in first:
        assert first[pid]["gen"] == again[pid]["gen"]
        assert first[pid]["tool_calls"] == [
            {**c, "cpu_s": c["cpu_s"]} for c in again[pid]["tool_calls"]
        ]


def test_the_token_budget_spans_every_turn(tmp_path):
    code, by_id, _ = _run(tmp_path, PROBLEMS[2:], "--max-tokens", "40", "--max-tool-calls", "8")
    row = by_id["forever"]
    assert code == 0 and row["finish_reason"] == "length"
    assert sum(t["completion_tokens"] for t in row["turns"]) <= 40
    assert row["usage"]["completion_tokens"] == sum(t["completion_tokens"] for t in row["turns"])


def test_tool_settings_are_in_the_spec_and_a_resume_with_others_is_refused(tmp_path, capsys):
    code, _, _ = _run(tmp_path, PROBLEMS[:1], "--max-tool-calls", "3")
    spec = json.loads((tmp_path / "out.jsonl.spec.json").read_text())
    assert spec["tools"]["max_calls"] == 3 and spec["tools"]["protocol"] == "native"
    assert spec["sandbox"]["isolation"] in ("namespaces", "process")
    assert spec["sandbox"]["python"].count(".") == 2 and "sympy" in spec["sandbox"]["libraries"]
    more = [*PROBLEMS[:1], {"id": "x", "problem": "Another one?", "answer": "3"}]
    code, _, _ = _run(tmp_path, more, "--max-tool-calls", "5")
    assert code == 2 and "tools" in capsys.readouterr().err
    code, _, _ = _run(tmp_path, more)  # no --tools at all: refused too
    assert code == 2


def test_tool_flags_without_tools_are_refused(tmp_path, capsys):
    inp = write_jsonl(tmp_path / "in.jsonl", PROBLEMS[:1])
    assert infer(None, inp, tmp_path / "o.jsonl", "--max-tool-calls", "3") == 2
    assert "--max-tool-calls needs --tools python" in capsys.readouterr().err
    assert infer(None, inp, tmp_path / "o.jsonl", *TOOLS, "--tool-timeout", "0") == 2
    assert "--tool-timeout must be positive and at most 3600, got 0.0" in capsys.readouterr().err
    extra = ["--extra-body", '{"stop": ["x"]}']
    assert infer(None, inp, tmp_path / "o.jsonl", *TOOLS, *extra) == 2
    assert "may not set 'stop' with --tools" in capsys.readouterr().err


HOSTILE = {
    "loop": ("while True:\n    pass", "timeout"),
    "memory": ("x = bytearray(8 << 30)\nprint(len(x))", "memory"),
    "fork": (
        "import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(300)\n"
        "    os._exit(0)\nprint('hostile-fork-left')",
        "ok",
    ),
    "environment": ("import os\nprint(sorted(os.environ.items()))", "ok"),
    "flood": (
        "import sys\nline = 'z' * 999 + '\\n'\nfor _ in range(100_000): sys.stdout.write(line)",
        "output_cut",
    ),
    "parent": ("import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nprint('x')", "killed"),
}
# what only namespaces contain (a limited process sees other processes' /proc entries)
IN_NAMESPACES = {
    "secrets": (
        "import os\n"
        "for pid in os.listdir('/proc'):\n    if pid.isdigit():\n        try:\n"
        "            print(open(f'/proc/{pid}/environ', 'rb').read())\n"
        "        except OSError as exc:\n            print(pid, exc.errno)",
        "ok",
    ),
}


def _problem(name: str, code: str) -> dict:
    return {"id": name, "problem": f"Hostile {name}. <<<code\n{code}\ncode>>>", "answer": "1"}


@pytest.mark.parametrize(
    "isolation",
    [pytest.param("namespaces", marks=pytest.mark.skipif(not NAMESPACES, reason="no bwrap")),
     "process"],
)  # fmt: skip
def test_hostile_programs_are_contained_and_recorded(tmp_path, monkeypatch, isolation):
    if isolation == "process":
        monkeypatch.setenv("LLMEVAL_SANDBOX", "process")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-hostile-test-secret")
    outside = tmp_path / "outside.txt"
    programs = dict(HOSTILE)
    if isolation == "namespaces":
        programs |= IN_NAMESPACES
        programs["write"] = (f"open({str(outside)!r}, 'w').write('pwned')", "error")
    with serve(tools=True) as srv:
        port = srv.url.split(":")[2].split("/")[0]
        if isolation == "namespaces":
            programs["socket"] = (
                f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=3)",
                "error",
            )
        problems = [_problem(name, code) for name, (code, _) in programs.items()]
        inp = write_jsonl(tmp_path / "in.jsonl", problems)
        chats_before = srv.stats["POST /v1/chat/completions"]
        code = infer(srv.url, inp, tmp_path / "out.jsonl", *TOOLS, "--tool-timeout", "2",
                     "--tool-memory", "1024", "--max-tool-calls", "1")  # fmt: skip
        connections = srv.stats["POST /v1/chat/completions"] - chats_before
    assert code == 0
    by_id = {r["problem_id"]: r for r in rows(tmp_path / "out.jsonl")}
    assert set(by_id) == set(programs)  # every sample, once
    for name, (_, status) in programs.items():
        (call,) = by_id[name]["tool_calls"]
        assert call["status"] == status, (name, call)
    assert not outside.exists()
    everything = (tmp_path / "out.jsonl").read_text() + (
        tmp_path / "out.jsonl.tools.jsonl"
    ).read_text()
    assert "sk-hostile-test-secret" not in everything
    flood = by_id["flood"]["tool_calls"][0]["stdout"]
    assert len(flood) < 5000 and "cut ...]" in flood
    assert connections == 2 * len(programs)  # the model's turns only: no call reached it
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert "hostile-fork-left" not in ps


def _runner_processes() -> list[str]:
    """Command lines of sandboxed calls still running (the runner's source is in them)."""
    ps = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in ps.splitlines() if "MEMORY_EXIT" in line]


@pytest.mark.skipif(not NAMESPACES, reason="no bwrap")
def test_kill_9_mid_run_then_resume_duplicates_nothing_and_replays_the_outputs(tmp_path):
    problems = [
        {"id": f"p{i}", "problem": f"Problem {i}: add it up, calls=3", "answer": str(100 + i)}
        for i in range(6)
    ]
    inp = write_jsonl(tmp_path / "in.jsonl", problems)
    flags = [*TOOLS, "--n-samples", "2", "--max-workers", "3", "--tool-protocol", "inline"]
    with serve(tools=True, answers=_answers(problems), latency=0.05) as srv:
        assert infer(srv.url, inp, tmp_path / "whole.jsonl", *flags) == 0
        out = tmp_path / "out.jsonl"
        proc = subprocess.Popen(
            [sys.executable, "-m", "llmeval", "infer", "--input", str(inp), "--output", str(out),
             "--base-url", srv.url, *flags],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT), "OPENAI_API_KEY": "sk-kill-test-secret"},
        )  # fmt: skip
        cache = Path(f"{out}.tools.jsonl")
        deadline = time.monotonic() + 60
        while not (out.exists() and out.read_bytes().count(b"\n") >= 3):
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.01)
        proc.kill()
        proc.wait()
        written = out.read_bytes().count(b"\n")
        cached = cache.read_bytes().count(b"\n")
        assert 3 <= written < 12 and cached >= written
        time.sleep(0.5)
        assert not _runner_processes()  # the sandboxes died with their parent
        assert infer(srv.url, inp, out, *flags) == 0
    resumed = {(r["problem_id"], r["sample_idx"]): r for r in rows(out)}
    assert len(resumed) == len(rows(out)) == 12  # every sample, once
    whole = {(r["problem_id"], r["sample_idx"]): r for r in rows(tmp_path / "whole.jsonl")}
    for pair, row in whole.items():
        assert resumed[pair]["gen"] == row["gen"]
        statuses = [(c["code"], c["stdout"], c["status"]) for c in resumed[pair]["tool_calls"]]
        assert statuses == [(c["code"], c["stdout"], c["status"]) for c in row["tool_calls"]]
    keys = [json.loads(line)["key"] for line in cache.read_text().splitlines()]
    assert len(keys) == len(set(keys))  # each program's result written once
    assert "sk-kill-test-secret" not in out.read_text() + cache.read_text()


def test_all_turns_of_a_sample_go_to_one_endpoint(tmp_path):
    problems = [{"id": f"p{i}", "problem": f"Sum {i}, calls=2", "answer": str(i)} for i in range(8)]
    inp = write_jsonl(tmp_path / "in.jsonl", problems)
    with serve(tools=True, answers=_answers(problems)) as one, serve(tools=True) as two:
        flags = [*TOOLS, "--base-url", two.url, "--max-workers", "8"]
        assert infer(one.url, inp, tmp_path / "out.jsonl", *flags) == 0
        seen = [
            {b["messages"][-1 if b["messages"][-1]["role"] == "user" else 0]["content"]
             for b in server.server.bodies}
            for server in (one, two)
        ]  # fmt: skip
    firsts = [{m.split(",")[0] for m in side if "Sum" in m} for side in seen]
    assert firsts[0] and firsts[1] and not firsts[0] & firsts[1]  # both used, no sample split


def test_replay_reruns_the_earlier_blocks_before_each_call(tmp_path):
    code = "n = globals().get('n', 0) + 1\nprint(n)"
    problems = [
        {"id": "count", "problem": f"Count, calls=3 <<<code\n{code}\ncode>>>", "answer": "3"}
    ]
    _, stateless, _ = _run(tmp_path, problems, out="a.jsonl")
    _, replayed, _ = _run(tmp_path, problems, "--tool-state", "replay", out="b.jsonl")
    assert [c["stdout"] for c in stateless["count"]["tool_calls"]] == ["1\n"] * 3
    assert [c["stdout"] for c in replayed["count"]["tool_calls"]] == ["1\n", "2\n", "3\n"]
    assert replayed["count"]["gen"].rstrip().endswith("$\\boxed{3}$.")
