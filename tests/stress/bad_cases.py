"""The broken files (`bad_files.Case`s): how each is built; exit 2 = bad input or usage,
5 = output not writable, 0 = handled (a torn last line)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

from tests.stress.bad_files import Case, Env, Setup, command

PROBLEMS = [
    {"id": f"p{i}", "problem": f"What is {i} + {i}?", "answer": str(2 * i)} for i in range(4)
]


def _rows(*rows: object) -> bytes:
    return b"".join((r if isinstance(r, bytes) else json.dumps(r).encode()) + b"\n" for r in rows)


def _gen(pid: str, idx: int, gen: str = "so \\boxed{2}", answer: object = "2") -> dict:
    return {"problem_id": pid, "sample_idx": idx, "answer": answer, "gen": gen}


GOOD = _rows(*[_gen(p["id"], k, answer=p["answer"]) for p in PROBLEMS for k in (0, 1)])
INPUT = _rows(*PROBLEMS)
NAN = float("nan")
DEEP = b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
HUGE = b"x" * (8 << 20)  # an 8 MB line that is not JSON
BINARY = bytes(range(256)) * 64


def _infer(url: str, inp: Path, out: Path, *extra: str) -> list[str]:
    return ["infer", "--input", str(inp), "--output", str(out), "--base-url", url,
            "--n-samples", "3", "--retry-delay", "0.01", "--progress", "plain", *extra]  # fmt: skip


def _write(path: Path, content: bytes) -> Path:
    path.write_bytes(content)
    return path


def infer_input(
    content: bytes, line: int | None, folder: bool = False
) -> Callable[[Path, Env], Setup]:
    """`infer` on a broken problems file (or a folder); the existing output must not change."""

    def build(d: Path, env: Env) -> Setup:
        out = _write(d / "out.jsonl", GOOD)
        inp = d / "aime24.jsonl"
        inp.mkdir() if folder else _write(inp, content)
        return Setup(_infer(env.url, inp, out), out, f"{inp}:{line}" if line else str(inp))

    return build


def infer_output(content: bytes, line: int | None) -> Callable[[Path, Env], Setup]:
    """`infer` resuming a broken output file, which must not change."""

    def build(d: Path, env: Env) -> Setup:
        inp, out = _write(d / "aime24.jsonl", INPUT), _write(d / "out.jsonl", content)
        return Setup(_infer(env.url, inp, out), out, f"{out}:{line}" if line else str(out))

    return build


def judged(
    cmd: str, content: bytes, line: int | None, *flags: str, folder: bool = False
) -> Callable[[Path, Env], Setup]:
    """`eval` or `report` on a broken generation file (which must not change), or on a
    folder holding only a non-generation file."""

    def build(d: Path, env: Env) -> Setup:
        path = _write(d / "aime24_run.jsonl", content)
        extra = [*flags, "--out", str(d / "r.html")] if cmd == "report" else [*flags]
        if folder:
            (d / "sub").mkdir()
            _write(d / "sub" / "notes.txt", b"not jsonl")
            return Setup([cmd, str(d / "sub"), "--no-progress", *extra], path, str(d / "sub"))
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
        elif what == "export":
            row = b'{"problem_id": "p1", "status": "correct", "correct": true, "pred": "1"}\n'
            export = _write(ro / "v.jsonl", row)  # an earlier export (another file: refused)
            setup = Setup(["eval", str(gen), "--no-progress", "--export-verdicts", str(export)],
                          export, str(export))  # fmt: skip
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


def export_full(d: Path, env: Env) -> Setup:
    """The verdict export hits the file-size limit: exit 5, the earlier export unchanged."""
    path = _write(d / "aime24_run.jsonl", _rows(*[_gen(f"q{i}", 0) for i in range(200)]))
    export = _write(d / "v.jsonl", b'{"an": "earlier export"}\n')
    argv = ["eval", str(path), "--no-progress", "--export-verdicts", str(export)]
    return Setup(argv, export, str(export), fsize=5_000)


def eval_cache_full(d: Path, env: Env) -> Setup:
    """The verdict cache hits the file-size limit: the scores are still printed (exit 0) with a
    warning naming the cache, which keeps whole lines."""
    rows = [_gen("p1", k, f"\\boxed{{x+{k}}}") for k in range(30)]
    path = _write(d / "aime24_run.jsonl", _rows(*rows))
    cache = Path(f"{path}.verdicts.jsonl")
    return Setup(["eval", str(path), "--no-progress"], path, str(cache), 1_000, whole=cache)


def folder_unmakeable(how: str) -> Callable[[Path, Env], Setup]:
    """infer's output folder cannot be created: under a file, or on a read-only disk."""

    def build(d: Path, env: Env) -> Setup:
        inp = _write(d / "aime24.jsonl", INPUT)
        if how == "file":
            folder = _write(d / "notes.txt", b"a file") / "run"
            return Setup(_infer(env.url, inp, folder / "out.jsonl"), inp, str(folder))
        ro = _read_only(d, env)
        if ro is None:
            return Setup([], skip="no read-only folder: root without tmpfs mounts")
        env.mounts.make_read_only(ro)
        return Setup(_infer(env.url, inp, ro / "run" / "out.jsonl"), inp, str(ro / "run"))

    return build


