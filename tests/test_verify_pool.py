"""The worker pool: hostile answers end as `timeout` by a kill from the parent, nothing else
waits on them, and no model text is ever executed."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from llmeval.evaluate.extract import extract_math
from llmeval.verify.pool import BACKSTOP, VerifyPool, VerifyResult, VerifyTask, default_workers
from llmeval.verify.verifier import verify
from tests.support.procs import (
    blocked_signals,
    children_status,
    session_members,
    verifier_workers,
)
from tests.support.synthetic import math500_run, write_jsonl

TOWER = "9^{9^{9^{9^{9}}}}"


def _run(tasks: list[VerifyTask], workers: int, timeout_s: float) -> list[VerifyResult]:
    results: list[VerifyResult] = []
    VerifyPool(workers, timeout_s).run(tasks, results.append)
    return results


def _task(key: str, gold: str, answer: str) -> VerifyTask:
    return VerifyTask(key, "math", gold, answer)


def test_a_power_tower_times_out_and_the_others_go_on() -> None:
    fast = [_task(f"f{i}", "\\frac{1}{2}", "\\dfrac{2}{4}" if i % 2 else "x+1") for i in range(6)]
    results = _run([_task("tower", "42", TOWER), *fast], workers=2, timeout_s=2)
    by_key = {r.key: r for r in results}
    assert by_key["tower"].status == "timeout"
    assert by_key["tower"].seconds >= 2
    # nothing waited on the tower: every fast pair was answered before it was given up
    assert results[-1].key == "tower"
    assert [by_key[t.key].status for t in fast] == ["incorrect", "correct"] * 3


def test_one_worker_is_replaced_and_carries_on() -> None:
    tasks = [_task("tower", "42", TOWER), _task("a", "42", "\\frac{84}{2}"), _task("b", "7", "8")]
    results = _run(tasks, workers=1, timeout_s=1)
    assert [(r.key, r.status) for r in results] == [  # the one worker was killed at the tower:
        ("tower", "timeout"),  # a and b were answered by the worker started in its place
        ("a", "correct"),
        ("b", "incorrect"),
    ]


@pytest.mark.slow
def test_hostile_answers_never_hang_the_pool() -> None:
    hostile = [
        TOWER,
        "(10^{10^{10}})!",
        "\\binom{10^{12}}{10^{6}}",
        "{" * 5000 + "1" + "}" * 5000,
        "\\frac{" * 3000 + "1" + "}{2}" * 3000,
        "x" * 200_000,
    ]
    tasks = [_task(str(i), "42", text) for i, text in enumerate(hostile)]
    results = _run(tasks, workers=2, timeout_s=2)
    assert sorted(r.key for r in results) == sorted(t.key for t in tasks)
    assert all(r.status in {"incorrect", "timeout", "error"} for r in results)


def _payloads(target: Path) -> list[str]:
    cmd = f"__import__('os').system('touch {target}')"
    return [
        f"\\boxed{{{cmd}}}",
        f"\\boxed{{\\text{{{cmd}}}}}",
        f'\\boxed{{eval("{cmd}")}}',
        f'\\boxed{{exec("{cmd}")}}',
        f"\\boxed{{1+{cmd}}}",
        f"\\boxed{{(lambda: {cmd})()}}",
        f"\\boxed{{\\mathrm{{{cmd}}}}}",
        f"The answer is {cmd}",
    ]


def test_python_payloads_are_never_executed(tmp_path: Path) -> None:
    target = tmp_path / "pwned"
    answers = [extract_math(p) for p in _payloads(target)]
    assert answers[-1] is None  # no box: never reaches the verifier at all
    for answer in filter(None, answers):
        assert verify(gold="42", answer=answer)[0] == "incorrect"
    tasks = [_task(str(i), "42", a) for i, a in enumerate(filter(None, answers))]
    results = _run(tasks, workers=2, timeout_s=10)
    assert {r.status for r in results} == {"incorrect"}
    assert not target.exists()


def test_a_too_small_memory_cap_does_not_turn_verdicts_into_errors() -> None:
    pool = VerifyPool(1, 30, memory_mb=1)
    results: list[VerifyResult] = []
    pool.run([_task("a", "x+1", "1+x"), _task("b", "(1,2)", "[1,2]")], results.append)
    assert [r.status for r in results] == ["correct", "incorrect"]


def test_tasks_are_handed_out_by_gold() -> None:
    from llmeval.verify.queue import ByGold

    tasks = [_task(f"{g}{i}", g, str(i)) for g in ("a", "b", "c") for i in range(2)]
    queue = ByGold(tasks)
    assert len(queue) == 6
    first = queue.take(None, set())  # a free worker starts on the first gold
    second = queue.take(None, {"a"})  # the next avoids the gold another worker is on
    assert (first.gold, second.gold) == ("a", "b")
    assert queue.take("a", {"b"}).gold == "a"  # a worker keeps to its gold while it lasts
    assert queue.take("a", {"b"}).gold == "c"  # then moves to one nobody is on
    assert queue.take("c", {"b"}).gold == "c"
    assert queue.take("c", {"b"}).gold == "b"  # at the end it shares a gold
    assert not queue and len(queue) == 0


def test_the_forkserver_starts_deaf_to_ctrl_c_and_eval_does_not() -> None:
    """A terminal's Ctrl-C reaches the whole process group; the forkserver starts with SIGINT
    blocked (inherited by its workers), while the eval process still gets it."""
    code = (
        "import os, json, time\n"
        "from llmeval.verify.pool import prestart\n"
        "from tests.support.procs import children_status\n"
        "prestart()\n"
        "own = open('/proc/self/status').read()\n"
        "for _ in range(500):  # forked at once, but its command line is ours until it execs\n"
        "    children = children_status(os.getpid())\n"
        "    if any('forkserver' in cmd for cmd in children): break\n"
        "    time.sleep(0.01)\n"
        "print(json.dumps({'self': own, **children}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    statuses = json.loads(done.stdout)
    sigint = 1 << (signal.SIGINT - 1)
    (server,) = [s for cmd, s in statuses.items() if "forkserver" in cmd]
    assert blocked_signals(server) & sigint
    assert not blocked_signals(statuses["self"]) & sigint


def test_ctrl_c_while_a_worker_starts_leaves_no_traceback() -> None:
    """Ctrl-C landing just after the forkserver forked a worker, before the worker got its
    start-up data: held until the start is over, so the worker never reads a cut pipe."""
    code = (
        "import os, signal\n"
        "from multiprocessing import forkserver\n"
        "from llmeval.verify.pool import VerifyPool, VerifyTask\n"
        "connect = forkserver.connect_to_new_process\n"
        "def interrupted(fds):\n"
        "    forked = connect(fds)\n"
        "    os.kill(os.getpid(), signal.SIGINT)  # a Ctrl-C between fork and start-up data\n"
        "    return forked\n"
        "forkserver.connect_to_new_process = interrupted\n"
        "try:\n"
        "    VerifyPool(1, 5.0).run([VerifyTask('k', 'math', '1', 'x+1')], print)\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "interrupted", (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr


def _wait_for_forkserver(pid: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not any("forkserver" in cmd for cmd in children_status(pid)):
        assert time.monotonic() < deadline, "no forkserver started"
        time.sleep(0.01)


@pytest.mark.parametrize("after", [0.0, 0.3, 0.6])
def test_ctrl_c_at_a_terminal_during_a_cold_eval_is_quiet(tmp_path: Path, after: float) -> None:
    """SIGINT to the process group while the forkserver loads math-verify (`after` seconds
    after it appears, whatever the machine's speed): no traceback from any process, exit 130
    (or 0 if it had finished; or death by SIGINT if it came as the interpreter exited, its
    output already flushed), nothing left running."""
    path = write_jsonl(tmp_path / "math500.jsonl", math500_run(problems=20, n=8, chars=2000))
    argv = [sys.executable, "-m", "llmeval", "eval", str(path), "--no-progress"]
    proc = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    _wait_for_forkserver(proc.pid)
    time.sleep(after)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert "Traceback" not in err, err
    assert proc.returncode in (0, 130, -signal.SIGINT), (proc.returncode, err)
    deadline = time.monotonic() + 10
    while session_members(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not session_members(proc.pid)


def _stop_the_worker_after_the_first_result(
    results: list[VerifyResult], resume_after: float | None = None
) -> Callable[[VerifyResult], None]:
    """An `on_result` that SIGSTOPs the only worker once its first pair is answered (and
    SIGCONTs it `resume_after` seconds later): it gets its next pair while stopped, as a worker
    waiting for a core would, and no CPU time passes."""

    def on_result(result: VerifyResult) -> None:
        results.append(result)
        if len(results) == 1:
            (worker,) = verifier_workers()
            os.kill(worker, signal.SIGSTOP)
            if resume_after is not None:
                threading.Timer(resume_after, os.kill, (worker, signal.SIGCONT)).start()

    return on_result


def test_the_deadline_is_cpu_time_not_time_spent_waiting_for_a_core() -> None:
    results: list[VerifyResult] = []
    pool = VerifyPool(1, timeout_s=1.0)
    on_result = _stop_the_worker_after_the_first_result(results, resume_after=2.5)
    pool.run([_task("a", "x+1", "1+x"), _task("b", "\\frac{1}{2}", "0.5")], on_result)
    assert [(r.key, r.status, r.final) for r in results] == [("a", "correct", True),
                                                             ("b", "correct", True)]  # fmt: skip
    assert results[1].seconds > 2.0  # twice its deadline, answered: not killed


def test_a_worker_that_never_answers_is_killed_at_the_backstop_and_its_timeout_is_not_final(
    caplog: pytest.LogCaptureFixture,
) -> None:
    results: list[VerifyResult] = []
    pool = VerifyPool(1, timeout_s=0.5)
    on_result = _stop_the_worker_after_the_first_result(results)
    pool.run([_task("a", "x+1", "1+x"), _task("b", "x+1", "x+2")], on_result)
    assert [(r.key, r.status, r.final) for r in results] == [("a", "correct", True),
                                                             ("b", "timeout", False)]  # fmt: skip
    assert results[1].seconds >= BACKSTOP * 0.5 and "machine busy" in (results[1].detail or "")
    assert pool.busy_machine == 1
    assert "1 pairs got under 0.5 s of CPU in 2.5 s" in caplog.text


def test_no_more_workers_than_cores_with_one_line(caplog: pytest.LogCaptureFixture) -> None:
    cores = default_workers()
    assert VerifyPool(cores, 5).workers == cores and not caplog.text
    assert VerifyPool(cores + 498, 5).workers == cores
    (line,) = caplog.text.splitlines()
    assert f"--workers {cores + 498} lowered to {cores}, the cores eval may use" in line


def _cpu_s(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _kill_busy_workers(times: int) -> threading.Thread:
    """SIGKILL (as the OOM killer would) each verifier worker once it has spent 0.3 s of CPU
    on a power tower, `times` times."""

    def loop() -> None:
        killed: set[int] = set()
        deadline = time.monotonic() + 60
        while len(killed) < times and time.monotonic() < deadline:
            for worker in set(verifier_workers()) - killed:
                if _cpu_s(worker) > 0.3:
                    os.kill(worker, signal.SIGKILL)
                    killed.add(worker)
            time.sleep(0.02)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("kills", [1, 2])
def test_a_killed_worker_s_pair_is_tried_once_more_then_an_error_with_one_line(
    kills: int, caplog: pytest.LogCaptureFixture
) -> None:
    results: list[VerifyResult] = []
    pool = VerifyPool(1, timeout_s=2.0)
    killer = _kill_busy_workers(kills)
    pool.run([_task("tower", "42", TOWER), _task("a", "42", "\\frac{84}{2}")], results.append)
    killer.join()
    statuses = {r.key: (r.status, r.final) for r in results}
    # once: the fresh worker works on it to its CPU deadline; twice: an error, never cached
    assert statuses["tower"] == (("timeout", True) if kills == 1 else ("error", False))
    assert statuses["a"] == ("correct", True) and len(results) == 2
    (line,) = [ln for ln in caplog.text.splitlines() if "died" in ln]
    assert (
        f"1 verifier workers died on a pair (killed: out of memory?) and {kills - 1} pairs" in line
    )
