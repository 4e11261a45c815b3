"""Run llama.cpp's `llama-server` on a free loopback port, wait for /health, always stop it.

The binary runs directly in its own process group, which `stop()` kills (and an `atexit` hook
kills if the caller never did), so no server outlives the test session or script that started it.
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

_RUNNING: set[LlamaServer] = set()


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


class LlamaServer:
    """One llama-server process serving one model (`with LlamaServer(...) as srv: srv.base_url`)."""

    def __init__(
        self,
        binary: str | Path,
        model: str | Path,
        *,
        alias: str | None = None,
        port: int | None = None,
        host: str = "127.0.0.1",
        parallel: int = 4,
        ctx_per_slot: int = 4096,
        threads: int | None = None,
        log_path: str | Path | None = None,
        extra_args: tuple[str, ...] = (),
    ) -> None:
        self.binary, self.model = Path(binary), Path(model)
        self.alias = alias or self.model.stem
        self.host, self.port = host, port or free_port(host)
        self.parallel, self.ctx_per_slot = parallel, ctx_per_slot
        self.threads = threads or min(2, os.cpu_count() or 1)
        self.log_path = Path(log_path) if log_path else None
        self.extra_args = extra_args
        self.proc: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL (ends in /v1)."""
        return f"http://{self.host}:{self.port}/v1"

    @property
    def health_url(self) -> str:
        return f"http://{self.host}:{self.port}/health"

    def command(self) -> list[str]:
        """The command line that starts the server."""
        return [
            str(self.binary),
            *("-m", str(self.model), "--alias", self.alias),
            *("--host", self.host, "--port", str(self.port)),
            *("--parallel", str(self.parallel), "-c", str(self.parallel * self.ctx_per_slot)),
            *("--threads", str(self.threads), "--no-webui"),
            *self.extra_args,
        ]

    def start(self, timeout: float = 60.0) -> LlamaServer:
        """Start the process in its own group and wait until /health answers."""
        if self.proc is not None and self.proc.poll() is None:
            raise RuntimeError("server already running")
        out = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL  # noqa: SIM115
        try:
            self.proc = subprocess.Popen(
                self.command(), stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        finally:
            if out is not subprocess.DEVNULL:
                out.close()
        _RUNNING.add(self)
        try:
            wait_for_health(self.health_url, timeout, self.proc)
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
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            _signal_group(proc, signal.SIGKILL)
            proc.wait()

    def kill(self) -> None:
        """Kill at once (SIGKILL), as a crash or an OOM killer would."""
        if self.proc is not None:
            _signal_group(self.proc, signal.SIGKILL)
            self.proc.wait()
            self.proc = None
            _RUNNING.discard(self)

    def __enter__(self) -> LlamaServer:
        return self.start() if self.proc is None else self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def __hash__(self) -> int:
        return id(self)


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)  # start_new_session: the group id is the pid


@atexit.register
def _stop_all() -> None:
    for server in list(_RUNNING):
        server.stop(timeout=3)


def main(argv: list[str] | None = None) -> int:
    """Resolve the binary and model, then exec llama-server in this process (for scripts)."""
    import argparse

    from llmeval.testing.llama_build import ensure_llama_server, find_llama_server
    from llmeval.testing.smollm import SMOLLM2_FILE, SMOLLM2_NAME, ensure_smollm2, find_smollm2

    parser = argparse.ArgumentParser(prog="python -m llmeval.testing.llama_server")
    parser.add_argument("--model", help="a GGUF file (default: SmolLM2-135M-Instruct)")
    parser.add_argument("--alias", help="the served model name (default: the file's stem)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: a free port")
    parser.add_argument("--parallel", type=int, default=4, help="concurrent slots")
    parser.add_argument("--ctx-per-slot", type=int, default=4096)
    parser.add_argument("--threads", type=int)
    parser.add_argument("--dry-run", action="store_true", help="print the command, do not run")
    args, extra = parser.parse_known_args(argv)
    if args.model:
        model, alias = Path(args.model), args.alias
    else:
        found = (find_smollm2() or Path(SMOLLM2_FILE)) if args.dry_run else ensure_smollm2()
        model, alias = found, args.alias or SMOLLM2_NAME
    dry = args.dry_run
    binary = (find_llama_server() or Path("llama-server")) if dry else ensure_llama_server()
    server = LlamaServer(
        binary, model, alias=alias, port=args.port or None, host=args.host,
        parallel=args.parallel, ctx_per_slot=args.ctx_per_slot, threads=args.threads,
        extra_args=tuple(extra),
    )  # fmt: skip
    cmd = server.command()
    print(" ".join(cmd), flush=True)
    if not args.dry_run:
        os.execv(cmd[0], cmd)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
