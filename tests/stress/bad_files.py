"""Running a broken-file case (`bad_cases.CASES`): build its files, run the real command line
in a subprocess, check the one-line error, the exit code and the files it must not change.

Used by `bench/stress_bad_inputs.py` and `tests/test_bad_files.py`.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.stress.scratch_fs import Mounts

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Env:
    """What builders share: the loopback server's URL and the mounts to undo."""

    url: str
    mounts: Mounts


@dataclass
class Setup:
    """What a case runs: argv after `llmeval`, the file whose bytes must not change, what the
    error line must name, an optional RLIMIT_FSIZE; `skip` says why it cannot run here."""

    argv: list[str]
    watched: Path | None = None
    names: str = ""
    fsize: int | None = None
    skip: str = ""
    whole: Path | None = None  # a file that must hold only whole JSON lines afterwards


@dataclass
class Case:
    """One broken file: how to build it, the exit code and whether a torn tail may go."""

    name: str
    build: Callable[[Path, Env], Setup]
    exit_code: int
    torn: bool = False  # the watched file loses exactly its torn last line (with a warning)


@dataclass
class Outcome:
    """What happened: exit code, the error line, whether the watched file kept its bytes."""

    case: str
    exit_code: int = 0
    error: str = ""
    unchanged: bool = True
    problems: tuple[str, ...] = ()
    skipped: str = ""


def command(argv: list[str]) -> list[str]:
    """The full command line of `llmeval argv`."""
    return [sys.executable, "-m", "llmeval", *argv]


def _limit(fsize: int | None) -> Callable[[], None] | None:
    if fsize is None:
        return None
    return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))


def run_case(case: Case, d: Path, env: Env) -> Outcome:
    """Build the case in `d`, run it, and list what is wrong with the outcome."""
    setup = case.build(d, env)
    if setup.skip:
        return Outcome(case.name, skipped=setup.skip)
    before = setup.watched.read_bytes() if setup.watched and setup.watched.is_file() else None
    envvars = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    done = subprocess.run(command(setup.argv), capture_output=True, text=True, errors="replace",
                          env=envvars,
                          preexec_fn=_limit(setup.fsize), timeout=300)  # fmt: skip
    errors = [ln for ln in done.stderr.splitlines() if ": error: " in ln]
    out = Outcome(case.name, done.returncode, errors[0] if errors else "")
    problems = []
    if done.returncode != case.exit_code:
        problems.append(f"exit {done.returncode}, expected {case.exit_code}")
    if "Traceback" in done.stderr:
        problems.append("a traceback: " + done.stderr.strip().splitlines()[-1][:200])
    if case.exit_code and len(errors) != 1:
        problems.append(f"{len(errors)} error lines: {done.stderr[-300:]!r}")
    if case.exit_code and setup.names and setup.names not in out.error:
        problems.append(f"the error does not name {setup.names}")
    warned = [ln for ln in done.stderr.splitlines() if "warning" in ln.lower()]
    if not case.exit_code and setup.names and not any(setup.names in ln for ln in warned):
        problems.append(f"no warning naming {setup.names}")
    if before is not None and setup.watched is not None:
        after = setup.watched.read_bytes() if setup.watched.exists() else b""
        kept = before[: before.rfind(b"\n") + 1] if case.torn else before
        grew = setup.whole == setup.watched  # appends until the disk is full
        out.unchanged = after.startswith(kept) if grew or case.torn else after == before
        if not out.unchanged:
            problems.append("the existing file changed")
        if case.torn and "torn" not in done.stderr:
            problems.append("no warning about the torn line")
    if setup.whole is not None and not _whole_lines(setup.whole):
        problems.append(f"{setup.whole.name} holds a torn or broken line")
    out.problems = tuple(problems)
    return out


def _whole_lines(path: Path) -> bool:
    """Every line of `path` is complete JSON (an absent or empty file qualifies)."""
    data = path.read_bytes() if path.exists() else b""
    if data and not data.endswith(b"\n"):
        return False
    try:
        for line in data.splitlines():
            json.loads(line)
    except ValueError:
        return False
    return True
