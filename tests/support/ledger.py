"""The verdict ledger, tests/data/verdict_ledger.jsonl: every verdict llmeval decided on
purpose, one JSON line each (gold, answer, source, the verdicts of both policies): the rows of
the rule tables (docs/verifier.md and test_verdict_semantics.ROWS), every public gold boxed
verbatim (public_golds.json, what test_verify_properties checks) and the cases of five public
graders' own test files (grader_cases.json: their expected verdict, and llmeval's reason where
it differs). tests/test_verdict_ledger.py recomputes it; `make ledger` rewrites it and prints
what changed.

    make ledger    # .venv/bin/python -m tests.support.ledger [--workers N] [--ledger FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from llmeval.evaluate.policy_answers import read_answers
from llmeval.verify.pool import VerifyPool, default_workers
from llmeval.verify.queue import VerifyResult, VerifyTask
from llmeval.verify.verifier import verify
from tests.support import readme_rules

DATA = readme_rules.ROOT / "tests" / "data"
LEDGER = DATA / "verdict_ledger.jsonl"
GRADER_CASES = DATA / "grader_cases.json"
PUBLIC_GOLDS = DATA / "public_golds.json"
TIMEOUT_S = 20.0  # eval's default --timeout
# What test_verify_properties makes of a public gold: an output ending in it, boxed verbatim
BOXED = "<think>\nworking\n</think>\n\nSo the final answer is $\\boxed{{{}}}$."


@dataclass(frozen=True)
class Case:
    """One pair the ledger keeps: an extracted answer, or a model output whose answers are
    extracted as eval does (`output`); a grader's case carries its verdict and our reason."""

    source: str
    gold: str
    text: str
    output: bool = False
    kind: str = "math"
    expected: str | None = None
    config: str | None = None
    reason: str | None = None


def cases() -> list[Case]:
    """Every case, in a fixed order: the rule tables, the public golds, the graders' cases."""
    found = [
        Case(f"docs/verifier.md {table}: {rule}", gold, answer)
        for table, rule, gold, answer in readme_rules.rule_pairs(
            readme_rules.page_rules(readme_rules.RULES_PAGE.read_text())
        )
    ]
    semantics = readme_rules.semantic_rows()
    found += [Case(f"test_verdict_semantics: {row[4]}", row[0], row[1]) for row in semantics]
    for source in json.loads(PUBLIC_GOLDS.read_text())["sources"]:
        where = f"{source['repo']}@{source['commit'][:12]} {source['path']}: a gold"
        found += [Case(where, gold, BOXED.format(gold), output=True) for gold in source["golds"]]
    for source in json.loads(GRADER_CASES.read_text())["sources"]:
        where = f"{source['repo']}@{source['commit'][:12]} {source['path']}"
        for case in source["cases"]:
            found.append(
                Case(
                    f"{where}:{case['line']} {case['test']}",
                    case["gold"],
                    case["pred"],
                    output=source["reads"] == "output",
                    kind=case.get("kind", "math"),
                    expected="correct" if case["expected"] else "incorrect",
                    config=case.get("config"),
                    reason=case.get("ours"),
                )
            )
    return list(dict.fromkeys(found))


def _answers(case: Case) -> tuple[str | None, str | None]:
    """(strict answer, lenient answer) of a case: its text, or what eval reads in the output."""
    if not case.output:
        return case.text, case.text
    pred, lenient = read_answers(case.kind, (case.text, None, False), False, case.gold, None)
    return pred, (lenient if lenient is not None else pred)


