"""The rule tables, read as test data: those of docs/verifier.md (the one written home of each
normalisation, shape and verdict rule's example) and test_verdict_semantics.ROWS; each row is
checked, kept in the verdict ledger and fed to bench/fuzz_verify.py."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RULES_PAGE = ROOT / "docs" / "verifier.md"
SEMANTICS = ROOT / "tests" / "test_verdict_semantics.py"
GOLD = "| rule | gold | becomes |"  # gold.normalize_gold: text in, its math span out
SHARED = "| rule | text | becomes |"  # gold.shared_spelling, on both sides
ANSWER = "| rule | answer | gold | becomes |"  # answer.normalize_answer(answer, gold)
SHAPES = "| rule | gold | answer | verdict |"  # shapes.py: the verdict of a shaped gold
VERDICTS = "| rule | gold | answer | strict | lenient |"  # verify: both policies' verdicts
TABLES = {"gold": GOLD, "shared": SHARED, "answer": ANSWER, "shape": SHAPES, "verdict": VERDICTS}


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


def page_rules(text: str) -> dict[str, list[tuple[str, ...]]]:
    """The rows of each rule table a page holds, by table ("gold", "shared", ...)."""
    lines = text.splitlines()
    return {kind: rule_rows(h, text) if h in lines else [] for kind, h in TABLES.items()}


def rule_pairs(rules: dict[str, list[tuple[str, ...]]]) -> list[tuple[str, str, str, str]]:
    """The (table, rule, gold, answer) pairs of rule rows: a gold against itself and what it
    becomes; a spelling against its rewriting, either way; an answer against its gold, before
    and after its rewriting; a shaped gold against its answer; a verdict row's pair."""
    pairs: list[tuple[str, str, str, str]] = []
    for name, text, out in rules.get("gold", []):
        pairs += [("gold", name, text, text)]
        pairs += [("gold", name, text, out.strip("$"))] if out != "None" else []
    for name, text, out in rules.get("shared", []):
        pairs += [("shared", name, text, out), ("shared", name, out, text)]
        pairs += [("shared", name, text, text)]
    for name, answer, gold, out in rules.get("answer", []):
        pairs += [("answer", name, gold, answer), ("answer", name, gold, out)]
    for table in ("shape", "verdict"):
        pairs += [(table, row[0], row[1], row[2]) for row in rules.get(table, [])]
    return list(dict.fromkeys(pairs))


def semantic_rows(path: Path = SEMANTICS) -> list[tuple[str, str, str, str, str]]:
    """(gold, answer, policy, expected, why) of test_verdict_semantics.ROWS, read without
    importing (an older tree's file too)."""
    names = {"S": "strict", "L": "lenient", "OK": "correct", "NO": "incorrect"}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "ROWS":
            rows = []
            for elt in node.value.elts:  # type: ignore[attr-defined]
                gold, answer, policy, expected, why = elt.elts
                rows.append(
                    (
                        ast.literal_eval(gold),
                        ast.literal_eval(answer),
                        names[policy.id],
                        names[expected.id],
                        ast.literal_eval(why),
                    )
                )
            return rows
    raise ValueError(f"{path}: no ROWS")
