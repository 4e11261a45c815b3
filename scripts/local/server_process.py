"""A local inference server as a child process: free port, wait for /health, always stopped.

The server runs in its own process group, which `stop()` kills (and an `atexit` hook kills if
the caller never did), so no server outlives the test session or script that started it.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

_RUNNING: set[ServerProcess] = set()


def free_port(host: str = "127.0.0.1") -> int:
    """An ephemeral port that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def wait_for_health(url: str, timeout: float, proc: subprocess.Popen | None = None) -> None:
    """Poll `url` until it answers 200; fail early if `proc` exits."""
    deadline = time.monotonic() + timeout
    while True:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited with code {proc.returncode} before {url} answered")
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"{url} did not answer within {timeout:.0f} s")
        time.sleep(0.1)


class ServerProcess:
    """A server process; subclasses give `command()`. `with Server(...) as srv: srv.base_url`."""

    start_timeout = 60.0

    def __init__(
        self,
        *,
        port: int | None = None,
        host: str = "127.0.0.1",
        log_path: str | Path | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.host, self.port = host, port or free_port(host)
        self.log_path = Path(log_path) if log_path else None
        self.env = env
        self.proc: subprocess.Popen | None = None

    def command(self) -> list[str]:
        raise NotImplementedError

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL (ends in /v1)."""
        return f"http://{self.host}:{self.port}/v1"

    @property
    def health_url(self) -> str:
        return f"http://{self.host}:{self.port}/health"

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def start(self, timeout: float | None = None) -> ServerProcess:
        """Start the process in its own group and wait until /health answers."""
        if self.proc is not None and self.proc.poll() is None:
            raise RuntimeError("server already running")
        out = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL  # noqa: SIM115
        env = {**os.environ, **self.env} if self.env else None
        try:
            self.proc = subprocess.Popen(
                self.command(),
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True, env=env,
            )  # fmt: skip
        finally:
            if out is not subprocess.DEVNULL:
                out.close()
        _RUNNING.add(self)
        try:
            wait_for_health(self.health_url, timeout or self.start_timeout, self.proc)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the whole process group: SIGTERM, then SIGKILL after `timeout`. Idempotent."""
        proc, self.proc = self.proc, None
        _RUNNING.discard(self)
        if proc is None:
            return
        _signal_group(proc, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout)
        _signal_group(proc, signal.SIGKILL)  # workers the engine forked, if any remain
        proc.wait()

    def kill(self) -> None:
        """Kill at once (SIGKILL), as a crash or the OOM killer would."""
        proc, self.proc = self.proc, None
        _RUNNING.discard(self)
        if proc is not None:
            _signal_group(proc, signal.SIGKILL)
            proc.wait()

    def __enter__(self) -> ServerProcess:
        return self.start() if self.proc is None else self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)  # start_new_session: the group id is the pid


@atexit.register
def _stop_all() -> None:
    for server in list(_RUNNING):
        server.stop(timeout=3)


def running_servers() -> list[ServerProcess]:
    """Servers started and not yet stopped (tests check this is empty at the end)."""
    return list(_RUNNING)