def verdicts(pairs: set[tuple[str, str, str]], workers: int) -> dict[tuple, tuple]:
    """{(kind, gold, answer): (strict, lenient, detail)}: in this process, or in the verifier
    pool under eval's deadline when `workers` > 1."""
    if workers <= 1:
        out = {}
        for kind, gold, answer in sorted(pairs):
            strict, lenient, detail = verify(gold=gold, answer=answer, kind=kind)  # type: ignore[arg-type]
            out[(kind, gold, answer)] = (strict, lenient or strict, detail)
        return out
    tasks = {str(i): pair for i, pair in enumerate(sorted(pairs))}
    results: dict[tuple, tuple] = {}

    def keep(result: VerifyResult) -> None:
        status = result.status
        results[tasks[result.key]] = (status, result.lenient or status, result.detail)

    pool = VerifyPool(workers, TIMEOUT_S)
    pool.run((VerifyTask(key, *pair) for key, pair in tasks.items()), keep)
    return results


def compute(workers: int = 1) -> list[dict]:
    """The ledger's entries, recomputed."""
    found = cases()
    answers = {case: _answers(case) for case in found}
    pairs = {(c.kind, c.gold, a) for c, both in answers.items() for a in both if a is not None}
    decided = verdicts(pairs, workers)
    return [_entry(case, *answers[case], decided) for case in found]


def _entry(case: Case, pred: str | None, lenient: str | None, decided: dict) -> dict:
    strict_verdict = decided[(case.kind, case.gold, pred)] if pred is not None else None
    lenient_verdict = decided[(case.kind, case.gold, lenient)] if lenient is not None else None
    entry: dict = {"source": case.source, "gold": case.gold, "answer": pred}
    if lenient != pred:
        entry["lenient answer"] = lenient
    entry["strict"] = strict_verdict[0] if strict_verdict else "no_answer"
    entry["lenient"] = lenient_verdict[1] if lenient_verdict else "no_answer"
    detail = (strict_verdict or lenient_verdict or (None, None, None))[2]
    if detail:
        entry["detail"] = detail
    if case.kind != "math":
        entry["kind"] = case.kind
    if case.expected is not None:
        entry["expected"] = case.expected
        entry |= {"config": case.config} if case.config else {}
        entry |= {"reason": case.reason} if case.reason else {}
    return entry


def differs(entry: dict) -> bool:
    """Whether llmeval's verdict on a grader's case is not the grader's (under both policies:
    lenient exists to reproduce harnesses, strict to grade exactly)."""
    agree = (entry["strict"] == "correct") == (entry["expected"] == "correct")
    return not agree or (entry["lenient"] == "correct") != (entry["expected"] == "correct")


def lines(entries: list[dict]) -> list[str]:
    return [json.dumps(entry, ensure_ascii=False) for entry in entries]


def changes(old: list[str], new: list[str]) -> Iterator[str]:
    """What changed between two ledgers, entry by entry (by source and gold, then order)."""

    def keyed(rows: list[str]) -> dict[tuple, str]:
        out: dict[tuple, str] = {}
        seen: Counter[tuple] = Counter()
        for row in rows:
            entry = json.loads(row)
            key = (entry["source"], entry["gold"])
            out[(*key, seen[key])] = row
            seen[key] += 1
        return out

    before, after = keyed(old), keyed(new)
    for key in before.keys() - after.keys():
        yield f"- {before[key]}"
    for key in after.keys() - before.keys():
        yield f"+ {after[key]}"
    for key in before.keys() & after.keys():
        if before[key] != after[key]:
            yield f"- {before[key]}\n+ {after[key]}"


def main(argv: list[str] | None = None) -> int:
    """Recompute the ledger, rewrite it and print what changed (stderr) and its size."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=default_workers())
    parser.add_argument("--ledger", type=Path, default=LEDGER, help="the file to rewrite")
    args = parser.parse_args(argv)
    old = args.ledger.read_text().splitlines() if args.ledger.exists() else []
    new = lines(compute(args.workers))
    args.ledger.write_text("".join(line + "\n" for line in new))
    diff = sorted(changes(old, new))
    print("\n".join(diff) if diff else "no change", file=sys.stderr)
    print(f"{args.ledger.name}: {len(new)} entries, {len(diff)} changed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
