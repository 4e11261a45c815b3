"""Worker processes (`worker.py`) that verify (gold, answer) pairs under a deadline the PARENT
enforces: the worker's own CPU time on its pair (read from /proc), so time spent waiting for a
core never counts; past it the worker is killed and replaced and its pair is `timeout`. A
wall-clock backstop of BACKSTOP deadlines kills a worker that never answers whatever its CPU
time; such a timeout is the machine's doing, not final (never cached). Workers fork from a
forkserver that preloaded math-verify; never more of them than cores."""

from __future__ import annotations

import contextlib
import logging
import math
import os
import signal
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from llmeval.errors import LlmevalError
from llmeval.verify.queue import ByGold, VerifyResult, VerifyTask
from llmeval.verify.worker import worker_main

if TYPE_CHECKING:  # multiprocessing is imported when a pool starts: a cached eval needs none
    import multiprocessing as mp

DEFAULT_MEMORY_MB = 3072
WORKER_DIED = "worker died"
BACKSTOP = 5  # wall-clock limit of a pair, in deadlines
START_S = 120.0  # wall-clock limit of a worker's start (the forkserver may still be loading)
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
log = logging.getLogger("llmeval")
# "__main__" too: otherwise every worker re-imports the main script on start.
_PRELOAD = ["__main__", "llmeval.verify.preload"]
OnResult = Callable[[VerifyResult], None]


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of process `pid` (None without /proc, or once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_bytes().rpartition(b")")[2].split()
        return (int(fields[11]) + int(fields[12])) / _TICKS
    except (OSError, IndexError, ValueError):
        return None


class _Worker:
    """One worker process and the task it holds, if any."""

    def __init__(self, ctx: mp.context.ForkServerContext, memory_bytes: int | None) -> None:
        self.conn, child = ctx.Pipe(duplex=True)
        args = (child, memory_bytes, os.getpid())
        self.proc = ctx.Process(target=worker_main, args=args, daemon=True)
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
        self.started = time.monotonic()  # of its task, or of its start while not ready
        self.gold: str | None = None  # of its last task: that gold's parse is cached there
        self.cpu0: float | None = None  # its CPU time when it got its task
        self.cpu = 0.0  # CPU time spent on its task, as last read
        self.read_at = 0.0  # when `cpu` was read

    def give(self, task: VerifyTask) -> None:
        self.task, self.started, self.gold = task, time.monotonic(), task.gold
        self.cpu0, self.cpu, self.read_at = _cpu_seconds(self.proc.pid or 0), 0.0, self.started
        with contextlib.suppress(OSError):  # it died: its pipe's end reads as such at once
            self.conn.send((task.kind, task.gold, task.answer))

    def due(self, timeout_s: float) -> float:
        """When its deadline may next be reached: its CPU time cannot grow faster than the
        clock (one thread), so not before `timeout_s - cpu` seconds after the last reading."""
        if not self.ready:
            return self.started + START_S
        backstop = self.started + BACKSTOP * timeout_s
        return min(backstop, self.read_at + max(timeout_s - self.cpu, 0.02))

    def read_cpu(self, now: float) -> None:
        """Read its CPU time on the task (wall time where /proc cannot tell)."""
        cpu = _cpu_seconds(self.proc.pid or 0)
        self.cpu = (
            cpu - self.cpu0 if cpu is not None and self.cpu0 is not None else now - self.started
        )
        self.read_at = now

    def kill(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(timeout=5)
        self.conn.close()


class VerifyPool:
    """Verify tasks on `workers` processes (at most the cores), each task under `timeout_s`
    seconds of the worker's CPU time and BACKSTOP times that of wall time."""

    def __init__(
        self, workers: int, timeout_s: float, memory_mb: int | None = DEFAULT_MEMORY_MB
    ) -> None:
        cores = default_workers()
        if workers > cores:  # the others would only wait for a core, holding their memory
            log.warning("--workers %d lowered to %d, the cores eval may use", workers, cores)
        self.workers = max(1, min(workers, cores))
        self.timeout_s = timeout_s
        self.memory_bytes = memory_mb * 1024 * 1024 if memory_mb else None
        self.ctx = _context()
        self.busy_machine = 0  # pairs stopped by the wall-clock backstop: not final
        self.lost = 0  # pairs whose worker died twice: `error`, not final
        self._retried: set[str] = set()  # pairs whose worker died once
        self._queue = ByGold(())
        self._startup_failures = 0

    def run(self, tasks: Iterable[VerifyTask], on_result: OnResult) -> None:
        """Verify every task, calling `on_result` in the parent as each one finishes."""
        self._queue = queue = ByGold(tasks)
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
        if self.busy_machine:
            log.warning(
                "%d pairs got under %g s of CPU in %g s (the machine is busy): timeouts in "
                "this run, not cached; a rerun verifies them",
                self.busy_machine, self.timeout_s, BACKSTOP * self.timeout_s,
            )  # fmt: skip
        if self._retried:
            log.warning(
                "%d verifier workers died on a pair (killed: out of memory?) and %d pairs died "
                "again in a fresh worker: errors in this run, not cached; a rerun verifies them",
                len(self._retried), self.lost,
            )  # fmt: skip

    def _spawn(self) -> _Worker:
        return _Worker(self.ctx, self.memory_bytes)

    def _collect(self, pool: list[_Worker], on_result: OnResult) -> None:
        """Wait for a reply or the earliest deadline; kill and replace workers past theirs."""
        from multiprocessing.connection import wait

        dues = [w.due(self.timeout_s) for w in pool if w.task or not w.ready]
        wait_s = max(0.0, min(dues) - time.monotonic()) if dues else None
        for conn in wait([w.conn for w in pool], timeout=wait_s):
            idx = next(i for i, w in enumerate(pool) if w.conn is conn)
            worker = pool[idx]
            try:
                status, lenient, detail = worker.conn.recv()
            except (EOFError, OSError):
                pool[idx] = self._lost(worker, on_result)
                continue
            if status == "ready":
                worker.ready = True
            elif worker.task is not None:
                task, worker.task = worker.task, None
                elapsed = time.monotonic() - worker.started
                on_result(VerifyResult(task.key, status, detail, elapsed, lenient))
        now = time.monotonic()
        for idx, worker in enumerate(pool):
            if not (worker.task or not worker.ready) or now < worker.due(self.timeout_s):
                continue
            if worker.task:
                worker.read_cpu(now)
            if worker.cpu >= self.timeout_s:  # the pair's own work: a final verdict
                pool[idx] = self._replace(
                    worker, on_result, "timeout", f"over {self.timeout_s:g} s"
                )
            elif now >= worker.started + (BACKSTOP * self.timeout_s if worker.ready else START_S):
                self.busy_machine += worker.task is not None
                why = f"{worker.cpu:.1f} s of CPU in {now - worker.started:.0f} s: machine busy"
                pool[idx] = self._replace(worker, on_result, "timeout", why, final=False)

    def _lost(self, worker: _Worker, on_result: OnResult) -> _Worker:
        """A worker that died (the OOM killer, a signal): its pair goes back to the queue
        once, for a fresh worker; dying again, it is `error` (not final: a rerun retries)."""
        task = worker.task
        if task is not None and task.key not in self._retried:
            self._retried.add(task.key)
            self._queue.put_back(task)
            worker.task = None
        else:
            self.lost += task is not None
        return self._replace(worker, on_result, "error", WORKER_DIED, final=False)

    def _replace(
        self,
        worker: _Worker,
        on_result: OnResult,
        status: str,
        detail: str,
        *,
        final: bool = True,
    ) -> _Worker:
        """Kill `worker`, report its task with `status`, and start a fresh worker."""
        worker.kill()
        if not worker.ready:
            self._startup_failures += 1
            if self._startup_failures > 3:
                raise LlmevalError(f"verifier workers die on start (exit {worker.proc.exitcode})")
        if worker.task is not None:
            elapsed = time.monotonic() - worker.started
            on_result(VerifyResult(worker.task.key, status, detail, elapsed, final=final))
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
    """All cores this process may use (its CPU affinity, and a cgroup's CPU quota)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        cores = min(cores, max(1, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError):  # no cgroup v2 quota ("max", or no such file)
        pass
    return cores
