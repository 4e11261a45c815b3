"""One call in its own fresh process: started (ahead of time, for the prewarmed pool), given
its code, its output read with a cap (head and tail kept), killed past the wall-clock
backstop or a flood of output, its folder removed, its end named as a `ToolStatus`."""

from __future__ import annotations

import contextlib
import os
import selectors
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

from llmeval.sandbox.launch import NOBODY, PYTHON, SITE, WORK, Launcher
from llmeval.sandbox.runner import MEMORY_EXIT
from llmeval.transcripts import ToolStatus

FLOOD = 16 << 20  # bytes of output past which a call is stopped (100 MB of prints)
CHUNK = 1 << 16


def backstop(cpu_seconds: float) -> float:
    """Wall-clock seconds a call may take (a program that sleeps uses no CPU time)."""
    return 2 * cpu_seconds + 5


@dataclass
class Capture:
    """One stream's output: its first and last `keep` bytes and how many came in all."""

    keep: int
    head: bytearray = field(default_factory=bytearray)
    tail: bytearray = field(default_factory=bytearray)
    total: int = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.keep - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            del self.tail[: max(0, len(self.tail) - self.keep)]

    def text(self, chars: int) -> tuple[str, bool]:
        """The output as the model sees it, at most about `chars` characters: whole, or its
        head and tail around a line that says how much was cut; and whether it was cut."""
        whole = self.total <= self.keep
        head = self.head.decode("utf-8", "replace")
        text = head if whole else head + self.tail.decode("utf-8", "replace")
        if whole and len(text) <= chars:
            return text, False
        half = chars // 2
        missing = self.total - len(self.head) - len(self.tail)
        cut = max(0, len(text) - 2 * half) + max(0, missing)
        mark = f"\n[... {cut:,} {'bytes' if missing > 0 else 'characters'} cut ...]\n"
        return text[:half] + mark + text[len(text) - half :], True


@dataclass
class Started:
    """A call's process, started and waiting for its code on stdin; its folder on the host
    (None under namespaces: a tmpfs that ends with it)."""

    proc: subprocess.Popen[bytes]
    folder: str | None
    status: int | None  # where the runner reports the code's end and CPU time


@dataclass
class Outcome:
    """What one call did."""

    stdout: str
    stderr: str
    status: ToolStatus
    cpu_s: float


def start(launcher: Launcher) -> Started:
    """Start a call's process (it waits for its code)."""
    folder = None
    if launcher.isolation != "namespaces":
        folder = tempfile.mkdtemp(prefix="llmeval-call-")
        if launcher.isolation == "process" and launcher.drop_root and os.getuid() == 0:
            os.chown(folder, NOBODY, NOBODY)  # the runner drops to nobody before any code
    read_end, write_end = os.pipe()
    proc = subprocess.Popen(
        launcher.argv(write_end),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=folder or "/",
        env=launcher.env(folder),
        start_new_session=True,  # one process group to kill
        pass_fds=(write_end,),
    )
    os.close(write_end)
    return Started(proc, folder, read_end)


def finish(launcher: Launcher, started: Started, payload: bytes) -> Outcome:
    """Give the process its code, read its output until it ends (or is stopped), remove its
    folder; its processes never outlive this."""
    settings = launcher.settings
    proc, keep = started.proc, settings.output_chars * 4
    streams = {proc.stdout: Capture(keep), proc.stderr: Capture(keep)}
    stopped: ToolStatus | None = None
    try:
        assert proc.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.write(payload)
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.close()
        stopped, code = _read(proc, streams, time.monotonic() + backstop(settings.timeout_s))
        code, cpu = _reported(started.status, code)
    finally:
        _kill(proc)
        _close(proc, started.status)
        if started.folder:
            shutil.rmtree(started.folder, ignore_errors=True)
    out, out_cut = streams[proc.stdout].text(settings.output_chars)
    err, err_cut = streams[proc.stderr].text(settings.output_chars)
    return Outcome(
        _hide_paths(launcher, started.folder, out),
        _hide_paths(launcher, started.folder, err),
        stopped or _status(launcher, code, cpu, out_cut or err_cut),
        cpu,
    )


