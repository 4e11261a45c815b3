"""The docs hold (issue 42.1): every command in a `bash` block of README.md and docs/*.md runs
as shown, against a folder holding the files the docs name (tests/support/docs_world.py); the
README stays a five-minute page linking every docs page, each of which starts with its command;
docs/results-json.md lists every field of `--result-json`, with its type, and nothing else.

How each command runs: `llmeval ...` in-process (`main(argv)`); `python -m ...` and scripts as
processes; `make TARGET` as `make -n TARGET`. The docs' server address
(`http://127.0.0.1:8000/v1`) is the loopback test server's, the judge's (port 8001) a scripted
judge's. What cannot run here is listed below with the reason, and checked as far as it can be."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from llmeval import records
from llmeval.cli.main import build_parser, main
from tests.infer_helpers import ROOT, rows
from tests.support import docs_world
from tests.support.threaded_server import serve

README = ROOT / "README.md"
PAGES = sorted((ROOT / "docs").glob("*.md"))
SERVER_URL, JUDGE_URL = "http://127.0.0.1:8000/v1", "http://127.0.0.1:8001/v1"
# Scripts that would start a GPU server, ask one, or submit to Slurm: run with DRY_RUN=1, and
# every llmeval command they print is parsed by llmeval's own parser.
DRY_RUN = {
    "scripts/model_server.sh": "starts vLLM, SGLang or llama-server",
    "scripts/run_infer.sh": "asks a GPU server for every task's samples",
    "scripts/slurm/submit.sh": "submits jobs to Slurm",
}
# Modules run for minutes (full-size stress runs): not run; each flag the line shows (in the
# command or its comment) must be one the module's --help lists. Their small versions run in
# make test (tests/test_kill_storm.py, test_fault_run.py, test_hostile.py, test_bad_files.py,
# test_server_run.py, test_judge.py).
NOT_RUN = ("bench.stress_",)
SERVERS = ("tests.support.openai_server",)  # run until they print their address, then stopped


@dataclass(frozen=True)
class Command:
    """One command of a page: its words, the variables set before it, its comment."""

    page: str
    line: int
    env: dict[str, str]
    argv: list[str]
    comment: str

    def __str__(self) -> str:
        return f"{self.page}:{self.line}: {shlex.join(self.argv)}"


def bash_blocks(text: str) -> Iterator[tuple[int, list[str]]]:
    """(first line number, lines) of each ```bash block."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip() == "```bash"]
    for start in starts:
        end = next(i for i in range(start + 1, len(lines)) if lines[i].strip() == "```")
        yield start + 2, lines[start + 1 : end]


def commands(page: Path) -> list[Command]:
    """The commands of a page's bash blocks: continued lines joined, comments apart."""
    found = []
    for first, block in bash_blocks(page.read_text()):
        held: list[str] = []
        for k, line in enumerate(block):
            held.append(line.removesuffix("\\"))
            if line.endswith("\\"):
                continue
            text, at = " ".join(held), first + k - len(held) + 1
            held = []
            words = shlex.split(text, comments=True)
            env = {}
            while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
                name, _, value = words.pop(0).partition("=")
                env[name] = value
            if words:
                found.append(Command(page.name, at, env, words, _comment(text)))
    return found


def _comment(line: str) -> str:
    """What follows the line's first `#` that starts a word outside quotes ('' when none)."""
    quote = ""
    for i, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1].isspace()):
            return line[i + 1 :].strip()
    return ""


def test_the_readme_is_short_and_links_every_docs_page() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= 250, "README.md: a newcomer's page, at most 250 lines"
    linked = set(re.findall(r"\]\(docs/([\w.-]+\.md)(?:#[\w-]+)?\)", text))
    assert linked == {p.name for p in PAGES}, "every docs page linked from the README, no other"
    first = commands(README)[:2]
    assert [c.argv for c in first] == [["make", "demo"], ["make", "test"]]  # the set-up commands


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_each_docs_page_starts_with_its_command(page: Path) -> None:
    lines = [line for line in page.read_text().splitlines() if line.strip()]
    assert lines[0].startswith("# ") and lines[1] == "```bash", (
        f"{page.name}: title, then a command"
    )
    assert commands(page), page.name


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("page", [README, *PAGES], ids=lambda p: p.name)
def test_every_link_of_the_page_leads_somewhere(page: Path) -> None:
    for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
        if target.startswith(("http://", "https://")):
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        assert linked.exists(), f"{page.name}: {target}: no such file"
        if anchor and linked.suffix == ".md":
            headings = re.findall(r"^#+ (.+)$", linked.read_text(), re.M)
            assert anchor in {slug(h) for h in headings}, f"{page.name}: {target}: no such heading"


