"""Names a server or a file chose (a model id, a model, subject, level or problem id in rows, a
folder's name) reach no terminal as control characters: infer's messages, eval's table, its
warnings and the lines under it print them with spaces in their place (`terminal.printable`)."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from llmeval.cli.main import main
from tests.support.synthetic import generation, write_jsonl
from tests.support.threaded_server import serve

ROOT = Path(__file__).resolve().parent.parent
# a window title, a cleared screen, a hyperlink, a forged log line, a bidi override, a C1 CSI
HOSTILE = ("m\x1b]0;pwned\x07", "\x1b[2J\x1b[H", "\x1b]8;;http://x\x1b\\l\x1b]8;;\x1b\\",
           "x\r\nllmeval: error: forged", "\u202egnp.exe", "\x9b31m")  # fmt: skip


def unprintable(text: str) -> list[str]:
    """The control, format and surrogate characters in `text`, line ends aside."""
    return [c for c in text.replace("\n", "") if unicodedata.category(c) in ("Cc", "Cf", "Cs")]


def forged(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("llmeval: error: forged")]


def test_printable_turns_control_format_and_surrogate_characters_into_spaces() -> None:
    from llmeval.terminal import printable, printable_copy

    assert printable("a\x1b[2Jb\x07c\nd\u202ee\ud800f\u2028g") == "a [2Jb c d e f g"
    assert printable("Qwen/Qwen3-8B · ½ 日本 é") == "Qwen/Qwen3-8B · ½ 日本 é"  # kept as written
    record = {"m\x1b": ["a\nb", ("c\x07",), 3]}
    assert printable_copy(record) == {"m ": ["a b", ("c ",), 3]}
    assert record == {"m\x1b": ["a\nb", ("c\x07",), 3]}  # (a copy)


def test_a_server_chosen_model_id_prints_no_control_character(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The only model a server lists names the run (infer's messages), then the run in eval's
    table; two such models are listed in infer's error."""
    out = tmp_path / "aime24.jsonl"
    argv = ["infer", "--input", str(ROOT / "data" / "aime24.jsonl"), "--output", str(out),
            "--n-samples", "1", "--progress", "plain"]  # fmt: skip
    with serve(models=("".join(HOSTILE),)) as srv:
        assert main([*argv, "--base-url", srv.url]) == 0
    with serve(models=HOSTILE[:2]) as srv:
        assert main([*argv, "--base-url", srv.url, "--output", str(tmp_path / "o.jsonl")]) == 2
    assert main(["eval", str(out), "--no-progress"]) == 0
    said = capsys.readouterr()
    assert "model: m ]0;pwned  " in said.err and "serves several models (m ]0;pwned" in said.err
    assert json.loads(out.with_name(out.name + ".spec.json").read_text())["model"] == "".join(
        HOSTILE
    )  # written as the server named it
    assert unprintable(said.out + said.err) == [] and forged(said.out + said.err) == []


def test_names_in_files_print_no_control_character_in_tables_warnings_and_notes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file's model, subjects, levels and problem ids, and its folder's name: eval's table,
    the subject and level tables, the lines under them and the warnings (a problem without a
    gold names its id)."""
    folder = tmp_path / "\x1b[2Jrun\x07"
    folder.mkdir()
    rows = [
        generation(f"q{i}{HOSTILE[i % 6]}", j, "7" if i else "", f"\\boxed{{{7 + j}}}",
                   model="".join(HOSTILE), subject=HOSTILE[i % 6], level=HOSTILE[(i + 1) % 6])
        for i in range(6)
        for j in range(2)
    ]  # fmt: skip
    path = write_jsonl(folder / "math500.jsonl", rows[:-1])  # incomplete: a line under the table
    result = tmp_path / "r.json"
    assert main(["eval", str(folder), "--no-progress", "--result-json", str(result)]) == 0
    said = capsys.readouterr()
    assert "math500 · m ]0;pwned" in said.out and "incomplete: math500" in said.out
    assert "have no gold answer" in said.err and "q0m ]0;pwned" in said.err
    assert unprintable(said.out + said.err) == [] and forged(said.out + said.err) == []
    written = json.loads(result.read_text())["tasks"][0]
    assert written["model"] == "".join(HOSTILE) and written["file"] == str(path)
