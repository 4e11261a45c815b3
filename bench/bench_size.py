"""The shipped package's size and shape against the targets of the "one record per sample"
issue (24): total lines, modules at the top level, the longest module and long functions.

    .venv/bin/python -m bench.bench_size
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import llmeval
from bench.harness import table

PACKAGE = Path(llmeval.__file__).parent


def main() -> None:
    modules = sorted(PACKAGE.rglob("*.py"))
    lines = {p: len(p.read_text().splitlines()) for p in modules}
    by_stage = Counter()
    for path, n in lines.items():
        parts = path.relative_to(PACKAGE).parts
        by_stage[parts[0] if len(parts) > 1 else "(top level)"] += n
    top = [
        p for p in modules if p.parent == PACKAGE and p.name not in ("__init__.py", "__main__.py")
    ]
    long = [
        f"{p.relative_to(PACKAGE)}:{node.name}"
        for p in modules
        for node in ast.walk(ast.parse(p.read_text()))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and (node.end_lineno or 0) - node.lineno + 1 > 60
    ]
    biggest = max(lines, key=lines.__getitem__)
    table("lines by stage", ["stage", "lines"], sorted(by_stage.items()))
    total = sum(lines.values())
    figures = [
        ["lines in the package", "<= 6000", total, "yes" if total <= 6000 else "NO"],
        ["modules at the top level", "<= 12", len(top), "yes" if len(top) <= 12 else "NO"],
        [f"longest module ({biggest.relative_to(PACKAGE)})", "<= 300", lines[biggest],
         "yes" if lines[biggest] <= 300 else "NO"],
        ["functions over 60 lines", "<= 2", len(long), "yes" if len(long) <= 2 else "NO"],
    ]  # fmt: skip
    table("figures", ["figure", "target", "measured", "met"], figures)


if __name__ == "__main__":
    main()
