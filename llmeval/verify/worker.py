"""The worker process's side of the verifier pool (`pool.py`): serve (kind, gold, answer) tasks
over a pipe under a cap on address space, and exit once the eval process is gone."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from multiprocessing.connection import Connection


def _exit_when_orphaned(eval_pid: int) -> None:
    """Exit once the eval process is gone (checked each second by SIGALRM, which CPython
    delivers even inside long big-integer arithmetic). Workers are children of the
    forkserver, which outlives a killed eval while any worker lives, so no parent-death
    signal would fire: without this a killed eval could leave a worker on a power tower."""

    def check(_signum: int, _frame: object) -> None:
        try:
            os.kill(eval_pid, 0)
        except ProcessLookupError:
            os._exit(0)
        except PermissionError:  # alive, but not ours to signal
            pass

    signal.signal(signal.SIGALRM, check)
    signal.setitimer(signal.ITIMER_REAL, 1.0, 1.0)


def _cap_memory(memory_bytes: int) -> None:
    """Cap this worker's address space, never below what it already maps plus 256 MB (a cap
    under that would turn every allocation into a MemoryError, which math-verify swallows
    into "not equal")."""
    import resource

    try:
        status = Path("/proc/self/status").read_text()
        mapped = int(next(ln.split()[1] for ln in status.splitlines() if ln.startswith("VmSize")))
        floor = mapped * 1024 + (256 << 20)
    except (OSError, StopIteration, ValueError):
        floor = 1 << 30
    limit = max(memory_bytes, floor)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def worker_main(conn: Connection, memory_bytes: int | None, eval_pid: int) -> None:
    """Serve tasks until the pipe closes: receive (kind, gold, answer), send (strict status,
    lenient status, detail)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and kills us
    _exit_when_orphaned(eval_pid)  # math-verify's own alarms are off: SIGALRM is ours
    if memory_bytes:
        _cap_memory(memory_bytes)
    from llmeval.verify import verifier

    verifier.warm_up()  # a no-op when inherited from the forkserver; keeps first deadlines fair
    if not _send(conn, ("ready", None, None)):
        return
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        kind, gold, answer = msg
        lenient = None
        try:
            status, lenient, detail = verifier.verify(gold=gold, answer=answer, kind=kind)
        except MemoryError:
            status, detail = "error", "out of memory"
        except RecursionError:
            status, detail = "error", "too deeply nested"
        except Exception as exc:  # an unexpected failure is a verdict, never a crash
            status, detail = "error", f"{type(exc).__name__}"
        if not _send(conn, (status, lenient, detail)):
            return


def _send(conn: Connection, message: object) -> bool:
    """Send to the eval; False when it is gone (killed or interrupted): leave quietly."""
    try:
        conn.send(message)
    except OSError:
        return False
    return True
