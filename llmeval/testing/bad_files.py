"""Broken input and output files for `infer`, `eval` and `report`: each case builds its files,
runs the real command line in a subprocess and checks the one-line error and the exit code.

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

from llmeval.testing.scratch_fs import Mounts

ROOT = Path(__file__).resolve().parents[2]
PROBLEMS = [
    {"id": f"p{i}", "problem": f"What is {i} + {i}?", "answer": str(2 * i)} for i in range(4)
]


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


def _rows(*rows: object) -> bytes:
    return b"".join((r if isinstance(r, bytes) else json.dumps(r).encode()) + b"\n" for r in rows)


def _gen(pid: str, idx: int, gen: str = "so \\boxed{2}", answer: object = "2") -> dict:
    return {"problem_id": pid, "sample_idx": idx, "answer": answer, "gen": gen}


GOOD = _rows(*[_gen(p["id"], k, answer=p["answer"]) for p in PROBLEMS for k in (0, 1)])
INPUT = _rows(*PROBLEMS)
HUGE = b"x" * (8 << 20)  # an 8 MB line that is not JSON
BINARY = bytes(range(256)) * 64


def _infer(url: str, inp: Path, out: Path, *extra: str) -> list[str]:
    return ["infer", "--input", str(inp), "--output", str(out), "--base-url", url,
            "--n-samples", "3", "--retry-delay", "0.01", "--progress", "plain", *extra]  # fmt: skip


def _write(path: Path, content: bytes) -> Path:
    path.write_bytes(content)
    return path


def infer_input(content: bytes, line: int | None) -> Callable[[Path, Env], Setup]:
    """`infer` on a broken problems file; the existing output must not change."""

    def build(d: Path, env: Env) -> Setup:
        inp, out = _write(d / "aime24.jsonl", content), _write(d / "out.jsonl", GOOD)
        return Setup(_infer(env.url, inp, out), out, f"{inp}:{line}" if line else str(inp))

    return build


def infer_output(content: bytes, line: int | None) -> Callable[[Path, Env], Setup]:
    """`infer` resuming a broken output file, which must not change."""

    def build(d: Path, env: Env) -> Setup:
        inp, out = _write(d / "aime24.jsonl", INPUT), _write(d / "out.jsonl", content)
        return Setup(_infer(env.url, inp, out), out, f"{out}:{line}" if line else str(out))

    return build


def judged(cmd: str, content: bytes, line: int | None) -> Callable[[Path, Env], Setup]:
    """`eval` or `report` on a broken generation file (which must not change)."""

    def build(d: Path, env: Env) -> Setup:
        path = _write(d / "aime24_run.jsonl", content)
        extra = ["--out", str(d / "r.html")] if cmd == "report" else []
        names = f"{path}:{line}" if line else str(path)
        return Setup([cmd, str(path), "--no-progress", *extra], path, names)

    return build


def spec_mismatch(d: Path, env: Env) -> Setup:
    inp, out = _write(d / "aime24.jsonl", INPUT), d / "out.jsonl"
    first = subprocess.run(
        command(_infer(env.url, inp, out, "--n-samples", "1")), capture_output=True
    )
    if first.returncode != 0:
        raise RuntimeError(first.stderr.decode()[-500:])
    return Setup(_infer(env.url, inp, out, "--temperature", "1.0"), out, str(out))


def broken_spec(d: Path, env: Env) -> Setup:
    inp, out = _write(d / "aime24.jsonl", INPUT), _write(d / "out.jsonl", GOOD)
    spec = _write(Path(f"{out}.spec.json"), b'{"model": 3, "temperature": "hot"')
    return Setup(_infer(env.url, inp, out), spec, str(spec))


def eval_broken_spec(d: Path, env: Env) -> Setup:
    path = _write(d / "aime24_run.jsonl", GOOD)
    spec = _write(Path(f"{path}.spec.json"), BINARY)
    return Setup(["eval", str(path), "--no-progress"], spec, str(spec))


def eval_broken_cache(d: Path, env: Env) -> Setup:
    path = _write(d / "aime24_run.jsonl", _rows(_gen("p1", 0, "\\boxed{x+1}")))
    cache = _write(Path(f"{path}.verdicts.jsonl"), b'{"key": "a", "status": "correct"}\nnot json\n')
    return Setup(["eval", str(path), "--no-progress"], cache, f"{cache}:2")


def _read_only(d: Path, env: Env) -> Path | None:
    """A folder `d/ro` that will refuse writes once `env.mounts.make_read_only` is called."""
    ro = d / "ro"
    env.mounts.tmpfs(ro, 1 << 20) if os.geteuid() == 0 else ro.mkdir()
    return ro if (ro in env.mounts.points or os.geteuid() != 0) else None


def read_only(what: str) -> Callable[[Path, Env], Setup]:
    """The output folder refuses writes: infer's output, eval's cache or result, the report."""

    def build(d: Path, env: Env) -> Setup:
        ro = _read_only(d, env)
        if ro is None:
            return Setup([], skip="no read-only folder: root without tmpfs mounts")
        gen = _write(d / "aime24_run.jsonl", GOOD)
        if what == "infer":
            out = _write(ro / "out.jsonl", GOOD)
            setup = Setup(_infer(env.url, _write(d / "aime24.jsonl", INPUT), out), out, str(ro))
        elif what == "cache":
            path = _write(ro / "aime24_run.jsonl", _rows(_gen("p1", 0, "\\boxed{x+1}")))
            setup = Setup(["eval", str(path), "--no-progress"], path, str(ro))
        elif what == "result":
            result = ro / "r.json"
            setup = Setup(["eval", str(gen), "--no-progress", "--result-json", str(result)],
                          gen, str(result))  # fmt: skip
        else:
            old = _write(ro / "r.html", b"<p>an earlier report</p>")
            setup = Setup(["report", str(gen), "--no-progress", "--out", str(old)], old, str(old))
        env.mounts.make_read_only(ro)
        return setup

    return build


def disk_full(real: bool) -> Callable[[Path, Env], Setup]:
    """Infer appends until the disk is full (a 64 KB tmpfs, `real`) or the file-size limit
    (RLIMIT_FSIZE) stops it: exit 5, every line whole, the old lines first and unchanged."""

    def build(d: Path, env: Env) -> Setup:
        inp = _write(d / "aime24.jsonl", INPUT)
        args = ["--n-samples", "300", "--max-workers", "8"]
        if not real:
            out = _write(d / "out.jsonl", GOOD)
            limit = len(GOOD) + 30_000
            return Setup(_infer(env.url, inp, out, *args), out, str(out), limit, whole=out)
        if not env.mounts.tmpfs(d / "full", 64 << 10):
            return Setup([], skip="no tmpfs mount (needs root); RLIMIT_FSIZE case covers it")
        out = _write(d / "full" / "out.jsonl", GOOD)
        return Setup(_infer(env.url, inp, out, *args), out, str(out), whole=out)

    return build


def eval_cache_full(d: Path, env: Env) -> Setup:
    """The verdict cache hits the file-size limit: exit 5, the cache keeps whole lines."""
    rows = [_gen("p1", k, f"\\boxed{{x+{k}}}") for k in range(30)]
    path = _write(d / "aime24_run.jsonl", _rows(*rows))
    cache = Path(f"{path}.verdicts.jsonl")
    return Setup(["eval", str(path), "--no-progress"], path, str(cache), 1_000, whole=cache)


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
    done = subprocess.run(command(setup.argv), capture_output=True, text=True, env=envvars,
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