def _read(
    proc: subprocess.Popen[bytes], streams: dict, deadline: float
) -> tuple[ToolStatus | None, int]:
    """Read both streams until the process ends (then what is left in the pipes), the
    deadline passes (timeout) or the output floods (output_cut): (why it was stopped, its
    exit code)."""
    stopped: ToolStatus | None = None
    try:  # readable once the process has ended: no polling (Linux 5.3 and later)
        exited: int | None = os.pidfd_open(proc.pid)
    except OSError:
        exited = None
    try:
        with selectors.DefaultSelector() as sel:
            for pipe in streams:
                os.set_blocking(pipe.fileno(), False)
                sel.register(pipe, selectors.EVENT_READ)
            if exited is not None:
                sel.register(exited, selectors.EVENT_READ)
            while True:
                left = max(0.0, deadline - time.monotonic())
                for key, _ in sel.select(timeout=left if exited is not None else min(left, 0.05)):
                    if key.fileobj is not exited:
                        _drain(key.fileobj, streams, sel)
                if sum(c.total for c in streams.values()) > FLOOD:
                    stopped = "output_cut"
                elif time.monotonic() > deadline:
                    stopped = "timeout"
                if stopped:
                    _kill(proc)
                pid, status = os.waitpid(proc.pid, 0 if stopped else os.WNOHANG)
                if pid:
                    proc.returncode = os.waitstatus_to_exitcode(status)
                    for key in list(sel.get_map().values()):
                        if key.fileobj is not exited:
                            _drain(key.fileobj, streams, sel)
                    return stopped, proc.returncode
    finally:
        if exited is not None:
            os.close(exited)


def _drain(pipe: Any, streams: dict, sel: selectors.BaseSelector) -> None:
    """Read what a pipe holds now; at its end, stop watching it."""
    while True:
        try:
            data = os.read(pipe.fileno(), CHUNK)
        except BlockingIOError:
            return
        if not data:
            sel.unregister(pipe)
            return
        streams[pipe].add(data)
        if streams[pipe].total > FLOOD:
            return


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """Kill the call's process group (under namespaces bwrap takes its PID namespace down
    with it: every process the code started)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _close(proc: subprocess.Popen[bytes], status: int | None) -> None:
    """Close the call's pipes (a process never started keeps none)."""
    for pipe in (proc.stdout, proc.stderr):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()
    if status is not None:
        with contextlib.suppress(OSError):
            os.close(status)


def _reported(status: int | None, code: int) -> tuple[int, float]:
    """The code's exit code and CPU seconds as the runner reported them; else (the runner
    itself was killed, or a wrapper passed no descriptor on) the process's exit code."""
    raw = b""
    if status is not None:
        os.set_blocking(status, False)
        with contextlib.suppress(OSError):
            raw = os.read(status, 4096)
    try:
        wait, cpu = raw.split()
        return os.waitstatus_to_exitcode(int(wait)), round(float(cpu), 3)
    except ValueError:
        return code, 0.0


def _status(launcher: Launcher, code: int, cpu: float, cut: bool) -> ToolStatus:
    """How a call that was not stopped ended, from its exit code and its CPU time."""
    wrapped = launcher.isolation != "process"  # bwrap, docker: 128 + the signal's number
    signum = -code if code < 0 else code - 128 if code > 128 and wrapped else 0
    if signum == signal.SIGXCPU or (
        signum == signal.SIGKILL and cpu >= launcher.settings.timeout_s - 0.05
    ):
        return "timeout"
    if code == MEMORY_EXIT:
        return "memory"
    if signum:
        return "killed"
    if cut:
        return "output_cut"
    return "ok" if code == 0 else "error"


def _hide_paths(launcher: Launcher, folder: str | None, text: str) -> str:
    """Host paths a call's output names, as a call under namespaces sees them (a traceback
    through a library names its file): the same text on every machine."""
    pairs = [(folder, WORK), (launcher.site, SITE), (launcher.base, PYTHON)]
    for real, shown in pairs:
        if real and real in text:
            text = text.replace(real, shown)
    return text
