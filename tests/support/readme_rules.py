"""The rule tables of docs/verifier.md, read as test data: that page is the one written home
of each normalisation and shape rule's example, and each row is checked."""

from __future__ import annotations

from pathlib import Path

RULES_PAGE = Path(__file__).resolve().parents[2] / "docs" / "verifier.md"
GOLD = "| rule | gold | becomes |"  # gold.normalize_gold: text in, its math span out
SHARED = "| rule | text | becomes |"  # gold.shared_spelling, on both sides
ANSWER = "| rule | answer | gold | becomes |"  # answer.normalize_answer(answer, gold)
SHAPES = "| rule | gold | answer | verdict |"  # shapes.py: the verdict of a shaped gold


def rule_rows(header: str, text: str | None = None) -> list[tuple[str, ...]]:
    """The rows of the table under `header`: the rule's name, then each cell (the text
    of its code span, verbatim; a cell without one as written)."""
    lines = (RULES_PAGE.read_text() if text is None else text).splitlines()
    rows = []
    for line in lines[lines.index(header) + 2 :]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
        rows.append((cells[0], *(_code(cell) for cell in cells[1:])))
    return rows


def _code(cell: str) -> str:
    return cell[1:-1] if len(cell) > 1 and cell[0] == cell[-1] == "`" else cell
