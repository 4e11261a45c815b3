"""The shipped package's size and shape against the targets of the "one record per sample"
issue (24): total lines, modules at the top level, the longest module and long functions; the
functions near the 60-line mark; and how far each command's options travel (issue 32.6).

    .venv/bin/python -m bench.bench_size
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import llmeval
from bench.harness import table

PACKAGE = Path(llmeval.__file__).parent
# Each command's options object, and with its parts (the sub-configs it holds or hands on).
OPTIONS = {
    "eval": ({"EvalOptions"}, {"EvalOptions", "RowKeys", "JudgeOptions"}),
    "infer": ({"InferOptions"}, {"InferOptions", "ClientConfig", "Sampling", "InputKeys"}),
}
# tests/test_layering.py's order of stages; what the command is told (cli/, */options.py) on top
_LAYER = {"": 0, "client": 1, "verify": 1, "judge": 2, "infer": 3, "evaluate": 3, "report": 4}


def _layer(rel: str) -> int:
    parts = rel.split("/")
    if parts[0] in ("cli", "inference") or parts[-1] == "options.py":
        return 5
    return _LAYER[parts[0] if len(parts) > 1 else ""]


def options_reach(types: set[str]) -> tuple[int, list[str]]:
    """(modules that define or import one of `types`, the imports of one from a module of a
    higher layer: a step down the stages that climbs back up to what the command was told).
    Imports made only for type checking count."""
    trees = {p.relative_to(PACKAGE).as_posix(): ast.parse(p.read_text()) for p in _modules()}
    reached, climbs = set(), []
    for rel, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name in types:
                reached.add(rel)
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("llmeval."):
                source = node.module.removeprefix("llmeval.").replace(".", "/")
                source = f"{source}.py" if f"{source}.py" in trees else f"{source}/__init__.py"
                for name in (a.name for a in node.names if a.name in types):
                    reached.add(rel)
                    if _layer(source) > _layer(rel):
                        climbs.append(f"{rel} <- {name}")
    return len(reached), climbs


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


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
    near = [
        [f"{p.relative_to(PACKAGE)}:{node.name}", length]
        for p in modules
        for node in ast.walk(ast.parse(p.read_text()))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and 45 <= (length := (node.end_lineno or 0) - node.lineno + 1) <= 60
    ]
    table("functions of 45-60 lines", ["function", "lines"], sorted(near, key=lambda r: -r[1]))
    reach = []
    for command, kinds in OPTIONS.items():
        for what, types in zip(("the options object", "with its parts"), kinds, strict=True):
            count, climbs = options_reach(types)
            reach.append([command, what, count, len(climbs), ", ".join(climbs)])
    table("options reach", ["command", "types", "modules", "climbs", "where"], reach)
    table("figures", ["figure", "target", "measured", "met"], figures)


if __name__ == "__main__":
    main()
