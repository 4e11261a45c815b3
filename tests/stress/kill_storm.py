"""Kill storms: run `infer` or `eval` as real processes, kill them at random moments (SIGKILL,
some SIGTERM/SIGINT), restart until done, and count what was lost, duplicated or left broken.

Used by `bench/stress_kill.py` (50 kills) and `tests/test_kill_storm.py` (a few).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.threaded_server import serve

ROOT = Path(__file__).resolve().parents[2]
AIME24 = ROOT / "data" / "aime24.jsonl"
SIGNALS = {signal.SIGKILL: "SIGKILL", signal.SIGTERM: "SIGTERM", signal.SIGINT: "SIGINT"}


@dataclass
class Storm:
    """What a storm did and found."""

    kills: dict[str, int] = field(default_factory=dict)
    runs: int = 0  # processes started (restarts = runs - 1)
    mid_run: int = 0  # signals sent while work remained
    lost: int = 0  # samples (or verdicts) seen whole once and gone later
    duplicated: int = 0
    unreadable: int = 0  # lines left that are not whole JSON
    final: int = 0
    expected: int = 0
    exit_codes: dict[int, int] = field(default_factory=dict)
    seconds: float = 0.0
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def restarts(self) -> int:
        return max(0, self.runs - 1)


def _env(tag: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "LLMEVAL_STORM": tag}


def read_keys(path: Path, key: tuple[str, ...]) -> tuple[list[tuple], int]:
    """The keys of the whole JSON lines of `path` and the number of unreadable lines (a torn
    unterminated tail counts: it is what a reader would have to skip)."""
    if not path.exists():
        return [], 0
    keys, bad = [], 0
    for line in path.read_bytes().splitlines():
        try:
            row = json.loads(line)
            keys.append(tuple(row[k] for k in key))
        except (ValueError, KeyError, TypeError):
            bad += 1
    return keys, bad


def _storm(
    argv: list[str], watch: Path, key: tuple[str, ...], kills: int, rng: random.Random,
    delay: tuple[float, float], tag: str, expected: int, after: float,
    variants: tuple[tuple[str, ...], ...] = ((),),
) -> Storm:  # fmt: skip
    """Start `argv` again and again, signalling it at a random moment while work remains,
    until `kills` were sent or the work is done; then run it to the end. Snapshots of
    `watch` find lost lines."""
    storm = Storm()
    seen: set[tuple] = set()
    start = time.monotonic()
    while True:
        proc = subprocess.Popen(
            [*argv, *variants[storm.runs % len(variants)]],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=_env(tag),
            text=True,
            preexec_fn=_default_sigint,
        )
        storm.runs += 1
        sent = sum(storm.kills.values())
        if sent < kills and len(set(read_keys(watch, key)[0])) < expected:
            # one in ten a SIGTERM, one in ten a SIGINT (both stop cleanly), else SIGKILL
            sig = {3: signal.SIGTERM, 7: signal.SIGINT}.get(sent % 10, signal.SIGKILL)
            try:
                proc.wait(_moment(proc, watch, rng, delay, after))
            except subprocess.TimeoutExpired:
                proc.send_signal(sig)
                storm.kills[SIGNALS[sig]] = storm.kills.get(SIGNALS[sig], 0) + 1
                if len(set(read_keys(watch, key)[0])) < expected:
                    storm.mid_run += 1
        try:
            _, err = proc.communicate(timeout=600)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise AssertionError(f"{argv[3]} hung for 600 s after a signal") from None
        storm.exit_codes[proc.returncode] = storm.exit_codes.get(proc.returncode, 0) + 1
        if "Traceback" in err:
            raise AssertionError(f"a traceback:\n{err[-2000:]}")
        keys, _ = read_keys(watch, key)
        now = set(keys)
        storm.lost += len(seen - now)
        seen |= now
        if proc.returncode == 0 and len(now) >= expected:  # complete: no more kills either
            break
        if proc.returncode not in (0, 3, 130, -9, -2, -15):
            raise AssertionError(f"exit {proc.returncode}: {err[-1000:]}")
    storm.seconds = time.monotonic() - start
    keys, storm.unreadable = read_keys(watch, key)
    storm.duplicated = len(keys) - len(set(keys))
    storm.final = len(set(keys))
    return storm


def _default_sigint() -> None:
    """A process started in the background (`cmd &`) inherits SIGINT ignored, and Python then
    never raises KeyboardInterrupt: give the child the default, as a terminal would."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def _moment(
    proc: subprocess.Popen[str], watch: Path, rng: random.Random, delay: tuple[float, float],
    after: float,
) -> float:  # fmt: skip
    """How much longer to wait before the signal: one time in five a random moment from the
    start (start-up, reading, resuming); otherwise once the process is writing, a little after
    its next line (mid-work, possibly mid-write)."""
    if rng.random() < 0.2:
        return rng.uniform(*delay)
    before, deadline = _lines(watch), time.monotonic() + 60
    while proc.poll() is None and _lines(watch) <= before and time.monotonic() < deadline:
        time.sleep(0.005)
    return rng.uniform(0, after)