def not_writable(d: Path, env: Env) -> Setup:
    """The output refuses writes, as a file of another user would: exit 5, unchanged."""
    inp, out = _write(d / "aime24.jsonl", INPUT), _write(d / "out.jsonl", GOOD)
    env.mounts.freeze(out)
    return Setup(_infer(env.url, inp, out), out, str(out))


def full_unterminated(d: Path, env: Env) -> Setup:
    """The output's whole last line lacks its newline and the disk is full: exit 5, unchanged."""
    rows = _rows(*[_gen(p["id"], k, answer=p["answer"]) for p in PROBLEMS for k in range(40)])
    inp, out = _write(d / "aime24.jsonl", INPUT), _write(d / "out.jsonl", rows[:-1])
    argv = _infer(env.url, inp, out, "--n-samples", "41")
    return Setup(argv, out, str(out), fsize=len(rows) - 1)


def spec_unusable(cmd: str, how: str) -> Callable[[Path, Env], Setup]:
    """The run spec beside the file is a folder, or unreadable: exit 2 naming it."""

    def build(d: Path, env: Env) -> Setup:
        if how == "unreadable" and os.geteuid() == 0:
            return Setup([], skip="root reads any file")
        out = _write(d / "aime24_run.jsonl", GOOD)
        spec = Path(f"{out}.spec.json")
        spec.mkdir() if how == "folder" else _write(spec, b"{}").chmod(0)
        argv = ["eval", str(out), "--no-progress"]
        if cmd == "infer":
            argv = _infer(env.url, _write(d / "aime24.jsonl", INPUT), out)
        return Setup(argv, out, str(spec))

    return build


def fifo(what: str) -> Callable[[Path, Env], Setup]:
    """A named pipe where a file belongs (infer's input or output, eval's file or cache): one
    line naming it, never a hang."""

    def build(d: Path, env: Env) -> Setup:
        inp, out = d / "aime24.jsonl", d / "out.jsonl"
        pipe = {"input": inp, "output": out, "eval": out, "cache": Path(f"{out}.verdicts.jsonl")}
        os.mkfifo(pipe[what])
        if what == "input":
            _write(out, GOOD)
        elif what != "eval":
            _write(inp if what == "output" else out, INPUT if what == "output" else GOOD)
        if what in ("eval", "cache"):
            return Setup(
                ["eval", str(out), "--task", "aime24", "--no-progress"], None, str(pipe[what])
            )
        watched = out if what == "input" else inp
        return Setup(_infer(env.url, inp, out), watched, str(pipe[what]))

    return build


def not_utf8_names(cmd: str) -> Callable[[Path, Env], Setup]:
    """File names that are not UTF-8 (bytes 0xff) work: infer writes its spec, eval its result."""

    def build(d: Path, env: Env) -> Setup:
        name = os.fsdecode(b"aime24_\xff.jsonl")
        if cmd == "infer":
            inp = _write(d / os.fsdecode(b"in\xff.jsonl"), INPUT)
            return Setup(_infer(env.url, inp, d / name, "--task", "aime24"), inp)
        path = _write(d / name, GOOD)
        return Setup(["eval", str(path), "--no-progress", "--result-json", str(d / "r.json")], path)

    return build


