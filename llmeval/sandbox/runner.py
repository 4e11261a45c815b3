"""The program each sandboxed call runs first (its source is passed with `python -c`): limits,
then the model's code read from stdin. Standard library only; it never runs in llmeval.

argv[1] holds whole numbers: cpu (seconds), memory_mb, processes, file_mb, status_fd (where
the code's wait status and CPU seconds go; -1: none), uid (drop to it when started as root:
process isolation; -1: stay), reap (1: kill what the code leaves running; namespaces need
not); argv[2] the folders put on sys.path (os.pathsep between). stdin is marshal's form of
(code, setup): setup, earlier blocks run with their output discarded (--tool-state replay).
The code's exit codes: 0 ok, 1 an exception (its traceback on stderr, without this program's
frames), MEMORY_EXIT a MemoryError, or the code's own SystemExit code. Imports only what
starts fast (no json, no re: each call pays for what this program imports).
"""

from __future__ import annotations

import marshal
import os
import resource
import sys

MEMORY_EXIT = 86
FILENAME = "<code>"


def limit(cfg: dict, names: tuple[str, ...]) -> None:
    """Lower these hard limits (they cannot be raised again)."""
    cpu = max(1, cfg["cpu"])
    memory, size = cfg["memory_mb"] << 20, cfg["file_mb"] << 20
    values = {
        "RLIMIT_CPU": (cpu, cpu + 1),  # SIGXCPU at the limit, SIGKILL a second later
        "RLIMIT_AS": (memory, memory),
        "RLIMIT_NPROC": (cfg["processes"], cfg["processes"]),
        "RLIMIT_FSIZE": (size, size),
        "RLIMIT_CORE": (0, 0),
        "RLIMIT_NOFILE": (256, 256),
    }
    for name in names:
        resource.setrlimit(getattr(resource, name), values[name])


def report(exc: BaseException) -> None:
    """The traceback of the model's code alone (frames of this program left out)."""
    import traceback

    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != FILENAME:
        tb = tb.tb_next
    lines = traceback.format_exception(type(exc), exc, tb)
    sys.stderr.write("".join(lines))


def subreaper() -> None:
    """Become the reaper of every process the code starts (a fork that leaves its session
    too), where Linux offers it (without namespaces nothing else ends them)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def reap() -> None:
    """Kill and reap whatever the code left running (orphans come to this process)."""
    import signal

    for _ in range(1000):
        try:
            with open(f"/proc/self/task/{os.getpid()}/children") as handle:
                children = [int(pid) for pid in handle.read().split()]
        except OSError:
            return
        if not children:
            return
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except OSError:
                pass


def run(code: str, setup: tuple) -> int:
    """Run the code (after the setup blocks); its exit code."""
    sys.stdin = open(os.devnull)  # noqa: SIM115 (the code reads nothing)
    import random

    random.seed(0)  # the same program prints the same numbers on every run
    scope: dict = {"__name__": "__main__", "__builtins__": __builtins__}
    out, err = sys.stdout, sys.stderr
    try:
        for block in setup:
            sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115
            try:
                exec(compile(block, FILENAME, "exec"), scope)
            except Exception:
                pass  # it ran before: whatever it left is state
            finally:
                sys.stdout, sys.stderr = out, err
        exec(compile(code, FILENAME, "exec"), scope)
    except MemoryError:
        sys.stderr.write("MemoryError: the code ran out of memory\n")
        return MEMORY_EXIT
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException as exc:
        report(exc)
        return 1
    return 0


def main() -> None:
    """Drop root (process isolation), limit, read the code, run it in a child whose end and
    CPU time this process reports on the status descriptor (when it has one)."""
    numbers = [int(n) for n in sys.argv[1].split()]
    names = ("cpu", "memory_mb", "processes", "file_mb", "status_fd", "uid", "reap")
    cfg = dict(zip(names, numbers, strict=True))
    if cfg["uid"] >= 0 and os.getuid() == 0:
        os.setgroups([])
        os.setgid(cfg["uid"])
        os.setuid(cfg["uid"])
    limit(cfg, ("RLIMIT_NPROC", "RLIMIT_FSIZE", "RLIMIT_CORE", "RLIMIT_NOFILE"))
    sys.path[:0] = [folder for folder in sys.argv[2].split(os.pathsep) if folder]
    del sys.argv[1:]
    code, setup = marshal.loads(sys.stdin.buffer.read())
    status_fd = cfg["status_fd"]
    if cfg["reap"]:
        subreaper()
    pid = os.fork()
    if pid == 0:
        if status_fd >= 0:
            os.close(status_fd)
        limit(cfg, ("RLIMIT_CPU", "RLIMIT_AS"))
        status = run(code, setup)
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:
            pass
        os._exit(status & 0xFF)
    _, status, usage = os.wait4(pid, 0)
    if cfg["reap"]:
        reap()
    if status_fd >= 0:
        os.write(status_fd, b"%d %.6f" % (status, usage.ru_utime + usage.ru_stime))
    os._exit(0)


if __name__ == "__main__":
    main()
