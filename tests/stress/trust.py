"""What llmeval must not take on trust (a fast version runs in `tests/test_stress_trust.py`,
the full one in `bench/stress_trust.py`): API keys a server quotes back, names built to drive a
terminal, and verdict caches someone else wrote. Each part runs the real command line as
processes against the loopback server and returns its figures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.synthetic import generation, write_jsonl
from tests.support.threaded_server import serve

ROOT = Path(__file__).resolve().parents[2]
AIME = ROOT / "data" / "aime24.jsonl"
KEY = "sk-stress-TRUST-0e9d8c7b6a5f"

# Names that drive a terminal or forge a line: clear screen, window title (BEL and ST), an
# OSC 8 hyperlink, an OSC 52 clipboard write, DCS, C1 controls, a carriage return that rewrites
# the line, a forged log line, bidi overrides and isolates, zero-width and tag characters,
# line and paragraph separators, NUL, backspace, DEL, a byte-order mark mid-text.
NAMES = (
    "\x1b[2J\x1b[3J\x1b[H", "\x1b]0;pwned\x07", "\x1b]2;pwned\x1b\\",
    "\x1b]8;;http://evil/\x1b\\link\x1b]8;;\x1b\\", "\x1b]52;c;cm0gLXJmIH4=\x07", "\x1bPq#0\x1b\\",
    "\x9b2J\x9d0;pwned\x9c", "safe\rEVIL", "x\nllmeval: error: forged", "\u202egnp.exe",
    "\u2066iso\u2069", "zero\u200bwidth\u200d", "tag\U000e0041\U000e007f", "a\u2028b\u2029c",
    "nul\x00byte", "back\x08\x08", "del\x7f", "bom\ufeffmid",
)  # fmt: skip


@dataclass
class Figures:
    """What one part saw; `problems` lists every check that failed."""

    part: str
    runs: int = 0  # command-line processes
    scanned: int = 0  # streams and files searched
    counts: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def llmeval(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200", **(env or {})}
    return subprocess.run([sys.executable, "-m", "llmeval", *argv], capture_output=True,
                          text=True, errors="replace", env=full, timeout=600)  # fmt: skip


def unprintable(text: str) -> int:
    """Control, format and surrogate characters in `text`, line ends aside."""
    cats = ("Cc", "Cf", "Cs", "Zl", "Zp")
    return sum(unicodedata.category(c) in cats for c in text.replace("\n", ""))


def _infer(url: str, out: Path, *extra: str) -> list[str]:
    return ["infer", "--input", str(AIME), "--output", str(out), "--base-url", url, "--n-samples",
            "1", "--progress", "plain", "--max-retries", "1", *extra]  # fmt: skip


def echoed_keys(folder: Path, rounds: int = 1) -> Figures:
    """A gateway's 401 quoting the Authorization header and the key: for --api-key,
    $OPENAI_API_KEY, --judge-api-key, $LLMEVAL_JUDGE_API_KEY, run_infer.sh (its log) and a
    key in the URL, streamed and not, the key appears in no stream and no file written."""
    fig = Figures("echoed keys")
    texts: list[str] = []
    wrong = KEY + "-wrong"
    with serve(api_key=KEY, echo_auth=True) as srv:
        ok = folder / "aime24.jsonl"
        assert llmeval(*_infer(srv.url, ok, "--api-key", KEY)).returncode == 0
        for i in range(rounds):
            for stream in ("--stream", "--no-stream"):
                out = folder / f"o{i}{stream}.jsonl"
                url = srv.url.replace("http://", f"http://u:{wrong}@")
                runs = [
                    llmeval(*_infer(srv.url, out, stream, "--api-key", wrong)),
                    llmeval(*_infer(srv.url, out, stream), env={"OPENAI_API_KEY": wrong}),
                    llmeval(*_infer(url, out, stream), env={"OPENAI_API_KEY": wrong}),
                ]
                judge = ["eval", str(ok), "--judge-url", srv.url, "--judge-model", "test-model",
                         "--no-progress", "--result-json", str(folder / f"r{i}.json")]  # fmt: skip
                runs += [llmeval(*judge, "--judge-api-key", wrong),
                         llmeval(*judge, env={"LLMEVAL_JUDGE_API_KEY": wrong})]  # fmt: skip
                fig.runs += len(runs)
                exits = sorted({r.returncode for r in runs})
                if exits != [4]:
                    fig.problems.append(f"exit codes {exits}, expected 4")
                texts += [t for r in runs for t in (r.stdout, r.stderr)]
        script = _run_infer(folder, srv.url, wrong)
        fig.runs += 1
        texts += [script.stdout, script.stderr]
    texts += [p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file()]
    fig.scanned = len(texts)
    fig.counts["leaks"] = sum(wrong in t for t in texts)
    fig.counts["quoted and hidden"] = sum("Bearer ***" in t for t in texts)
    if fig.counts["leaks"]:
        fig.problems.append(f"the key shows in {fig.counts['leaks']} streams or files")
    return fig


def _run_infer(folder: Path, url: str, key: str) -> subprocess.CompletedProcess[str]:
    data = folder / "data"
    data.mkdir(exist_ok=True)
    (data / "aime24.jsonl").write_bytes(AIME.read_bytes())
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TASKS": "aime24", "N_SAMPLES": "1",
           "INPUT_DIR": str(data), "OUTPUT_DIR": str(folder / "script"), "BASE_URLS": url,
           "MODEL": "test-model", "OPENAI_API_KEY": key, "EXTRA_ARGS": f"--api-key {key}",
           "LLMEVAL": f"{sys.executable} -m llmeval"}  # fmt: skip
    return subprocess.run(["bash", str(ROOT / "scripts" / "run_infer.sh")], env=env,
                          capture_output=True, text=True, timeout=600)  # fmt: skip


def terminal_names(folder: Path, names: tuple[str, ...] = NAMES) -> Figures:
    """Every hostile name as a server's model id (infer's messages, then eval's table), and as
    a file's model, subject, level and problem id and a folder's name (eval's and report's
    tables, notes and warnings, eval --follow's lines): no control character printed, no
    forged line; the JSON result keeps each name as written."""
    fig = Figures("terminal names")
    texts: list[str] = []
    for i, name in enumerate(names):
        out = folder / f"served{i}" / "aime24.jsonl"
        with serve(models=(f"m{name}",)) as srv:
            texts += _streams(fig, llmeval(*_infer(srv.url, out)))
        texts += _streams(fig, llmeval("eval", str(out), "--no-progress"))
    rows = [
        generation(f"q{i}{name}", j, "7" if i % 3 else "", f"\\boxed{{{7 + j}}}",
                   model=f"m{name}", subject=name, level=names[(i + 1) % len(names)])
        for i, name in enumerate(names)
        for j in range(2)
    ]  # fmt: skip
    usable = [n for n in names if "/" not in n and "\x00" not in n]  # (in a file name)
    files = folder / ("files" + "".join(usable[:6]))  # (a folder's name, ESC and all)
    complete = folder / ("done" + "".join(usable[6:12])) / "math500.jsonl"
    complete.parent.mkdir()
    files.mkdir()
    path = write_jsonl(files / "math500.jsonl", rows[:-1])  # incomplete: a line under the table
    result = folder / "r.json"
    texts += _streams(fig, llmeval("eval", str(files), "--no-progress", "--result-json",
                                   str(result)))  # fmt: skip
    write_jsonl(complete, rows)  # (--follow ends once every run is complete)
    texts += _streams(fig, llmeval("eval", str(complete), "--no-progress", "--follow", "0.1"))
    texts += _streams(fig, llmeval("report", str(path), "--out", str(folder / "r.html")))
    written = json.loads(result.read_text())["tasks"][0]
    if written["model"] != f"m{names[0]}":
        fig.problems.append("the JSON result does not keep the model as written")
    fig.scanned = len(texts)
    fig.counts["unprintable characters printed"] = sum(map(unprintable, texts))
    fig.counts["forged lines"] = sum(
        ln.startswith("llmeval: error: forged") for t in texts for ln in t.splitlines()
    )
    for what, n in fig.counts.items():
        if n:
            fig.problems.append(f"{n} {what}")
    return fig


def _streams(
    fig: Figures, done: subprocess.CompletedProcess[str], code: int | None = 0
) -> list[str]:
    fig.runs += 1
    if code is not None and done.returncode != code:
        fig.problems.append(f"exit {done.returncode}: {done.stderr.strip()[-200:]!r}")
    if "Traceback" in done.stderr:
        fig.problems.append("a traceback: " + done.stderr.strip().splitlines()[-1][:200])
    return [done.stdout, done.stderr]


def _forged_lines(pairs: list[tuple[str, str]], **fields: Any) -> str:
    """Cache lines anyone can write: the keys are public functions of the pairs."""
    from llmeval.verify.verifier import POLICIES, verdict_key, verifier_id

    lines = []
    for gold, answer in pairs:
        for policy in POLICIES:
            key, made = verdict_key("math", gold, answer, policy), verifier_id("math", policy)
            line = {"key": key, "status": "correct", "pred": answer, "gold": gold, "verifier": made}
            lines.append(json.dumps(line | fields) + "\n")
    return "".join(lines)


# A cache line's fields as someone may forge them: each must be one error naming the line.
HOSTILE_FIELDS: tuple[dict[str, Any], ...] = (
    {"status": "timeout", "timeout_s": float("nan")}, {"status": "timeout", "timeout_s": 1e400},
    {"status": "timeout", "timeout_s": float("-inf")}, {"status": "timeout", "timeout_s": 0},
    {"status": "timeout", "timeout_s": -600}, {"status": "timeout", "timeout_s": "600"},
    {"status": "timeout", "timeout_s": True}, {"status": "CORRECT"}, {"status": "yes"},
    {"status": None}, {"status": 1}, {"key": 7}, {"key": None}, {"pred": 7}, {"gold": ["7"]},
    {"detail": {"a": 1}}, {"verifier": 3}, {"mac": 12},
)  # fmt: skip
FINALS = ["x+2", "x-1", "x+1", "2x", "x+1", "x+3"]  # 2 of 6 right; five distinct answers


def forged_caches(folder: Path, evals: int = 2) -> Figures:
    """Caches someone else wrote: one of forged `correct` verdicts beside the results (used,
    and named under the table with its count; --no-cache scores without it), forged seals and
    an edited sealed line (counted as not written here), every hostile field (one error naming
    the line, exit 2), and another verifier version's verdicts kept over `evals` evals."""
    fig = Figures("forged caches")
    rows = [generation("p", i, "x+1", f"So $\\boxed{{{f}}}$.") for i, f in enumerate(FINALS)]
    path = write_jsonl(folder / "math500_f.jsonl", rows)
    cache = Path(f"{path}.verdicts.jsonl")
    wrong = sorted({("x+1", f) for f in FINALS if f != "x+1"})
    cache.write_text(_forged_lines(wrong) + _forged_lines([("x+1", "2x")], mac="0" * 32))
    forged = _result(fig, folder, path)
    clean = _result(fig, folder, path, "--no-cache")
    fig.counts["accuracy with the forged cache"] = forged["tasks"][0]["accuracy"]
    fig.counts["without it (--no-cache)"] = clean["tasks"][0]["accuracy"]
    fig.counts["named verdicts"] = forged["cache"]["foreign"].get(str(cache), 0)
    if fig.counts["named verdicts"] != 2 * len(wrong) or clean["tasks"][0]["n_correct"] != 2:
        fig.problems.append(f"forged verdicts not all named: {forged['cache']['foreign']}")
    own = write_jsonl(folder / "math500_own.jsonl", rows)
    _result(fig, folder, own)
    sealed = Path(f"{own}.verdicts.jsonl")
    lines = sealed.read_text().splitlines()
    edited = next(i for i, line in enumerate(lines) if '"incorrect"' in line)
    lines[edited] = lines[edited].replace('"incorrect"', '"correct"')  # its seal kept
    sealed.write_text("\n".join(lines) + "\n")
    named = _result(fig, folder, own)["cache"]["foreign"]
    fig.counts["edited sealed lines named"] = f"{named.get(str(sealed), 0)} of 1"
    if named != {str(sealed): 1}:
        fig.problems.append(f"an edited line: {named}")
    refused = 0
    for i, fields in enumerate(HOSTILE_FIELDS):
        bad = write_jsonl(folder / f"math500_h{i}.jsonl", rows[:1])
        Path(f"{bad}.verdicts.jsonl").write_text(_forged_lines([("x+1", "x+2")], **fields))
        done = llmeval("eval", str(bad), "--no-progress")
        fig.runs += 1
        error = done.stderr.strip().splitlines()[-1:] or [""]
        if done.returncode == 2 and f"{bad}.verdicts.jsonl:1: " in error[0]:
            refused += 1
        else:
            fig.problems.append(f"{fields}: exit {done.returncode}, {error[0][:160]!r}")
    fig.counts["hostile lines refused"] = f"{refused} of {len(HOSTILE_FIELDS)}"
    fig.counts["other versions' verdicts kept"] = _other_versions_kept(fig, folder, rows, evals)
    return fig


def _result(fig: Figures, folder: Path, path: Path, *extra: str) -> dict[str, Any]:
    result = folder / "result.json"
    done = llmeval("eval", str(path), "--no-progress", "--result-json", str(result), *extra)
    fig.runs += 1
    if done.returncode != 0:
        fig.problems.append(f"eval {path.name}: exit {done.returncode}: {done.stderr[-200:]!r}")
        return {"tasks": [{"accuracy": None, "n_correct": None}], "cache": {"foreign": {}}}
    return json.loads(result.read_text())


def _other_versions_kept(fig: Figures, folder: Path, rows: list[Any], evals: int) -> str:
    """A cache shared with an older and a newer verifier version: their lines are all still
    there after `evals` evals of this version."""
    from llmeval.records import Verdict, cache_key
    from llmeval.verify.verifier import POLICY_IDS, verifier_id

    path = write_jsonl(folder / "math500_v.jsonl", rows)
    _result(fig, folder, path)
    cache = Path(f"{path}.verdicts.jsonl")
    theirs = []
    for line in cache.read_text().splitlines():
        verdict = Verdict.model_validate_json(line)
        for version in ("strict-last-box-v1", "strict-last-box-v99"):
            made = verifier_id("math", "strict").replace(POLICY_IDS["strict"], version)
            key = cache_key(made, "math", verdict.gold or "", verdict.pred or "")
            old = Verdict(key=key, status="correct", pred=verdict.pred, gold=verdict.gold,
                          verifier=made)  # fmt: skip
            theirs.append(old.model_dump_json(exclude_none=True))
    with cache.open("a") as handle:
        handle.write("".join(line + "\n" for line in dict.fromkeys(theirs)))
    for _ in range(evals):
        _result(fig, folder, path)
    left = set(cache.read_text().splitlines())
    kept = sum(line in left for line in dict.fromkeys(theirs))
    if kept != len(dict.fromkeys(theirs)):
        fig.problems.append(f"other versions' verdicts lost: {kept} of {len(set(theirs))} kept")
    return f"{kept} of {len(dict.fromkeys(theirs))} after {evals} evals"


PARTS = (echoed_keys, terminal_names, forged_caches)