P0, P1, *_ = INPUT.splitlines(keepends=True)


def forged_cache_line(fields: dict) -> Callable[[Path, Env], Setup]:
    """A verdict cache line someone forged (a NaN deadline was reused under any --timeout):
    one error naming the cache's line, the cache unchanged."""

    def build(d: Path, env: Env) -> Setup:
        path = _write(d / "aime24_run.jsonl", _rows(_gen("p1", 0, "\\boxed{x+1}")))
        line = {"key": "a" * 32, "status": "timeout", "pred": "x+1", "gold": "2"} | fields
        cache = _write(Path(f"{path}.verdicts.jsonl"), _rows(line))
        return Setup(["eval", str(path), "--no-progress"], cache, f"{cache}:1")

    return build


def output_over(cmd: str, flag: str, kind: str) -> Callable[[Path, Env], Setup]:
    """An output flag naming another run's generation file, run spec or verdict cache (any
    name): refused, the file unchanged."""

    def build(d: Path, env: Env) -> Setup:
        gen = _write(d / "aime24_run.jsonl", GOOD)
        other = {"rows": GOOD, "spec": b'{\n  "model": "m",\n  "n_samples": 2\n}\n',
                 "verdicts": b'{"key": "a", "status": "correct"}\n'}[kind]  # fmt: skip
        target = _write(d / "keep.dat", other)
        return Setup([cmd, str(gen), "--no-progress", flag, str(target)], target, str(target))

    return build


G0, G1, G2, *_ = GOOD.splitlines(keepends=True)
WRONG_TYPE = json.dumps({**PROBLEMS[2], "answer": ["4"]}).encode() + b"\n"
NO_ANSWER = json.dumps({"id": "p9", "problem": "What?"}).encode() + b"\n"
GEN_DICT = json.dumps({"problem_id": "p1", "sample_idx": 2, "answer": "2", "gen": {}}).encode()
NO_GOLD = json.dumps({"problem_id": "p1", "sample_idx": 2, "gen": "\\boxed{2}"}).encode()
LM_EVAL = b'{"doc_id": 0, "doc": {"answer": "2"}, "resps": [["\\boxed{2}"]], "target": "2"}\n'
GOLD_ROW = b'{"problem_id": "p1", "sample_idx": 0, "gold": "2", "gen": "\\boxed{2}"}\n'
BAD_IDX = json.dumps({"problem_id": "p1", "sample_idx": "two", "answer": "2", "gen": ""}).encode()