def test_the_commands_are_read_as_a_shell_would() -> None:
    page = ROOT / "docs" / "cluster.md"
    (submit, dry) = [c for c in commands(page) if c.argv[0] == "scripts/slurm/submit.sh"]
    assert submit.env["SBATCH_ARGS"] == "--partition gpu --account lab"
    assert submit.env["OUTPUT_DIR"] == "/shared/runs/qwen3-8b" and submit.line == 4
    assert dry.comment == "what it would submit and run" and dry.env["DRY_RUN"] == "1"


@dataclass(frozen=True)
class World:
    """The folder every page's commands start from (each page gets a copy), and the addresses
    of the servers standing in for the docs' server and judge."""

    folder: Path
    urls: dict[str, str]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    folder = tmp_path_factory.mktemp("docs-world")
    with serve(answers=docs_world.answers(), accuracy=0.4, models=(docs_world.BASELINE,)) as srv:
        docs_world.draw_runs(folder, srv.url, docs_world.BASELINE)
    judge = ((r"<candidate_answer", "The answers differ.\nJudgement: No"),)
    with (
        serve(answers=docs_world.answers(), accuracy=0.6, models=(docs_world.MODEL,)) as srv,
        serve(judge=judge, models=(docs_world.JUDGE,)) as judge_srv,
    ):
        docs_world.draw_runs(folder, srv.url, docs_world.MODEL)
        docs_world.build(folder)
        yield World(folder, {SERVER_URL: srv.url, JUDGE_URL: judge_srv.url})


