"""How a call's process is started: in bwrap's namespaces where this machine allows them (no
network, its own PID and mount namespaces, a read-only view of the interpreter and its
libraries alone, a size-capped tmpfs as its folder), else as a limited process, or under a
lab's own `--sandbox-cmd`; and what it offers (the interpreter, the libraries and versions)."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import logging
import marshal
import math
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from llmeval.transcripts import SandboxInfo, ToolSettings

log = logging.getLogger("llmeval")

LIBRARIES = ("sympy", "mpmath", "numpy", "scipy")  # offered where installed, versions recorded
NOBODY = 65534  # the uid a call runs as
PROCESSES = 32  # processes (threads count) one call may have at once
FILE_MB = 64  # the largest file a call may write, and its folder's size under namespaces
WORK, PYTHON, SITE = "/work", "/python", "/site"  # where a call sees them (namespaces)
RUNNER = (Path(__file__).with_name("runner.py")).read_text(encoding="utf-8")
# The environment of every call: nothing of llmeval's (no keys, no tokens); one thread for
# the numeric libraries and a fixed hash seed, so a program prints the same on every run.
ENV = {
    "PATH": "/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "PYTHONHASHSEED": "0",
    "PYTHONIOENCODING": "utf-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "MPLBACKEND": "Agg",
}


# what a container client needs of llmeval's environment (docker, podman)
WRAPPER_ENV = {"HOME", "DOCKER_HOST", "DOCKER_CONFIG", "DOCKER_CONTEXT", "XDG_RUNTIME_DIR",
               "CONTAINER_HOST"}  # fmt: skip


def _libraries() -> dict[str, tuple[str, list[str]]]:
    """{name: (version, its folders)} of the LIBRARIES installed beside llmeval (a package's
    vendored `<name>.libs` folder too), found without importing them."""
    found = {}
    for name in LIBRARIES:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            continue
        folder = Path(next(iter(spec.submodule_search_locations)))
        folders = [str(folder)]
        vendored = folder.with_name(name + ".libs")
        if vendored.is_dir():
            folders.append(str(vendored))
        found[name] = (importlib.metadata.version(name), folders)
    return found


@dataclass
class Launcher:
    """The command line of one call, the environment it gets, the folders it sees."""

    settings: ToolSettings
    isolation: str = "process"
    why_not: str = ""  # why namespaces were not had (the start-up line says it)
    bwrap: str | None = None
    libraries: dict[str, tuple[str, list[str]]] = field(default_factory=_libraries)
    python: str = field(default_factory=lambda: os.path.realpath(sys.executable))
    site: str = ""  # process isolation: a folder of links to the libraries alone
    drop_root: bool = True  # process isolation as root: calls run as nobody

    def __post_init__(self) -> None:
        base = os.path.realpath(sys.base_prefix)
        self.base = base if self.python.startswith(base + "/") else os.path.dirname(self.python)
        if self.settings.sandbox_cmd:
            self.isolation = "command"
        elif os.environ.get("LLMEVAL_SANDBOX") == "process":  # a lab's choice, and the tests'
            self.isolation, self.why_not = "process", "LLMEVAL_SANDBOX=process"
        else:
            self.bwrap = shutil.which("bwrap")
            self.isolation = "namespaces" if self.bwrap else "process"
            self.why_not = "" if self.bwrap else "bwrap is not installed"
        self.site = tempfile.mkdtemp(prefix="llmeval-site-")
        for _, folders in self.libraries.values():
            for folder in folders:
                os.symlink(folder, os.path.join(self.site, os.path.basename(folder)))

    def close(self) -> None:
        """Remove the folder of links."""
        shutil.rmtree(self.site, ignore_errors=True)

    def info(self) -> SandboxInfo:
        """What the run spec records."""
        libraries = {name: version for name, (version, _) in self.libraries.items()}
        python = platform.python_version()
        if self.isolation == "command":  # another interpreter: the wrapper's own
            python, libraries = "the --sandbox-cmd's python3", {}
        return SandboxInfo.model_validate(
            {"isolation": self.isolation, "python": python, "libraries": libraries}
        )

    def config(self, status_fd: int | None) -> list[str]:
        """The runner's limits and status descriptor, and its library folders (argv[1:])."""
        s, site = self.settings, ""
        uid, reap = -1, 0
        if self.isolation == "namespaces":
            site = SITE
        elif self.isolation == "process":
            site, reap = self.site, 1
            uid = NOBODY if self.drop_root else -1
        cpu = max(1, math.ceil(s.timeout_s))
        numbers = [cpu, s.memory_mb, PROCESSES, FILE_MB, -1 if status_fd is None else status_fd,
                   uid, reap]  # fmt: skip
        return [" ".join(map(str, numbers)), site]

    def argv(self, status_fd: int | None = None) -> list[str]:
        """The command of one call (the code comes on its stdin; a wrapper passes on no
        status descriptor)."""
        tail = [
            "-B",
            "-c",
            RUNNER,
            *self.config(None if self.isolation == "command" else status_fd),
        ]
        if self.isolation == "command":
            prefix = shlex.split(self.settings.sandbox_cmd or "")
            # found on llmeval's PATH (a call's own is /usr/bin:/bin)
            prefix[0] = shutil.which(prefix[0]) or prefix[0]
            return [*prefix, "python3", *tail]
        if self.isolation == "process":
            return [self.python, "-S", *tail]
        return [*self._bwrap(), self._inner(self.python), "-S", *tail]

    def env(self, folder: str | None) -> dict[str, str]:
        """The environment of a call whose folder is `folder` (namespaces: /work); a wrapper
        (--sandbox-cmd) also gets what a container client reads: where the daemon and its
        configuration are, never llmeval's keys."""
        home = folder or WORK
        own = {"HOME": home, "TMPDIR": home}
        if self.isolation == "command":
            own |= {k: v for k, v in os.environ.items() if k in WRAPPER_ENV}
        return {**ENV, **own}

    def _inner(self, path: str) -> str:
        """Where a call sees a host path of the interpreter."""
        return path if self._in_usr else PYTHON + path[len(self.base) :]

    @property
    def _in_usr(self) -> bool:
        """The interpreter is the system's (/usr is in every view already)."""
        return self.base == "/usr" or self.base.startswith("/usr/")

    def _bwrap(self) -> list[str]:
        assert self.bwrap is not None
        args = [self.bwrap, "--unshare-all", "--die-with-parent", "--new-session",
                "--uid", str(NOBODY), "--gid", str(NOBODY), "--hostname", "sandbox",
                "--ro-bind", "/usr", "/usr"]  # fmt: skip
        for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
            if os.path.islink(top):
                args += ["--symlink", os.readlink(top), top]
            elif os.path.isdir(top):
                args += ["--ro-bind", top, top]
        args += ["--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache"]
        if not self._in_usr:
            args += ["--ro-bind", self.base, PYTHON]
        for _, folders in self.libraries.values():
            for folder in folders:
                args += ["--ro-bind", folder, f"{SITE}/{os.path.basename(folder)}"]
        for dev in ("null", "zero", "full", "random", "urandom"):
            args += ["--dev-bind", f"/dev/{dev}", f"/dev/{dev}"]
        args += ["--proc", "/proc", "--size", str(FILE_MB << 20), "--tmpfs", WORK]
        args += ["--chdir", WORK, "--remount-ro", "/", "--clearenv"]
        for name, value in self.env(None).items():
            args += ["--setenv", name, value]
        return args

    def probe(self) -> None:
        """Run `print(1)` once as every call will run: namespaces this machine refuses fall
        back to process isolation (said at the start); a --sandbox-cmd that fails is an error."""
        ok, why = self._try()
        if ok:
            return
        why = (why.splitlines() or ["no output"])[-1][:200]
        if self.isolation == "command":
            raise OSError(f"--sandbox-cmd does not run Python: {why}")
        if self.isolation == "namespaces":
            self.isolation, self.why_not = "process", f"bwrap failed here: {why}"
            self.probe()
        elif self.drop_root and os.getuid() == 0:  # nobody cannot reach the interpreter
            self.drop_root = False
            self.why_not += f"; calls run as root (user nobody cannot run {self.python})"
            self.probe()
        else:
            raise OSError(f"the sandbox cannot run {self.python}: {why}")

    def _try(self) -> tuple[bool, str]:
        """Whether `print(1)` runs as a call runs, and what it said otherwise."""
        folder = (
            tempfile.mkdtemp(prefix="llmeval-probe-") if self.isolation != "namespaces" else None
        )
        if folder and self.isolation == "process" and self.drop_root and os.getuid() == 0:
            os.chown(folder, NOBODY, NOBODY)
        try:
            code = marshal.dumps(("print(1)", ()))
            done = subprocess.run(self.argv(), input=code, capture_output=True, timeout=60,
                                  env=self.env(folder), cwd=folder or "/")  # fmt: skip
            return done.stdout == b"1\n", done.stderr.decode("utf-8", "replace").strip()
        except (OSError, subprocess.TimeoutExpired) as exc:
            return False, str(exc)
        finally:
            if folder:
                shutil.rmtree(folder, ignore_errors=True)


def start_line(launcher: Launcher) -> str:
    """The start-up line: the isolation each call gets, and what it lacks."""
    info = launcher.info()
    libs = ", ".join(f"{k} {v}" for k, v in info.libraries.items()) or "no libraries"
    s = launcher.settings
    limits = f"{s.timeout_s:g} CPU s, {s.memory_mb} MB, {PROCESSES} processes per call"
    if info.isolation == "namespaces":
        how = "isolation: namespaces (no network, own PID namespace, read-only view)"
    elif info.isolation == "command":
        how = f"isolation: command ({s.sandbox_cmd})"
    else:
        how = (
            f"isolation: process only ({launcher.why_not}): calls have the network, see other "
            "processes and read the file system; install bubblewrap for namespaces"
        )
    return f"tools: python {info.python} with {libs}; {limits}; {how}"