CASES = [
    # infer: the problems file
    Case("infer: empty input", infer_input(b"", None), 2),
    Case("infer: binary input", infer_input(BINARY, 1), 2),
    Case(
        "infer: non-JSON line in the middle of the input", infer_input(P0 + b"{oops\n" + P1, 2), 2
    ),
    Case("infer: wrong type (answer a list)", infer_input(P0 + P1 + WRONG_TYPE, 3), 2),
    Case("infer: missing key (no answer)", infer_input(P0 + NO_ANSWER, 2), 2),
    Case("infer: duplicate ids", infer_input(P0 + P1 + P0, 3), 2),
    Case("infer: an 8 MB non-JSON line", infer_input(P0 + HUGE + b"\n" + P1, 2), 2),
    Case("infer: JSON nested 100,000 deep", infer_input(P0 + DEEP + b"\n" + P1, 2), 2),
    Case("infer: a JSON array, not objects", infer_input(P0 + b"[1, 2]\n", 2), 2),
    # infer: the output it resumes
    Case("infer: broken line inside the output", infer_output(G0 + b"{torn\n" + G1, 2), 2),
    Case("infer: wrong type inside the output", infer_output(G0 + BAD_IDX + b"\n" + G1, 2), 2),
    Case("infer: binary output", infer_output(BINARY, 1), 2),
    Case(
        "infer: torn last line of the output", infer_output(G0 + G1 + G2[:30], None), 0, torn=True
    ),
    Case("infer: a spec that does not match", spec_mismatch, 2),
    Case("infer: a broken spec", broken_spec, 2),
    Case("infer: read-only output folder", read_only("infer"), 5),
    Case("infer: disk full (64 KB tmpfs)", disk_full(real=True), 5),
    Case("infer: file-size limit (EFBIG)", disk_full(real=False), 5),
    # eval
    Case("eval: empty file", judged("eval", b"", None), 2),
    Case("eval: binary file", judged("eval", BINARY, 1), 2),
    Case("eval: non-JSON line in the middle", judged("eval", G0 + b"nope\n" + G1, 2), 2),
    Case("eval: wrong type (gen an object)", judged("eval", G0 + GEN_DICT + b"\n", 2), 2),
    Case(
        "eval: a row without a gold (ungraded, named)",
        judged("eval", G0 + G1 + NO_GOLD + b"\n", None),
        0,
    ),
    Case("eval: an 8 MB non-JSON line", judged("eval", G0 + HUGE + b"\n" + G1, 2), 2),
    Case(
        "eval: JSON nested 100,000 deep (custom keys)",
        judged("eval", GOLD_ROW + DEEP + b"\n", 2, "--answer-key", "gold"),
        2,
    ),
    Case("eval: torn last line", judged("eval", G0 + G1 + G2[:25], None), 0),
    Case("eval: duplicate (problem, sample) rows", judged("eval", G0 + G1 + G0, 3), 0),
    Case("eval: a folder without generation files", judged("eval", b"", None, folder=True), 2),
    Case("infer: the input is a folder", infer_input(b"", None, folder=True), 2),
    Case("report: empty file", judged("report", b"", None), 2),
    Case("eval: a broken spec beside the file", eval_broken_spec, 2),
    Case("eval: broken line in the verdict cache", eval_broken_cache, 2),
    Case("eval: read-only folder for the cache (scores, a warning)", read_only("cache"), 0),
    Case("eval: read-only folder for --result-json", read_only("result"), 5),
    Case("eval: read-only folder for --export-verdicts", read_only("export"), 5),
    Case("eval: --export-verdicts hits the file-size limit", export_full, 5),
    Case("eval: verdict cache hits the file-size limit", eval_cache_full, 0),
    # folders, permissions, pipes, full disks and names that are not UTF-8
    Case("infer: output folder under a file", folder_unmakeable("file"), 5),
    Case("infer: output folder on a read-only disk", folder_unmakeable("read-only"), 5),
    Case("infer: output not writable (another user's)", not_writable, 5),
    Case("infer: full disk, last line without its newline", full_unterminated, 5),
    Case("infer: the spec is a folder", spec_unusable("infer", "folder"), 2),
    Case("infer: the spec is unreadable", spec_unusable("infer", "unreadable"), 2),
    Case("infer: the input is a FIFO", fifo("input"), 2),
    Case("infer: the output is a FIFO", fifo("output"), 2),
    Case("infer: file names that are not UTF-8", not_utf8_names("infer"), 0),
    Case("eval: the spec is a folder", spec_unusable("eval", "folder"), 2),
    Case("eval: the spec is unreadable", spec_unusable("eval", "unreadable"), 2),
    Case("eval: the file is a FIFO", fifo("eval"), 2),
    Case("eval: the verdict cache is a FIFO", fifo("cache"), 2),
    Case("eval: a file name that is not UTF-8", not_utf8_names("eval"), 0),
    Case("eval: a cached timeout whose deadline is NaN", forged_cache_line({"timeout_s": NAN}), 2),
    Case("eval: a cached deadline written as text", forged_cache_line({"timeout_s": "600"}), 2),
    Case("eval: a cached verdict of an unknown status", forged_cache_line({"status": "yes"}), 2),
    Case(
        "eval: --result-json names another run's rows",
        output_over("eval", "--result-json", "rows"),
        2,
    ),
    Case(
        "eval: --export-verdicts names a run spec",
        output_over("eval", "--export-verdicts", "spec"),
        2,
    ),
    Case(
        "eval: a dotted key with a digit int cannot read (resps.0.²)",
        judged("eval", LM_EVAL, 1, "--response-key", "resps.0.²"),
        2,
    ),
    # report
    Case("report: --out names a verdict cache", output_over("report", "--out", "verdicts"), 2),
    Case("report: non-JSON line in the middle", judged("report", G0 + b"nope\n" + G1, 2), 2),
    Case("report: binary file", judged("report", BINARY, 1), 2),
    Case("report: read-only folder for --out", read_only("report"), 5),
]
