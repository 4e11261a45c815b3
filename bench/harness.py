"""Shared by the benchmark scripts: run a command as its own process and measure its wall
time, the CPU time of it and every process it started, and each process's peak memory;
medians over runs; the machine line; plain tables."""

from __future__ import annotations

import ctypes
import os
import platform
import resource
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

PYTHON = sys.executable


def compile_package() -> None:
    """Byte-compile llmeval, as pip does for an installed package: an editable checkout run with
    PYTHONDONTWRITEBYTECODE=1 (set on this machine) recompiles every module at each start,
    ~0.08 s that no user of an installed llmeval pays."""
    import compileall

    import llmeval

    compileall.compile_dir(Path(llmeval.__file__).parent, quiet=1)


compile_package()
_PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> None:
    """Orphaned descendants (a forkserver outliving its parent) become our children, so their
    CPU time is counted when we reap them."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


@dataclass
class Measure:
    """One run: wall seconds, CPU seconds (user+sys of all processes), peak RSS in MB of the
    main process, of its children, and of the largest grandchild (e.g. verifier workers)."""

    wall: float
    cpu: float
    main_mb: float = 0.0
    child_mb: float = 0.0
    grandchild_mb: float = 0.0
    grandchildren: int = 0
    extra: dict[str, float] = field(default_factory=dict)


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def _cpu_s(pid: int) -> float:
    """user+sys seconds of one process so far (from /proc/<pid>/stat)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def _hwm_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        pass
    return 0.0


class _Sampler(threading.Thread):
    """Reads the peak RSS (VmHWM) of a process tree every `interval` seconds."""

    def __init__(self, root: int, interval: float = 0.05) -> None:
        super().__init__(daemon=True)
        self.root, self.interval = root, interval
        self.peaks: dict[int, tuple[int, float]] = {}  # pid -> (depth, MB)
        self.cpu: dict[int, float] = {}  # pid -> CPU seconds last seen
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            self.sample()
            self.done.wait(self.interval)

    def sample(self) -> None:
        level = [(self.root, 0)]
        while level:
            pid, depth = level.pop()
            mb = _hwm_mb(pid)
            if mb:
                old = self.peaks.get(pid, (depth, 0.0))[1]
                self.peaks[pid] = (depth, max(old, mb))
                self.cpu[pid] = _cpu_s(pid)
            level.extend((c, depth + 1) for c in _children(pid) if depth < 2)


class LineCounter(threading.Thread):
    """Counts the lines of a growing output every 0.1 s: (seconds since start, lines) pairs."""

    def __init__(self, path: Path) -> None:
        super().__init__(daemon=True)
        self.path, self.points, self.done = path, [(0.0, 0)], threading.Event()

    def run(self) -> None:
        start, pos, lines = time.perf_counter(), 0, 0
        while not self.done.wait(0.1):
            try:
                with self.path.open("rb") as handle:
                    handle.seek(pos)
                    data = handle.read()
            except FileNotFoundError:
                continue
            pos, lines = pos + len(data), lines + data.count(b"\n")
            self.points.append((time.perf_counter() - start, lines))

    def rate(self, low: float, high: float) -> float:
        """Lines per second between the moments `low` and `high` of the final count were passed."""
        total = self.points[-1][1]
        t1, c1 = next(p for p in self.points if p[1] >= low * total)
        t2, c2 = next(p for p in self.points if p[1] >= high * total)
        return (c2 - c1) / (t2 - t1)


def _reap_orphans(pids: list[int], deadline_s: float = 10.0) -> None:
    """Wait for those of `pids` that were re-parented to us (we are a subreaper); the others
    are not our children (their parent reaped them) and are skipped at once."""
    end = time.monotonic() + deadline_s
    waiting = set(pids)
    while waiting and time.monotonic() < end:
        for pid in list(waiting):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                waiting.discard(pid)
                continue
            if done:
                waiting.discard(pid)
        if waiting:
            time.sleep(0.02)


def measure(argv: Sequence[str], *, cwd: Path | None = None, env: dict | None = None) -> Measure:
    """Run `argv` to completion (it must succeed) and measure it."""
    become_subreaper()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(
        list(argv), cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    sampler = _Sampler(proc.pid)
    sampler.start()
    _, err = proc.communicate()
    wall = time.perf_counter() - start
    sampler.done.set()
    sampler.join()
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({proc.returncode}): {err.decode()[-2000:]}")
    _reap_orphans([p for p in sampler.peaks if p != proc.pid])
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    by_depth: dict[int, list[float]] = {0: [], 1: [], 2: []}
    cpu_by_depth = [0.0, 0.0, 0.0]
    for pid, (depth, mb) in sampler.peaks.items():
        by_depth[depth].append(mb)
        cpu_by_depth[depth] += sampler.cpu.get(pid, 0.0)
    return Measure(
        wall=wall,
        cpu=cpu,
        main_mb=max(by_depth[0], default=0.0),
        child_mb=max(by_depth[1], default=0.0),
        grandchild_mb=max(by_depth[2], default=0.0),
        grandchildren=len(by_depth[2]),
        extra={f"cpu{d}": c for d, c in enumerate(cpu_by_depth)},
    )


def repeat(run: Callable[[], Measure], runs: int, warmup: int = 1) -> list[Measure]:
    """`warmup` discarded runs, then `runs` measured ones."""
    for _ in range(warmup):
        run()
    return [run() for _ in range(runs)]


def med(values: Sequence[float]) -> float:
    return statistics.median(values)


def median_measure(runs: list[Measure]) -> Measure:
    """Field-wise medians (peaks: the maximum over runs)."""
    return Measure(
        wall=med([r.wall for r in runs]),
        cpu=med([r.cpu for r in runs]),
        main_mb=max(r.main_mb for r in runs),
        child_mb=max(r.child_mb for r in runs),
        grandchild_mb=max(r.grandchild_mb for r in runs),
        grandchildren=max(r.grandchildren for r in runs),
        extra={k: med([r.extra[k] for r in runs]) for k in runs[0].extra},
    )


def machine() -> str:
    """Date, cores, memory, Python and the current load average."""
    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    return (
        f"{time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores, {mem_gib:.0f} GiB, "
        f"Python {platform.python_version()}, load average {load}"
    )


def table(title: str, headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """Print a plain aligned table."""
    cells = [[str(h) for h in headers]] + [[_fmt(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    print(f"\n{title}")
    for i, row in enumerate(cells):
        print(
            "  ".join(
                c.rjust(w) if j else c.ljust(w)
                for j, (c, w) in enumerate(zip(row, widths, strict=True))
            )
        )
        if i == 0:
            print("  ".join("-" * w for w in widths))


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.2f}" if abs(value) < 100 else f"{value:.0f}"
    return str(value)
