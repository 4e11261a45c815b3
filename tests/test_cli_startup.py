"""The command line loads only the named command's modules (a start-up saving for `infer`)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from llmeval.cli import COMMANDS, build_parser


def _loaded_after_parsing(argv: list[str]) -> set[str]:
    code = (
        "import sys; from llmeval.cli import build_parser; "
        f"build_parser({argv!r}); print(' '.join(sorted(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(done.stdout.split())


def test_infer_does_not_load_eval_or_report() -> None:
    loaded = _loaded_after_parsing(["-q", "infer", "--input", "x.jsonl"])
    assert "llmeval.commands.infer" in loaded
    assert not {"llmeval.commands.eval", "llmeval.evaluate", "llmeval.report"} & loaded


def test_eval_does_not_load_infer() -> None:
    loaded = _loaded_after_parsing(["eval", "out.jsonl"])
    assert "llmeval.commands.eval" in loaded and "llmeval.commands.infer" not in loaded


@pytest.mark.parametrize("argv", [[], ["--help"], ["-q"], ["evall"], ["out.jsonl"]])
def test_help_and_unknown_commands_see_every_command(argv: list[str], capsys) -> None:
    parser = build_parser(argv)
    for name in COMMANDS:
        assert name in parser.format_help()