@pytest.mark.parametrize("page", [README, *PAGES], ids=lambda p: p.name)
def test_every_command_of_the_page_runs(
    page: Path, world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_page(page, world, tmp_path, monkeypatch)


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("llmeval eval output/Qwen3-8B/aime24.jsonl --no-such-flag", "exit 2"),
        ("DRY_RUN=1 MODEL=Qwen3-8B EXTRA_ARGS=--no-such-flag scripts/run_infer.sh", "refused"),
        ("NO_SUCH_SETTING=1 scripts/get_scores.sh output/Qwen3-8B", "documents NO_SUCH_SETTING"),
        ("python -m bench.stress_kill --kills 3  # --no-such-flag", "lacks ['--no-such-flag']"),
        ("make no-such-target", "No rule to make target"),
        ("llmeval eval output/Qwen3-8B/no-such-task.jsonl", "exit 2"),
    ],
)
def test_a_page_showing_what_does_not_exist_fails(
    line: str, said: str, world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = tmp_path / "page.md"
    page.write_text(f"# A page\n\n```bash\n{line}\n```\n")
    with pytest.raises(AssertionError, match=re.escape(said)):
        run_page(page, world, tmp_path, monkeypatch)


def run_page(page: Path, world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run the page's commands in order in a copy of the world; fail at the first that fails."""
    here = tmp_path / "world"
    shutil.copytree(world.folder, here, symlinks=True)
    monkeypatch.chdir(here)
    monkeypatch.setenv("LLMEVAL_BASE_URL", world.urls[SERVER_URL])
    for command in commands(page):
        _check_settings(command)
        code, said = _run(command, world, here, monkeypatch)
        assert code == 0, f"{command}\nexit {code}\n{said[-3000:]}"


def _run(
    command: Command, world: World, here: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str]:
    """Run one command as its kind runs here; (exit code, what it said)."""
    argv = [world.urls.get(word, word) for word in command.argv]
    if argv[0] == "llmeval":
        for name, value in command.env.items():
            monkeypatch.setenv(name, value)
        try:
            return main(argv[1:]), ""
        except SystemExit as stop:  # argparse: --version, --help, an unknown flag
            return int(stop.code or 0), "(argparse)"
    env = {k: v for k, v in os.environ.items() if k not in ("MODEL", "ENGINE", "TASKS")}
    env.update(command.env, PYTHONPATH=str(ROOT), LLMEVAL=f"{sys.executable} -m llmeval")
    if argv[0] == "make":
        return _proc(["make", "-n", "-C", str(ROOT), *argv[1:]], here, env)
    if argv[0] in ("python", ".venv/bin/python"):
        module = argv[argv.index("-m") + 1]
        if module.startswith(NOT_RUN):
            return _flags_listed(command, module, env)
        if module.startswith(SERVERS):
            return _serve_once([sys.executable, *argv[1:]], here, env)
        cwd = ROOT if module == "pytest" else here
        return _proc([sys.executable, *argv[1:]], cwd, env)
    assert argv[0].startswith("scripts/"), f"{command}: no rule to run this kind of command"
    if argv[0] in DRY_RUN and argv[1:2] != ["stop"]:
        env["DRY_RUN"] = "1"
    code, said = _proc(["bash", *argv], here, env)
    if env.get("DRY_RUN") == "1":
        _parse_llmeval_lines(command, said)
    return code, said


def _proc(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    return done.returncode, done.stdout + done.stderr


def _serve_once(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    """Start a server, read the address it prints first, stop it."""
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        return (0 if first.startswith("http://127.0.0.1:") else 1), first
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _flags_listed(command: Command, module: str, env: dict[str, str]) -> tuple[int, str]:
    """A command that is not run: its flags (and those its comment names) are the module's."""
    code, said = _proc([sys.executable, "-m", module, "--help"], ROOT, env)
    shown = re.findall(r"(?<![\w-])--[a-z][\w-]*", " ".join([*command.argv, command.comment]))
    missing = [flag for flag in shown if not re.search(rf"{flag}(?![\w-])", said)]
    return (code if not missing else 2), f"{module} --help lacks {missing}\n{said}"


def _parse_llmeval_lines(command: Command, said: str) -> None:
    """Each llmeval command a dry run prints is one llmeval's parser takes."""
    for line in said.splitlines():
        if not re.match(r"(\S+ -m )?llmeval ", line):
            continue  # the script's own messages
        words = shlex.split(line, comments=True)
        argv = words[words.index("llmeval") + 1 :]
        try:
            build_parser(argv).parse_args(argv)
        except SystemExit as stop:
            raise AssertionError(
                f"{command}: prints `{line}`, refused (exit {stop.code})"
            ) from None


def _check_settings(command: Command) -> None:
    """A variable set before a script or make is one the scripts document (their comments)."""
    if command.argv[0] == "llmeval" or not command.env:
        return
    documented = " ".join(
        line
        for path in [
            ROOT / "Makefile",
            *(ROOT / "scripts").rglob("*.sh"),
            *(ROOT / "scripts").rglob("*.sbatch"),
        ]
        for line in path.read_text().splitlines()
        if line.lstrip().startswith("#")
    )
    for name in command.env:
        assert re.search(rf"\b{name}\b", documented), f"{command}: no script documents {name}"


# --- docs/results-json.md against the records ---------------------------------------------

RESULTS_PAGE = ROOT / "docs" / "results-json.md"
RECORDS = (records.ScoreReport, records.TaskScore, records.ProblemScore, records.GroupScore,
           records.JudgeScore, records.CacheStats, records.ToolFigures)  # fmt: skip
JSON_NAMES = {str: "string", int: "integer", float: "number", bool: "boolean", Any: "any"}


def type_name(annotation: Any) -> str:
    """How the page writes a field's type: `number or null`, `list of string`, `{string: X}`,
    a record as a link to its table."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        return " or ".join("null" if a is type(None) else type_name(a) for a in args)
    if origin is list:
        return f"list of {type_name(args[0])}"
    if origin is dict:
        return f"{{{type_name(args[0])}: {type_name(args[1])}}}"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"[{annotation.__name__}](#{annotation.__name__.lower()})"
    return JSON_NAMES[annotation]


def field_table(title: str) -> dict[str, str]:
    """{field: type} of the table under `## title`."""
    section = RESULTS_PAGE.read_text().split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]
    cells = [
        line.strip("|").split(" | ") for line in section.splitlines() if line.startswith("| `")
    ]
    return {name.strip().strip("`"): kind.strip() for name, kind, *_ in cells}


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r.__name__)
def test_the_results_page_lists_each_field_of_each_record(record: type[BaseModel]) -> None:
    documented = field_table(record.__name__)
    fields = {name: type_name(info.annotation) for name, info in record.model_fields.items()}
    assert documented == fields


def test_the_results_page_lists_each_field_of_the_export(world: World, tmp_path: Path) -> None:
    export = tmp_path / "verdicts.export.jsonl"
    run = world.folder / "output" / docs_world.MODEL / "aime24.jsonl"
    url = world.urls[JUDGE_URL]
    flags = ["--export-verdicts", str(export), "--no-cache", "--no-progress", "--workers", "1"]
    judged = ["--judge-url", url, "--judge-model", docs_world.JUDGE]
    assert main(["eval", str(run), *flags, *judged]) == 0
    assert {key for row in rows(export) for key in row} == set(field_table("The verdict export"))