def problems_file(path: Path, count: int) -> Path:
    """The first `count` AIME 2024 problems."""
    lines = AIME24.read_text(encoding="utf-8").splitlines()[:count]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def infer_storm(
    workdir: Path, kills: int = 50, n: int = 8, problems: int = 30, seed: int = 0,
    workers: int = 4, latency: float = 0.1, jitter: float = 0.5,
) -> Storm:  # fmt: skip
    """Kill `infer` (n samples of `problems` problems) `kills` times; restarts alternate
    streamed and whole answers."""
    rng = random.Random(seed)
    inp = problems_file(workdir / "aime24.jsonl", problems)
    out = workdir / "storm.jsonl"
    with serve(latency=latency, latency_jitter=jitter, fault_seed=seed) as srv:
        argv = [sys.executable, "-m", "llmeval", "-q", "infer", "--input", str(inp),
                "--output", str(out), "--base-url", srv.url, "--n-samples", str(n),
                "--max-workers", str(workers), "--retry-delay", "0.05", "--progress", "plain",
                "--progress-interval", "60"]  # fmt: skip
        storm = _storm(argv, out, ("problem_id", "sample_idx"), kills, rng, (0.2, 2.0), "infer",
                       problems * n, 0.3, (("--stream",), ("--no-stream",)))  # fmt: skip
    storm.expected = problems * n
    return storm


def hard_answers(problems: int, n: int, seed: int) -> list[dict]:
    """Generation rows whose answers need math-verify (symbolic, not plain rationals)."""
    rng = random.Random(seed)
    forms = ["x+{k}", "\\sqrt{{{k}}}", "\\frac{{\\pi}}{{{k}}}", "{k}\\sqrt{{2}}", "(1,{k})"]
    rows = []
    for p in range(problems):
        gold = forms[p % len(forms)].format(k=p + 2)
        for idx in range(n):
            answer = gold if rng.random() < 0.5 else rng.choice(forms).format(k=rng.randint(1, 40))
            gen = f"<think>\nworking on {p}\n</think>\n\nSo the answer is $\\boxed{{{answer}}}$."
            rows.append({"problem_id": f"p{p}", "sample_idx": idx, "answer": gold, "gen": gen})
    return rows


def eval_storm(
    workdir: Path, kills: int = 50, problems: int = 60, n: int = 8, seed: int = 0, workers: int = 1
) -> Storm:
    """Kill `eval` with its verdict cache `kills` times; the final verdicts must equal an
    uninterrupted run's. Also counts verifier processes left behind by killed evals."""
    rng = random.Random(seed)
    data = workdir / "aime24_hard.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in hard_answers(problems, n, seed)))
    base = [sys.executable, "-m", "llmeval", "-q", "eval", str(data), "--no-progress",
            "--workers", str(workers)]  # fmt: skip
    reference, final = workdir / "reference.jsonl", workdir / "final.jsonl"
    done = subprocess.run([*base, "--no-cache", "--export-verdicts", str(reference)],
                          capture_output=True, text=True, env=_env("eval-ref"))  # fmt: skip
    if done.returncode != 0:
        raise AssertionError(done.stderr[-2000:])
    cache = Path(f"{data}.verdicts.jsonl")
    tag = f"eval-{uuid.uuid4().hex[:8]}"
    expected = len(set(verdict_keys(data)))
    # verdicts come fast (tens per second): kill soon after a new one, or the work runs out
    storm = _storm(base, cache, ("key",), kills, rng, (0.3, 3.0), tag, expected, 0.05)
    subprocess.run([*base, "--export-verdicts", str(final)], check=True, env=_env(tag),
                   capture_output=True)  # fmt: skip
    status = ("problem_id", "sample_idx", "status")
    ref_rows, final_rows = read_keys(reference, status)[0], read_keys(final, status)[0]
    storm.expected = expected
    storm.extra["verdicts equal to an uninterrupted run"] = sorted(ref_rows) == sorted(final_rows)
    storm.extra["samples"] = len(final_rows)
    time.sleep(2.5)  # orphaned workers notice their eval is gone within about a second
    storm.extra["processes left behind"] = len(tagged_processes(tag))
    return storm


def verdict_keys(path: Path) -> list[str]:
    """The cache keys the samples of a generation file need: each distinct pair sent to the
    verifier, under each policy."""
    from llmeval.evaluate.reading import open_run, read_run
    from llmeval.runs.layout import RunFiles
    from llmeval.verify.verifier import POLICIES, exact_status, verdict_key

    source = read_run(open_run(RunFiles(path, (path,)), None))
    return [
        verdict_key("math", s.gold, s.pred, policy)
        for s in source.samples
        if s.pred is not None and exact_status(s.gold, s.pred) is None
        for policy in POLICIES
    ]


def tagged_processes(tag: str) -> list[int]:
    """Live processes whose environment carries `LLMEVAL_STORM=tag`."""
    found = []
    needle = f"LLMEVAL_STORM={tag}".encode()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if needle in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found
