"""The sandbox on its own: each call a fresh, limited process; hostile programs contained and
named by their status; no secret, no process and no file outlives or escapes a call."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from llmeval.sandbox import Sandbox
from llmeval.transcripts import ToolSettings

NAMESPACES = shutil.which("bwrap") is not None
ISOLATIONS = [
    pytest.param("namespaces", marks=pytest.mark.skipif(not NAMESPACES, reason="no bwrap")),
    "process",
]


@pytest.fixture(params=ISOLATIONS)
def sandbox(request, monkeypatch, tmp_path):
    if request.param == "process":
        monkeypatch.setenv("LLMEVAL_SANDBOX", "process")
    monkeypatch.setenv("LLMEVAL_TEST_SECRET", "sk-do-not-leak")
    box = Sandbox(ToolSettings(timeout_s=2, memory_mb=1024, output_chars=400), tmp_path / "c.jsonl")
    assert box.info.isolation == request.param
    yield box
    box.close()


def run(box: Sandbox, code: str, setup: list[str] | None = None):
    return asyncio.run(box.run(code, setup))


def test_a_program_computes_with_the_libraries(sandbox):
    call = run(sandbox, "import sympy\nx = sympy.Symbol('x')\nprint(sympy.solve(x**2 - 4, x))")
    assert (call.status, call.stdout, call.stderr) == ("ok", "[-2, 2]\n", "")
    assert call.cpu_s is not None and call.cpu_s > 0


def test_errors_show_the_code_alone(sandbox):
    call = run(sandbox, "print('a')\n1/0")
    assert call.status == "error" and call.stdout == "a\n"
    assert call.stderr == (
        'Traceback (most recent call last):\n  File "<code>", line 2, in <module>\n'
        "ZeroDivisionError: division by zero\n"
    )


def test_hostile_programs_are_contained(sandbox, tmp_path):
    outside = tmp_path / "outside.txt"
    assert run(sandbox, "while True: pass").status == "timeout"
    assert run(sandbox, "x = bytearray(6 << 30)").status == "memory"
    assert run(sandbox, "import time\ntime.sleep(60)").status == "timeout"
    flood = run(
        sandbox, "import sys\nfor _ in range(2_000_000): sys.stdout.write('y' * 60 + '\\n')"
    )
    assert flood.status == "output_cut" and "cut ...]" in flood.stdout and len(flood.stdout) < 600
    assert (
        run(sandbox, "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)").status == "killed"
    )
    env = run(sandbox, "import os\nprint(sorted(os.environ.items()))")
    assert "sk-do-not-leak" not in env.stdout and "LLMEVAL" not in env.stdout
    # our own /proc entry, as a call would find its parent's were it visible
    proc = run(sandbox, f"print(open('/proc/{os.getpid()}/environ', 'rb').read())")
    assert "sk-do-not-leak" not in proc.stdout + proc.stderr
    if sandbox.info.isolation == "namespaces":
        assert proc.status == "error"
        wrote = run(sandbox, f"open({str(outside)!r}, 'w').write('x')")
        assert wrote.status == "error" and not outside.exists()
        net = run(sandbox, "import socket\nprint(socket.socket().connect_ex(('127.0.0.1', 22)))")
        assert net.stdout == "111\n"  # refused: an empty network namespace


def test_forks_that_leave_their_session_end_with_the_call(sandbox):
    code = (
        "import os, time\n"
        "if os.fork() == 0:\n    os.setsid()\n    time.sleep(120)\n    os._exit(0)\n"
        "print('left a child')"
    )
    assert run(sandbox, code).stdout == "left a child\n"
    time.sleep(0.3)
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert "left a child" not in ps


def test_outputs_are_deterministic_and_cached(sandbox, tmp_path):
    code = "import random, os\nprint(random.random(), hash('x'), os.getcwd())"
    first = run(sandbox, code)
    assert sandbox.runs == 1 and first.status == "ok"
    again = Sandbox(sandbox.settings, tmp_path / "c.jsonl")
    try:
        assert run(again, code) == first and again.runs == 0 and again.hits == 1
        fresh = Sandbox(sandbox.settings)
        try:  # ran again in a fresh process: the same text (no pid, time or host path)
            assert run(fresh, code).stdout == first.stdout
        finally:
            fresh.close()
    finally:
        again.close()
    assert "/work" in first.stdout


def test_replay_runs_earlier_blocks_first(sandbox):
    call = run(sandbox, "print(y + 1)", setup=["y = 41\nprint('not shown')"])
    assert (call.status, call.stdout) == ("ok", "42\n")
    assert run(sandbox, "print(y)").status == "error"  # stateless by default


def test_prewarmed_processes_run_one_call_each(tmp_path):
    box = Sandbox(ToolSettings(timeout_s=2), prewarm=2)
    try:
        box.warm()
        assert len(box._spares) == 2
        outs = [run(box, "import os\nprint(os.getpid())").stdout for _ in range(3)]
        assert all(out.strip().isdigit() for out in outs)
        assert run(box, "x = 1\nprint(x)").stdout == "1\n"
        assert run(box, "print(x)").status == "error"  # nothing of an earlier call
    finally:
        box.close()
    assert not box._spares


def test_a_sandbox_command_wraps_each_call(tmp_path):
    wrapper = tmp_path / "wrap.sh"
    python_bin = Path(os.__file__).parents[2] / "bin"
    wrapper.write_text(f'#!/bin/sh\necho wrapped >&2\nexec env PATH={python_bin}:/usr/bin "$@"\n')
    wrapper.chmod(0o755)
    box = Sandbox(ToolSettings(timeout_s=2, sandbox_cmd=str(wrapper)))
    try:
        assert box.info.isolation == "command"
        call = run(box, "print(6 * 7)")
        assert (call.status, call.stdout) == ("ok", "42\n") and "wrapped" in call.stderr
    finally:
        box.close()
