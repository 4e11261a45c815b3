"""Worker processes that verify (gold, answer) pairs under a deadline the PARENT enforces.

A worker past its deadline is killed and replaced and its pair is `timeout`; the others go
on. Workers fork from a forkserver that preloaded math-verify, with a cap on address space.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from llmeval.errors import LlmevalError
from llmeval.verify.queue import ByGold, VerifyResult, VerifyTask

if TYPE_CHECKING:  # multiprocessing is imported when a pool starts: a cached eval needs none
    import multiprocessing as mp
    from multiprocessing.connection import Connection

DEFAULT_MEMORY_MB = 3072
WORKER_DIED = "worker died"
# "__main__" too: otherwise every worker re-imports the main script on start.
_PRELOAD = ["__main__", "llmeval.verify.preload"]


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


def _worker_main(conn: Connection, memory_bytes: int | None, eval_pid: int) -> None:
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


class _Worker:
    """One worker process and the task it holds, if any."""

    def __init__(self, ctx: mp.context.ForkServerContext, memory_bytes: int | None) -> None:
        self.conn, child = ctx.Pipe(duplex=True)
        args = (child, memory_bytes, os.getpid())
        self.proc = ctx.Process(target=_worker_main, args=args, daemon=True)
        # Ctrl-C is held while the forkserver hands the new worker its start-up data: landing
        # in between, it cut that pipe and the worker printed an EOFError traceback
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            self.proc.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
        child.close()
        self.ready = False
        self.task: VerifyTask | None = None
        self.started = 0.0
        self.gold: str | None = None  # of its last task: that gold's parse is cached there

    def give(self, task: VerifyTask) -> None:
        self.task, self.started, self.gold = task, time.monotonic(), task.gold
        self.conn.send((task.kind, task.gold, task.answer))

    def kill(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(timeout=5)
        self.conn.close()


class VerifyPool:
    """Verify tasks on `workers` processes, each task under `timeout_s` seconds of wall time."""

    def __init__(
        self, workers: int, timeout_s: float, memory_mb: int | None = DEFAULT_MEMORY_MB
    ) -> None:
        self.workers = max(1, workers)
        self.timeout_s = timeout_s
        self.memory_bytes = memory_mb * 1024 * 1024 if memory_mb else None
        self.ctx = _context()
        self.replaced = 0
        self._startup_failures = 0

    def run(self, tasks: Iterable[VerifyTask], on_result: Callable[[VerifyResult], None]) -> None:
        """Verify every task, calling `on_result` in the parent as each one finishes."""
        queue = ByGold(tasks)
        if not queue:
            return
        pool = [self._spawn() for _ in range(min(self.workers, len(queue)))]
        try:
            while queue or any(w.task for w in pool):
                for worker in pool:
                    if worker.ready and worker.task is None and queue:
                        others = {w.gold for w in pool if w is not worker}
                        worker.give(queue.take(worker.gold, others))
                self._collect(pool, on_result)
        finally:
            for worker in pool:
                worker.kill()

    def _spawn(self) -> _Worker:
        return _Worker(self.ctx, self.memory_bytes)

    def _collect(self, pool: list[_Worker], on_result: Callable[[VerifyResult], None]) -> None:
        """Wait for a reply or the earliest deadline; kill and replace workers past theirs."""
        now = time.monotonic()
        from multiprocessing.connection import wait

        deadlines = [w.started + self.timeout_s for w in pool if w.task]
        wait_s = max(0.0, min(deadlines) - now) if deadlines else None
        for conn in wait([w.conn for w in pool], timeout=wait_s):
            idx = next(i for i, w in enumerate(pool) if w.conn is conn)
            worker = pool[idx]
            try:
                status, lenient, detail = worker.conn.recv()
            except (EOFError, OSError):
                pool[idx] = self._replace(worker, on_result, "error", WORKER_DIED)
                continue
            if status == "ready":
                worker.ready = True
            elif worker.task is not None:
                task, worker.task = worker.task, None
                elapsed = time.monotonic() - worker.started
                on_result(VerifyResult(task.key, status, detail, elapsed, lenient))
        now = time.monotonic()
        for idx, worker in enumerate(pool):
            if worker.task and now >= worker.started + self.timeout_s:
                pool[idx] = self._replace(
                    worker, on_result, "timeout", f"over {self.timeout_s:g} s"
                )

    def _replace(
        self, worker: _Worker, on_result: Callable[[VerifyResult], None], status: str, detail: str
    ) -> _Worker:
        """Kill `worker`, report its task with `status`, and start a fresh worker."""
        worker.kill()
        self.replaced += 1
        if not worker.ready:
            self._startup_failures += 1
            if self._startup_failures > 3:
                raise LlmevalError(f"verifier workers die on start (exit {worker.proc.exitcode})")
        if worker.task is not None:
            elapsed = time.monotonic() - worker.started
            on_result(VerifyResult(worker.task.key, status, detail, elapsed))
        return self._spawn()


def _context() -> mp.context.ForkServerContext:
    """The forkserver context, its server running (started deaf to Ctrl-C)."""
    import multiprocessing
    from multiprocessing import forkserver, resource_tracker

    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(_PRELOAD)
    # Ctrl-C at a terminal reaches the whole process group. Started with SIGINT blocked (a
    # mask survives fork and exec), the forkserver and its workers never see it; before,
    # one landing while the forkserver loaded math-verify (1-2 s) printed its traceback. The
    # eval process handles Ctrl-C and stops the workers; the forkserver ends with it.
    # The resource tracker starts first: starting, it unblocks SIGINT in this process.
    resource_tracker.ensure_running()
    # The forkserver runs `python -c`, which puts the current folder first on its path: a
    # `llmeval/` or `llmeval.py` there (the folder a user cloned into) shadowed the installed
    # package in every worker. PYTHONSAFEPATH keeps the current folder off its path.
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    safe_path = os.environ.get("PYTHONSAFEPATH")
    os.environ["PYTHONSAFEPATH"] = "1"
    try:
        forkserver.ensure_running()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
        if safe_path is None:
            del os.environ["PYTHONSAFEPATH"]
        else:
            os.environ["PYTHONSAFEPATH"] = safe_path
    return ctx


def prestart() -> None:
    """Boot the forkserver now: it loads and warms math-verify while the caller reads files."""
    _context()


def default_workers() -> int:
    """All cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1
