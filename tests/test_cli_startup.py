"""The command line loads only the named command's modules (a start-up saving for `infer`), and
a Ctrl-C during those imports is a quiet exit."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from llmeval.cli.main import COMMANDS, build_parser, import_holding_ctrl_c


def _loaded_after_parsing(argv: list[str]) -> set[str]:
    code = (
        "import sys; from llmeval.cli.main import build_parser; "
        f"build_parser({argv!r}); print(' '.join(sorted(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(done.stdout.split())


def test_infer_does_not_load_eval_or_report() -> None:
    loaded = _loaded_after_parsing(["-q", "infer", "--input", "x.jsonl"])
    assert "llmeval.cli.infer" in loaded
    assert not {"llmeval.cli.eval", "llmeval.evaluate.run", "llmeval.evaluate.table"} & loaded


def test_eval_does_not_load_infer() -> None:
    loaded = _loaded_after_parsing(["eval", "out.jsonl"])
    assert "llmeval.cli.eval" in loaded and "llmeval.cli.infer" not in loaded


@pytest.mark.parametrize("argv", [[], ["--help"], ["-q"], ["evall"], ["out.jsonl"]])
def test_help_and_unknown_commands_see_every_command(argv: list[str], capsys) -> None:
    parser = build_parser(argv)
    for name in COMMANDS:
        assert name in parser.format_help()


def test_ctrl_c_during_a_command_import_is_held_until_the_import_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Held, the interrupt cannot land inside an extension module's initialisation (where
    pydantic-core turned it into a PanicException: a traceback and exit 1)."""
    (tmp_path / "interrupted_cmd.py").write_text(
        "import os, signal\n"
        "os.kill(os.getpid(), signal.SIGINT)\n"
        "total = sum(range(100_000))  # plenty of bytecode for the interrupt to land in\n"
        "FINISHED = True\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "interrupted_cmd", raising=False)
    with pytest.raises(KeyboardInterrupt):
        import_holding_ctrl_c("interrupted_cmd")
    assert sys.modules["interrupted_cmd"].FINISHED  # the import ran to its end first
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    monkeypatch.delitem(sys.modules, "interrupted_cmd")
